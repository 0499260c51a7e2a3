"""The rules of redaction, one row per secret (:data:`RULES`, in the order they apply): its
kind, its pattern, the cheap test that chooses it for a text, and what it finds in the words
of docs/privacy.md's table (a test holds the two equal). :mod:`.text` applies
them. Each pattern begins with a literal, which the regular-expression engine scans for at
memchr-like speed (a word boundary before a key is a look-behind after the literal); those of
case-insensitive names are written in lower case and searched in the lower-cased bytes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from actors.core.redaction.cards import CARD_CANDIDATE, card_possible, card_spans
from actors.core.redaction.patterns import (
    CRED,
    KEY,
    KEY_RUN,
    KEY_RUN_SHAPE,
    NOT_A_VALUE,
    PEM_LINE,
    SHAPES,
    URL_USERINFO,
    compiled,
)

if TYPE_CHECKING:
    from actors.core.redaction.text_view import Read

Cheap = Callable[[bytes, bytes], bool]
"""A rule's cheap test over a text's bytes and their lower-cased copy: False when its pattern
cannot match there."""


def marker(kind: str) -> str:
    """The text that replaces a secret of ``kind``: ``[redacted:<kind>]``."""
    return f"[redacted:{kind}]"


@dataclass(frozen=True, slots=True)
class Rule:
    """A pattern, the kind of secret it finds, and how a text is chosen for it."""

    kind: str
    pattern: re.Pattern[bytes]
    found: str
    """What it finds, as docs/privacy.md's table says it (empty: said with the row before)."""
    literal: re.Pattern[bytes] | None = None
    """The literal its pattern begins with (or must hold: ``:AA`` for Telegram)."""
    cheap: Cheap | None = None
    """Its own cheap test; without one, the rule is a key's, which stands in a word of its
    own: its literal is looked for in the words :func:`_key_words` finds."""
    joins: bool | None = None
    """Whether a key of it split at a line end or a space is joined (:mod:`.key_joins`);
    by default, a key's that stands in a word of its own."""
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

    @property
    def joinable(self) -> bool:
        """Whether a split inside one of its keys may be joined (see :attr:`joins`)."""
        return self.cheap is None if self.joins is None else self.joins


def _key(
    kind: str,
    found: str,
    literal: str,
    pattern: str,
    *,
    keep_head: bool = False,
    joins: bool | None = None,
) -> Rule:
    """The row of a key that stands in a word of its own, chosen by its ``literal``."""
    return Rule(kind, compiled(pattern), found, compiled(literal), joins=joins, keep_head=keep_head)


_SLACK_LITERAL = compiled("xox[abprse]-")
_JWT_LITERAL = compiled("eyJ")
_URL_LITERAL = compiled("://")
_PASSWORD_LITERAL = compiled("pass(?:w|phrase)")
"""Literals of the rules with a cheap test of their own: a compiled literal scans faster than
``in`` for three or four bytes."""
_ALONE = "(?![A-Za-z0-9_])"
"""No key character after a vendor's key: it ends where its length ends."""


def _private(raw: bytes, folded: bytes) -> bool:
    return b"<" in raw and b"<private>" in folded


def _pem(raw: bytes, _folded: bytes) -> bool:
    return b"-----BEGIN" in raw


def _slack(raw: bytes, _folded: bytes) -> bool:
    return b"-" in raw and _SLACK_LITERAL.search(raw) is not None  # memchr: most prose has no dash


def _jwt(raw: bytes, _folded: bytes) -> bool:
    return b"J" in raw and _JWT_LITERAL.search(raw) is not None


def _bearer(_raw: bytes, folded: bytes) -> bool:
    return b"bearer" in folded


def _url(raw: bytes, _folded: bytes) -> bool:
    return b"@" in raw and _URL_LITERAL.search(raw) is not None


def _password(_raw: bytes, folded: bytes) -> bool:
    return _PASSWORD_LITERAL.search(folded) is not None


def _card(raw: bytes, _folded: bytes) -> bool:
    return card_possible(raw)


R_CARD = Rule(
    "card",
    CARD_CANDIDATE,
    "13 to 19 digits starting with 2 to 6 and passing the Luhn check, in groups split by single "
    "spaces or dashes, or in a card's layout (4 digits, then groups of 4 to 6) split by dots or "
    "two or three spaces; a JSON number that is one becomes this marker (a string)",
    cheap=_card,
)

RULES = (
    Rule(
        "private",
        compiled(r"<private>.*?(?:</private>|\Z)"),
        "`<private>...</private>` (any case, across lines), tags included; an unterminated "
        "`<private>` hides the rest of the string",
        cheap=_private,
        folded=True,
    ),
    Rule(
        "private-key",
        compiled(rf"-----BEGIN {PEM_LINE}.*?(?:-----END {PEM_LINE}|\Z)"),
        "a PEM private key block, `-----BEGIN PRIVATE KEY-----` and its kin (`RSA`, `EC`, "
        "`OPENSSH`, `ENCRYPTED`, `PGP ... BLOCK`), to its end line, or to the end of the string "
        "when the end line is missing; certificates and public keys stay",
        cheap=_pem,
    ),
    _key(
        "api-key",
        "`sk-...` keys (OpenAI, Anthropic, OpenRouter)",
        "sk-",
        rf"sk-(?<![{KEY}]sk-)(?=[A-Za-z_-]*[0-9])[{KEY}]{{20,}}",
    ),
    _key(
        "api-key",
        "GitHub tokens (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`)",
        "gh[pousr]_",
        r"gh[pousr]_(?<![A-Za-z0-9_]gh[pousr]_)[A-Za-z0-9]{30,}",
    ),
    _key(
        "api-key",
        "",
        "github_pat_",
        r"github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{30,}",
    ),
    Rule(
        "api-key",
        compiled(r"xox[abprse]-(?<![A-Za-z0-9_-]xox[abprse]-)(?=[A-Za-z-]*[0-9])[A-Za-z0-9-]{10,}"),
        "Slack tokens (`xoxb-`, `xoxp-`, ...)",
        _SLACK_LITERAL,
        cheap=_slack,  # its tokens may be shorter than the words of keys
        joins=True,
    ),
    # Keys that vendors issue behind a prefix of their own, with the length and alphabet they
    # give them (as gitleaks' and detect-secrets' rules have them); like ``sk-`` above, a key
    # stands alone: no key character glued before its prefix, and none after its last one.
    _key(
        "api-key",
        "Stripe secret and restricted keys, live and test (`sk_live_`, `rk_live_`, `sk_test_`, "
        "`rk_test_`)",
        "sk_(?:live|test|prod)_",
        rf"sk_(?<![A-Za-z0-9_]sk_)(?:live|test|prod)_[A-Za-z0-9]{{24,}}{_ALONE}",
    ),
    _key(
        "api-key",
        "",
        "rk_(?:live|test|prod)_",
        rf"rk_(?<![A-Za-z0-9_]rk_)(?:live|test|prod)_[A-Za-z0-9]{{24,}}{_ALONE}",
    ),
    _key(
        "api-key",
        "GitLab tokens (`glpat-`, `gldt-`, `glrt-`, ...)",
        "gl(?:pat|dt|rt|ptt|cbt|ft|imt|agent|oas|soat|ffct)-",
        rf"gl(?<![{KEY}]gl)(?:pat|dt|rt|ptt|cbt|ft|imt|agent|oas|soat|ffct)-[{KEY}]{{20,}}"
        rf"(?:\.[0-9a-z]{{9}}(?![{KEY}]))?",
    ),
    _key("api-key", "npm (`npm_`)", "npm_", rf"npm_(?<![A-Za-z0-9_]npm_)[A-Za-z0-9]{{36}}{_ALONE}"),
    _key(
        "api-key",
        "Google API keys (`AIza`)",
        "AIza",
        rf"AIza(?<![{KEY}]AIza)[{KEY}]{{35}}(?![{KEY}])",
    ),
    _key(
        "api-key",
        "Hugging Face (`hf_`)",
        "hf_",
        rf"hf_(?<![A-Za-z0-9_]hf_)[A-Za-z0-9]{{34,}}{_ALONE}",
    ),
    # A Slack webhook's path is its credential: ``T.../B.../`` and a secret of 24 letters or
    # digits or more; the host stays.
    _key(
        "api-key",
        "the path of a Slack webhook (`https://hooks.slack.com/services/[redacted:api-key]`)",
        r"hooks\.slack\.com/",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<value>[A-Za-z0-9/]*[A-Za-z0-9]{24,})",
        keep_head=True,
        joins=False,
    ),
    _key(
        "api-key",
        "SendGrid (`SG.`)",
        r"SG\.",
        rf"SG\.(?<![.{KEY}]SG\.)[{KEY}]{{22}}\.[{KEY}]{{43}}(?![{KEY}])",
    ),
    _key(
        "api-key",
        "Twilio API keys (`SK` and 32 hex digits)",
        "SK",
        rf"SK(?<![A-Za-z0-9_]SK)[0-9a-fA-F]{{32}}{_ALONE}",
    ),
    _key(
        "api-key",
        "Shopify (`shpat_`, `shpss_`, ...)",
        "shp(?:at|ss|ca|pa)_",
        rf"shp(?<![A-Za-z0-9_]shp)(?:at|ss|ca|pa)_[0-9a-fA-F]{{32}}{_ALONE}",
    ),
    _key(
        "api-key",
        "DigitalOcean (`dop_v1_`, ...)",
        "do[opr]_v1_",
        rf"do[opr]_v1_(?<![A-Za-z0-9_]do[opr]_v1_)[0-9a-f]{{64}}{_ALONE}",
    ),
    _key(
        "api-key",
        "PyPI (`pypi-AgE...`)",
        "pypi-AgE",
        rf"pypi-AgE(?<![{KEY}]pypi-AgE)[{KEY}]{{50,}}",
    ),
    _key(
        "api-key",
        "Databricks (`dapi`)",
        "dapi",
        rf"dapi(?<![A-Za-z0-9_]dapi)[0-9a-f]{{32}}(?:-[0-9])?{_ALONE}",
    ),
    # A Telegram bot's token, ``<bot id>:AA...``: what follows the colon (which Telegram begins
    # with ``AA``) is the secret; the id before it stays.
    _key(
        "api-key",
        "a Telegram bot's token after its id (`123456789:[redacted:api-key]`)",
        ":AA",
        rf":(?<=[0-9]{{8}}:)(?P<value>AA[{KEY}]{{32,33}})(?![{KEY}])",
        keep_head=True,
        joins=False,
    ),
    _key(
        "api-key",
        "Linear (`lin_api_`)",
        "lin_api_",
        rf"lin_api_(?<![A-Za-z0-9_]lin_api_)[A-Za-z0-9]{{40}}{_ALONE}",
    ),
    _key(
        "api-key",
        "Perplexity (`pplx-`)",
        "pplx-",
        rf"pplx-(?<![{KEY}]pplx-)[A-Za-z0-9]{{48}}(?![{KEY}])",
    ),
    _key(
        "api-key",
        "Sentry (`sntryu_`)",
        "sntryu_",
        rf"sntryu_(?<![A-Za-z0-9_]sntryu_)[0-9a-f]{{64}}{_ALONE}",
    ),
    _key(
        "private-key",
        "an age secret key (`AGE-SECRET-KEY-1...`)",
        "AGE-SECRET-KEY-1",
        rf"AGE-SECRET-KEY-1(?<![{KEY}]AGE-SECRET-KEY-1)[02-9AC-HJ-NP-Z]{{58}}(?![{KEY}])",
    ),
    _key(
        "aws-key",
        "AWS access key ids (`AKIA`/`ASIA` and 16 upper-case letters or digits)",
        "A[KS]IA",
        r"A[KS]IA(?<![A-Za-z0-9]A[KS]IA)[A-Z0-9]{16}(?![A-Za-z0-9])",
    ),
    Rule(
        "token",
        compiled(rf"eyJ(?<![{KEY}]eyJ)[{KEY}]{{5,}}\.eyJ[{KEY}]{{5,}}\.[{KEY}]*"),
        "JWTs",
        cheap=_jwt,
    ),
    Rule(
        "token",
        compiled(
            rf"bearer(?<!\wbearer)[ \t]+(?!\[redacted:)"
            rf"(?P<value>(?:(?=[{CRED}]*?[0-9])[{CRED}]{{8,}}|[{CRED}]{{20,}})=*)"
        ),
        "the credential after `Bearer` (`Authorization: Bearer [redacted:token]`)",
        cheap=_bearer,
        folded=True,
        keep_head=True,
    ),
    # The password of ``scheme://user:password@host``, up to the last ``@`` before the path
    # (the way browsers read ``user:p@ss@host``); the scheme, the user and the host stay.
    Rule(
        "password",
        compiled(rf"://[{URL_USERINFO}-]*:(?P<value>[{URL_USERINFO}:@-]*[{URL_USERINFO}:-])(?=@)"),
        "a URL's password (`https://user:[redacted:password]@host`: scheme, user and host stay)",
        cheap=_url,
        keep_head=True,
    ),
    Rule(
        "password",
        compiled(
            r"pass(?:word|wd|phrase)[\"']?[ \t]*[=:][ \t]*(?P<quote>[\"'])?(?!\[redacted:)"
            r"(?P<value>(?(quote)(?:(?!(?P=quote))[^\n])+"
            rf"|(?!{NOT_A_VALUE})[^\s\"'`,;&=<>][^\s\"'`,;&<>]*))"
        ),
        "the value after `password`, `passwd` or `passphrase` and `=` or `:` (`password=`, "
        '`DB_PASSWORD: `, `"password": "..."`); the name stays',
        cheap=_password,
        folded=True,
        keep_head=True,
    ),
    R_CARD,
)
"""Every secret redaction looks for, in the order the rules apply: a secret inside
``<private>`` or a PEM block counts once, as that, a key given as a password or a Bearer
credential counts as a key, and a marker is never matched again. The keys with no cheap test
of their own stand in a word of their own (see :func:`_key_words`); Slack's tokens may be
shorter, and have a test of their own."""

KINDS = tuple(dict.fromkeys(rule.kind for rule in RULES))
"""Every kind of redaction, in the order the rules apply."""

_Keys = tuple[tuple[Rule, re.Pattern[bytes]], ...]


def _steps(rules: tuple[Rule, ...]) -> tuple[Rule | _Keys, ...]:
    """``rules`` as :func:`rules_for` takes them: a rule with a cheap test alone, the keys
    between two such rules together, each with its literal."""
    steps: list[Rule | _Keys] = []
    for rule in rules:
        if rule.cheap is not None:
            steps.append(rule)
            continue
        assert rule.literal is not None, rule  # a key is chosen by its literal
        last = steps[-1] if steps else None
        if isinstance(last, tuple):
            steps[-1] = (*last, (rule, rule.literal))
        else:
            steps.append(((rule, rule.literal),))
    return tuple(steps)


_STEPS = _steps(RULES)


# -- applying the rules ----------------------------------------------------------------------


def _key_words(raw: bytes) -> bytes:
    """The words of ``raw`` (split at whitespace) that hold a run of :data:`KEY_RUN` key
    characters (letters, digits, ``_``, ``-``) or more, joined by newlines; ``b""`` if none.

    Every key of a row without a cheap test of its own holds such a run and no whitespace, so
    its literal is in these words. Prose and code seldom have one (an
    identifier of 20 characters, a UUID, a hash): one projection of the bytes and one search
    then stand for the literal scans of all those rules.

    A key split where :func:`~.key_joins.joins` joins it is found too: line ends
    and tabs count as key characters here (the lines of a wrapped key make one run; two short
    words at a line end seldom make 20 characters), and a word split from such a run by one
    space comes with it.
    """
    shape = raw.translate(SHAPES)
    start = shape.find(KEY_RUN_SHAPE)
    if start == -1:
        return b""
    words: list[bytes] = []
    while start != -1:
        first = shape.rfind(b" ", 0, start) + 1
        end = shape.find(b" ", start + KEY_RUN)
        end = len(shape) if end == -1 else end
        if first >= 2 and shape[first - 2 : first] == b"a ":
            first = shape.rfind(b" ", 0, first - 1) + 1
        if shape[end : end + 2] == b" a":
            end = shape.find(b" ", end + 1)
            end = len(shape) if end == -1 else end
        words.append(raw[first:end])
        start = shape.find(KEY_RUN_SHAPE, end)
    return b"\n".join(words)


def rules_for(raw: bytes) -> list[Rule]:
    """The rules that may match in ``raw``, in order: those whose cheap test passes, and the
    keys whose literal ``raw``'s key words hold.

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
    words = _key_words(raw)
    for step in _STEPS:
        if isinstance(step, Rule):
            if step.cheap is not None and step.cheap(raw, folded):
                hits.append(step)
        elif words:
            hits += [rule for rule, literal in step if literal.search(words)]
    return hits
