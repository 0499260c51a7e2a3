"""The rules of redaction: each secret's pattern and the kind it is redacted as, the order
the rules apply in, and the cheap tests that choose the rules that may match a text.

How the rules are applied, and what they find and leave: :mod:`actors.core.redaction`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from actors.core import secret_patterns as patterns
from actors.core.cards import CARD_CANDIDATE, card_possible, card_spans

if TYPE_CHECKING:
    from actors.core.text_view import Read

KINDS = ("private", "private-key", "api-key", "aws-key", "token", "password", "card")
"""Every kind of redaction, in the order the rules apply."""


def marker(kind: str) -> str:
    """The text that replaces a secret of ``kind``: ``[redacted:<kind>]``."""
    return f"[redacted:{kind}]"


@dataclass(frozen=True, slots=True)
class Rule:
    """A pattern and the kind of secret it finds."""

    kind: str
    pattern: re.Pattern[bytes]
    folded: bool = False
    """Searched in the lower-cased bytes (a case-insensitive name)."""
    keep_head: bool = False
    """Keep what precedes the ``value`` group (``password=``, ``Bearer ``)."""

    def spans(self, raw: bytes) -> list[tuple[int, int]]:
        """Where in ``raw`` this rule's matches are, in order (the value only, with
        ``keep_head``)."""
        if self.kind == "card":
            return card_spans(raw)
        group = "value" if self.keep_head else 0
        matches = self.pattern.finditer(raw.lower() if self.folded else raw)
        return [match.span(group) for match in matches]

    def apply(self, read: Read) -> tuple[str, int]:
        """``read``'s text with this rule's matches replaced, and how many were."""
        spans = self.spans(read.raw)
        return (read.replace(spans, self.marker), len(spans)) if spans else (read.text, 0)

    @property
    def marker(self) -> str:
        """What replaces a match."""
        return marker(self.kind)


_R_PRIVATE = Rule("private", patterns.PRIVATE, folded=True)
_R_PEM = Rule("private-key", patterns.PEM)
_R_SK = Rule("api-key", patterns.SK)
_R_GITHUB = Rule("api-key", patterns.GITHUB)
_R_GITHUB_PAT = Rule("api-key", patterns.GITHUB_PAT)
R_SLACK = Rule("api-key", patterns.SLACK)
_R_AWS = Rule("aws-key", patterns.AWS)
_R_JWT = Rule("token", patterns.JWT)
_R_BEARER = Rule("token", patterns.BEARER, folded=True, keep_head=True)
_R_URL_PASSWORD = Rule("password", patterns.URL_PASSWORD, keep_head=True)
_R_PASSWORD = Rule("password", patterns.PASSWORD, folded=True, keep_head=True)
R_CARD = Rule("card", CARD_CANDIDATE)

KEYS_BEFORE_SLACK = (
    (_R_SK, patterns.SK_LITERAL),
    (_R_GITHUB, patterns.GITHUB_LITERAL),
    (_R_GITHUB_PAT, patterns.compiled("github_pat_")),
)
KEYS_AFTER_SLACK = (
    (Rule("api-key", patterns.STRIPE), patterns.compiled("sk_(?:live|test|prod)_")),
    (
        Rule("api-key", patterns.STRIPE_RESTRICTED),
        patterns.compiled("rk_(?:live|test|prod)_"),
    ),
    (
        Rule("api-key", patterns.GITLAB),
        patterns.compiled("gl(?:pat|dt|rt|ptt|cbt|ft|imt|agent|oas|soat|ffct)-"),
    ),
    (Rule("api-key", patterns.NPM), patterns.compiled("npm_")),
    (Rule("api-key", patterns.GOOGLE), patterns.compiled("AIza")),
    (Rule("api-key", patterns.HUGGING_FACE), patterns.compiled("hf_")),
    (
        Rule("api-key", patterns.SLACK_WEBHOOK, keep_head=True),
        patterns.compiled(r"hooks\.slack\.com/"),
    ),
    (Rule("api-key", patterns.SENDGRID), patterns.compiled(r"SG\.")),
    (Rule("api-key", patterns.TWILIO), patterns.compiled("SK")),
    (Rule("api-key", patterns.SHOPIFY), patterns.compiled("shp(?:at|ss|ca|pa)_")),
    (Rule("api-key", patterns.DIGITALOCEAN), patterns.compiled("do[opr]_v1_")),
    (Rule("api-key", patterns.PYPI), patterns.compiled("pypi-AgE")),
    (Rule("api-key", patterns.DATABRICKS), patterns.compiled("dapi")),
    (Rule("api-key", patterns.TELEGRAM, keep_head=True), patterns.compiled(":AA")),
    (Rule("api-key", patterns.LINEAR), patterns.compiled("lin_api_")),
    (Rule("api-key", patterns.PERPLEXITY), patterns.compiled("pplx-")),
    (Rule("api-key", patterns.SENTRY), patterns.compiled("sntryu_")),
    (Rule("private-key", patterns.AGE), patterns.compiled("AGE-SECRET-KEY-1")),
    (_R_AWS, patterns.AWS_LITERAL),
)
"""The rules of keys, which stand in a word of their own (see :func:`_key_words`), each with
the literal its pattern begins with or must hold (``:AA`` for Telegram), in the order they
apply: before and after the Slack rule, whose tokens may be shorter."""

_RULES = (
    _R_PRIVATE,
    _R_PEM,
    *(rule for rule, _ in KEYS_BEFORE_SLACK),
    R_SLACK,
    *(rule for rule, _ in KEYS_AFTER_SLACK),
    _R_JWT,
    _R_BEARER,
    _R_URL_PASSWORD,
    _R_PASSWORD,
    R_CARD,
)
"""In the order they apply: a secret inside ``<private>`` or a PEM block counts once, as
that, a key given as a password or a Bearer credential counts as a key, and a marker is never
matched again."""


# -- applying the rules ----------------------------------------------------------------------


def _key_words(raw: bytes) -> bytes:
    """The words of ``raw`` (split at whitespace) that hold a run of :data:`patterns.KEY_RUN` key
    characters (letters, digits, ``_``, ``-``) or more, joined by newlines; ``b""`` if none.

    Every key of :data:`KEYS_BEFORE_SLACK` and :data:`KEYS_AFTER_SLACK` holds such a run
    and no whitespace, so its literal is in these words. Prose and code seldom have one (an
    identifier of 20 characters, a UUID, a hash): one projection of the bytes and one search
    then stand for the literal scans of all those rules.

    A key split where :func:`~actors.core.key_joins.joins` joins it is found too: line ends
    and tabs count as key characters here (the lines of a wrapped key make one run; two short
    words at a line end seldom make 20 characters), and a word split from such a run by one
    space comes with it.
    """
    shape = raw.translate(patterns.SHAPES)
    start = shape.find(patterns.KEY_RUN_SHAPE)
    if start == -1:
        return b""
    words: list[bytes] = []
    while start != -1:
        first = shape.rfind(b" ", 0, start) + 1
        end = shape.find(b" ", start + patterns.KEY_RUN)
        end = len(shape) if end == -1 else end
        if first >= 2 and shape[first - 2 : first] == b"a ":
            first = shape.rfind(b" ", 0, first - 1) + 1
        if shape[end : end + 2] == b" a":
            end = shape.find(b" ", end + 1)
            end = len(shape) if end == -1 else end
        words.append(raw[first:end])
        start = shape.find(patterns.KEY_RUN_SHAPE, end)
    return b"\n".join(words)


def rules_for(raw: bytes) -> list[Rule]:
    """The rules that may match in ``raw``, in order: those whose literal ``raw`` holds.

    Each pattern begins with its literal, so a rule left out could not have matched; a rule
    kept may still find nothing. The literals of the keys are looked for in the words that
    hold a long run of key characters only (:func:`_key_words`), and the URL password's
    behind an ``@``. The tests look at no context (no look-behind), and no marker holds the
    literal of another rule, a whitespace, an ``@`` or a run of key characters (a marker is
    bracketed), so what markers change around them (``-----sk-...`` is a key once the PEM
    block before it is a marker) cannot make a rule left out match: the rules are chosen
    once, not again after each change.
    """
    hits: list[Rule] = []
    folded = raw.lower()
    if b"<" in raw and b"<private>" in folded:
        hits.append(_R_PRIVATE)
    if b"-----BEGIN" in raw:
        hits.append(_R_PEM)
    words = _key_words(raw)
    if words:
        hits += [rule for rule, literal in KEYS_BEFORE_SLACK if literal.search(words)]
    if b"-" in raw and patterns.SLACK_LITERAL.search(raw):  # memchr: most prose has no dash
        hits.append(R_SLACK)
    if words:
        hits += [rule for rule, literal in KEYS_AFTER_SLACK if literal.search(words)]
    if b"J" in raw and patterns.JWT_LITERAL.search(raw):
        hits.append(_R_JWT)
    if b"bearer" in folded:
        hits.append(_R_BEARER)
    if b"@" in raw and patterns.URL_LITERAL.search(raw):
        hits.append(_R_URL_PASSWORD)
    if patterns.PASSWORD_LITERAL.search(folded):
        hits.append(_R_PASSWORD)
    if card_possible(raw):
        hits.append(R_CARD)
    return hits
