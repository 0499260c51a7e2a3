"""Redaction: secrets replaced by typed markers before anything is stored or sent.

Redaction
---------
:func:`redact` (pure) replaces each secret it recognises by a typed marker,
``[redacted:<kind>]``; :class:`Redactor` applies it as configured (``RELAY_REDACT``) and counts
what it replaced, by kind:

``private``
    ``<private>...</private>`` (any case, across lines), tags included. An unterminated
    ``<private>`` hides everything after it, to the end of the string: whoever typed the tag
    meant what follows, and an OCR may have cut off the closing one.
``private-key``
    A PEM private key block, ``-----BEGIN [RSA |EC |OPENSSH |ENCRYPTED |...]PRIVATE
    KEY-----`` to its ``-----END ...-----``, or to the end of the string when the end line
    is missing (a screen that shows half a key). Certificates and public keys stay. An age
    secret key (``AGE-SECRET-KEY-1...``).
``api-key``
    ``sk-...`` (OpenAI, Anthropic, OpenRouter), ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``
    and ``github_pat_`` (GitHub), ``xoxb-``/``xoxp-``/``xoxa-``/... (Slack), and the keys
    other vendors issue behind a prefix of their own, each with the length and alphabet they
    give it: Stripe secret and restricted keys, live and test alike (``sk_live_``,
    ``rk_live_``, ``sk_test_``, ``rk_test_``: a test key reads and changes the account's test
    data), GitLab tokens (``glpat-``, ``gldt-``, ``glrt-``, ...), npm (``npm_``), Google API
    keys (``AIza``), Hugging Face (``hf_``), SendGrid (``SG.``), Twilio API keys (``SK`` and
    32 hex digits), Shopify (``shpat_``, ``shpss_``, ...), DigitalOcean (``dop_v1_``, ...),
    PyPI (``pypi-AgE...``), Databricks (``dapi``), Linear (``lin_api_``), Perplexity
    (``pplx-``), Sentry (``sntryu_``). The path of a Slack webhook
    (``https://hooks.slack.com/services/[redacted:api-key]``), and a Telegram bot's token
    after its id (``123456789:[redacted:api-key]``).
``aws-key``
    AWS access key ids: ``AKIA`` or ``ASIA`` and exactly 16 upper-case letters or digits.
``token``
    JWTs (``eyJ...`` ``.`` ``eyJ...`` ``.`` signature) and the credential after ``Bearer``.
``password``
    The value after ``password``, ``passwd`` or ``passphrase`` and ``=`` or ``:``
    (``password=x``, ``DB_PASSWORD: x``, ``"password": "x"``); the name stays. The password
    of a URL: ``https://user:[redacted:password]@host`` (up to the last ``@`` before the
    path: ``user:p@ss@host`` is read as browsers read it).
``card``
    13 to 19 digits, in groups split by single spaces or dashes, that start with 2 to 6 (the
    card networks' first digits) and pass the Luhn check.

What survives, on purpose: a word that merely contains a prefix (``task-list``,
``sk-learn-compatible``: a key must stand alone, be long enough and hold a digit), a name
that starts like a key (``hf_hub_download``, ``npm_config_cache``, ``sk_live`` with no key
after it: a vendor's key has its length and is not followed by ``_``), ``AKIA`` or
``AIzaSy`` with too few characters, Stripe's publishable keys (``pk_live_``: public by
design), Twilio's account ids (``AC...``: an id, not a secret), a URL without a password
(``https://user@host``, ``https://host:8443/path``, ``https://example.com/a:b@c``: that
``@`` is past the host), ``git@github.com:org/repo.git``, e-mail addresses
(``bob@example.com``, ``mailto:x@y.z``), a sentence that says "password", a code line that
names a password without giving one (``password: str``, ``password == other``,
``password = None``), numbers that fail Luhn, epoch milliseconds (they start with 1), dates,
phone numbers, UUIDs and git SHAs (digits glued to letters, dashes or dots are no card).
``pwd`` is not a password name: ``PWD=/home/me`` is the working directory in every ``env``
listing. Keys of JSON objects are kept as sent; only string values are redacted. Discord bot
tokens have no prefix of their own to be told by, and are not looked for.

A marker never matches again, so redacting redacted text changes nothing (idempotent).

Where: the one choke point
--------------------------
The buffers' ``append_many``: ``FeedBuffer`` for the messages clients post, ``SenseBuffer``
for screen events, on the buffer's own thread, before the item gets its id, its JSON and its
row. That is the only way client data enters the relay's state, and what is stored is all the
rest of the relay ever reads: ``GET /feed`` and ``/sense``, the streams, ``/agent/context``
and every prompt are built from the rings the buffers publish. So nothing unredacted is
stored, served or sent, whichever path posted it (the HTTP routes, the demo, tests, a future
ingest route); the event loop does not pay for it; and rows restored at a restart were
redacted when they were written, so ``restore`` does not redact again. The agent's own hud
line (``FeedBuffer.push_agent``) is the LLM's answer to a redacted prompt, not client data,
and is stored as it is.

Cost
----
It runs for every post, so the common case (no secret) is a few scans at memchr-like speed,
never a slow regular expression. Each rule has a cheap test that its pattern implies (a literal
it must contain, behind a one-character test where one exists: ``J`` for a JWT, ``<`` for
``<private>``, ``@`` for a URL's password); only the rules that pass run. A key stands in a
word of its own and holds 20 key characters (letters, digits, ``_``, ``-``) in a row or more,
which prose and most code do not: one projection of the text finds the words that do, and
the keys' literals are looked for in those words only, so two dozen kinds of key cost one
scan. Each pattern begins with a literal, so the regular-expression engine scans for that
literal; a pattern that began with a look-behind or a character class would be tried at
every position, 20 to 40 times slower. Case-insensitive names are searched in one
lower-cased copy; card numbers in a projection of the text on its digits (a Luhn-valid run
of 13 or more once spaces and dashes are dropped). The strings of a sense event, or of a
burst of feed messages, are joined and tested once. Figures: ``python -m bench.bench_privacy``.

Excluded apps and windows are dropped whole, at ingest: :mod:`actors.core.exclusion`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from actors.core import secret_patterns as patterns
from actors.core.cards import CARD_CANDIDATE, card_possible, redact_cards
from actors.core.records import JSONDict

KINDS = ("private", "private-key", "api-key", "aws-key", "token", "password", "card")
"""Every kind of redaction, in the order the rules apply."""

Counts = dict[str, int]


def marker(kind: str) -> str:
    """The text that replaces a secret of ``kind``: ``[redacted:<kind>]``."""
    return f"[redacted:{kind}]"


def _bytes(text: str) -> bytes:
    """``text`` with one byte per character, where the patterns search.

    Every pattern is ASCII, so a character beyond Latin-1 may stand as ``?`` (it is no letter,
    digit, space or separator to any pattern, as it was not before). Positions stay those of
    ``text``; for an ASCII or Latin-1 string this is a copy, and bytes scan faster than the
    two- or four-byte characters of other strings.
    """
    return text.encode("latin-1", "replace")


# -- rules ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Rule:
    """A pattern and the kind of secret it finds."""

    kind: str
    pattern: re.Pattern[bytes]
    folded: bool = False
    """Searched in the lower-cased bytes (a case-insensitive name)."""
    keep_head: bool = False
    """Keep what precedes the ``value`` group (``password=``, ``Bearer ``)."""

    def apply(self, text: str, raw: bytes) -> tuple[str, int]:
        """``text`` (whose :func:`_bytes` are ``raw``) with this rule's matches replaced, and
        how many were."""
        if self.kind == "card":
            return redact_cards(text, raw)
        parts: list[str] = []
        done = 0
        for match in self.pattern.finditer(raw.lower() if self.folded else raw):
            parts += (text[done : match.start("value" if self.keep_head else 0)], self.marker)
            done = match.end()
        if not parts:
            return text, 0
        parts.append(text[done:])
        return "".join(parts), len(parts) // 2

    @property
    def marker(self) -> str:
        """What replaces a match."""
        return marker(self.kind)


_R_PRIVATE = _Rule("private", patterns.PRIVATE, folded=True)
_R_PEM = _Rule("private-key", patterns.PEM)
_R_SK = _Rule("api-key", patterns.SK)
_R_GITHUB = _Rule("api-key", patterns.GITHUB)
_R_GITHUB_PAT = _Rule("api-key", patterns.GITHUB_PAT)
_R_SLACK = _Rule("api-key", patterns.SLACK)
_R_AWS = _Rule("aws-key", patterns.AWS)
_R_JWT = _Rule("token", patterns.JWT)
_R_BEARER = _Rule("token", patterns.BEARER, folded=True, keep_head=True)
_R_URL_PASSWORD = _Rule("password", patterns.URL_PASSWORD, keep_head=True)
_R_PASSWORD = _Rule("password", patterns.PASSWORD, folded=True, keep_head=True)
_R_CARD = _Rule("card", CARD_CANDIDATE)

_KEYS_BEFORE_SLACK = (
    (_R_SK, patterns.SK_LITERAL),
    (_R_GITHUB, patterns.GITHUB_LITERAL),
    (_R_GITHUB_PAT, patterns.compiled("github_pat_")),
)
_KEYS_AFTER_SLACK = (
    (_Rule("api-key", patterns.STRIPE), patterns.compiled("sk_(?:live|test|prod)_")),
    (
        _Rule("api-key", patterns.STRIPE_RESTRICTED),
        patterns.compiled("rk_(?:live|test|prod)_"),
    ),
    (
        _Rule("api-key", patterns.GITLAB),
        patterns.compiled("gl(?:pat|dt|rt|ptt|cbt|ft|imt|agent|oas|soat|ffct)-"),
    ),
    (_Rule("api-key", patterns.NPM), patterns.compiled("npm_")),
    (_Rule("api-key", patterns.GOOGLE), patterns.compiled("AIza")),
    (_Rule("api-key", patterns.HUGGING_FACE), patterns.compiled("hf_")),
    (
        _Rule("api-key", patterns.SLACK_WEBHOOK, keep_head=True),
        patterns.compiled(r"hooks\.slack\.com/"),
    ),
    (_Rule("api-key", patterns.SENDGRID), patterns.compiled(r"SG\.")),
    (_Rule("api-key", patterns.TWILIO), patterns.compiled("SK")),
    (_Rule("api-key", patterns.SHOPIFY), patterns.compiled("shp(?:at|ss|ca|pa)_")),
    (_Rule("api-key", patterns.DIGITALOCEAN), patterns.compiled("do[opr]_v1_")),
    (_Rule("api-key", patterns.PYPI), patterns.compiled("pypi-AgE")),
    (_Rule("api-key", patterns.DATABRICKS), patterns.compiled("dapi")),
    (_Rule("api-key", patterns.TELEGRAM, keep_head=True), patterns.compiled(":AA")),
    (_Rule("api-key", patterns.LINEAR), patterns.compiled("lin_api_")),
    (_Rule("api-key", patterns.PERPLEXITY), patterns.compiled("pplx-")),
    (_Rule("api-key", patterns.SENTRY), patterns.compiled("sntryu_")),
    (_Rule("private-key", patterns.AGE), patterns.compiled("AGE-SECRET-KEY-1")),
    (_R_AWS, patterns.AWS_LITERAL),
)
"""The rules of keys, which stand in a word of their own (see :func:`_key_words`), each with
the literal its pattern begins with or must hold (``:AA`` for Telegram), in the order they
apply: before and after the Slack rule, whose tokens may be shorter."""

_RULES = (
    _R_PRIVATE,
    _R_PEM,
    *(rule for rule, _ in _KEYS_BEFORE_SLACK),
    _R_SLACK,
    *(rule for rule, _ in _KEYS_AFTER_SLACK),
    _R_JWT,
    _R_BEARER,
    _R_URL_PASSWORD,
    _R_PASSWORD,
    _R_CARD,
)
"""In the order they apply: a secret inside ``<private>`` or a PEM block counts once, as
that, a key given as a password or a Bearer credential counts as a key, and a marker is never
matched again."""


# -- applying the rules ----------------------------------------------------------------------


def _key_words(raw: bytes) -> bytes:
    """The words of ``raw`` (split at whitespace) that hold a run of :data:`patterns.KEY_RUN` key
    characters (letters, digits, ``_``, ``-``) or more, joined by newlines; ``b""`` if none.

    Every key of :data:`_KEYS_BEFORE_SLACK` and :data:`_KEYS_AFTER_SLACK` holds such a run
    and no whitespace, so its literal is in these words. Prose and code seldom have one (an
    identifier of 20 characters, a UUID, a hash): one projection of the bytes and one search
    then stand for the literal scans of all those rules.
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
        words.append(raw[first:end])
        start = shape.find(patterns.KEY_RUN_SHAPE, end)
    return b"\n".join(words)


def _rules_for(raw: bytes) -> list[_Rule]:
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
    hits: list[_Rule] = []
    folded = raw.lower()
    if b"<" in raw and b"<private>" in folded:
        hits.append(_R_PRIVATE)
    if b"-----BEGIN" in raw:
        hits.append(_R_PEM)
    words = _key_words(raw)
    if words:
        hits += [rule for rule, literal in _KEYS_BEFORE_SLACK if literal.search(words)]
    if b"-" in raw and patterns.SLACK_LITERAL.search(raw):  # memchr: most prose has no dash
        hits.append(_R_SLACK)
    if words:
        hits += [rule for rule, literal in _KEYS_AFTER_SLACK if literal.search(words)]
    if b"J" in raw and patterns.JWT_LITERAL.search(raw):
        hits.append(_R_JWT)
    if b"bearer" in folded:
        hits.append(_R_BEARER)
    if b"@" in raw and patterns.URL_LITERAL.search(raw):
        hits.append(_R_URL_PASSWORD)
    if patterns.PASSWORD_LITERAL.search(folded):
        hits.append(_R_PASSWORD)
    if card_possible(raw):
        hits.append(_R_CARD)
    return hits


def _apply(text: str, rules: Sequence[_Rule], counts: Counts, raw: bytes | None = None) -> str:
    """Apply ``rules`` (those :func:`_rules_for` kept) in order, adding to ``counts``.

    Again until a round changes nothing: a marker can make an earlier rule match (``AKIA...``
    glued to a JWT stands alone once the JWT is a marker), and redacting the result must
    change nothing. Each match eats text that is no marker, so the rounds end.
    """
    raw = _bytes(text) if raw is None else raw
    changed, again = True, False
    while changed:
        changed = False
        for rule in rules:
            if again and rule is _R_CARD and not card_possible(raw):
                continue  # its cheap test first: it redacted what it found the first time
            redacted, n = rule.apply(text, raw)
            if n:
                counts[rule.kind] = counts.get(rule.kind, 0) + n
                text, raw, changed = redacted, _bytes(redacted), True
        again = True
    return text


def redact(text: str) -> tuple[str, Counts]:
    """``text`` with every secret replaced by its marker, and how many of each kind.

    Pure and idempotent. ``counts`` has the kinds found only; when it is empty, ``text``
    itself is returned.
    """
    counts: Counts = {}
    raw = _bytes(text)
    rules = _rules_for(raw)
    return (_apply(text, rules, counts, raw) if rules else text), counts


# -- JSON payloads ---------------------------------------------------------------------------

_IMAGES = ("roi", "diff")
"""Top-level objects whose ``data`` is base64 image data: not text, never redacted."""


def _collect(value: Any, add: Callable[[str], None]) -> None:
    """Add the strings in ``value``, a dict or a list, at any depth."""
    for item in value.values() if type(value) is dict else value:
        kind = type(item)
        if kind is str:
            add(item)
        elif kind is dict or kind is list:
            _collect(item, add)


def _payload_bytes(payload: JSONDict) -> bytes:
    """Every string of ``payload`` but the image data, joined by newlines (no pattern spans
    a newline and a string's edge alike, so a secret is found in the join as on its own)."""
    strings: list[str] = []
    add = strings.append
    for key, value in payload.items():
        kind = type(value)
        if kind is str:
            add(value)
        elif kind is dict and key in _IMAGES and "data" in value:
            _collect({k: v for k, v in value.items() if k != "data"}, add)
        elif kind is dict or kind is list:
            _collect(value, add)
    return b"\n".join([_bytes(string) for string in strings])


def _rebuild(value: Any, rules: Sequence[_Rule], counts: Counts) -> Any:
    if isinstance(value, str):
        return _apply(value, rules, counts)
    if isinstance(value, dict):
        return {k: _rebuild(v, rules, counts) for k, v in value.items()}
    if isinstance(value, list):
        return [_rebuild(v, rules, counts) for v in value]
    return value


def redact_payload(payload: JSONDict) -> tuple[JSONDict, Counts]:
    """A client's JSON object with every string value redacted (keys and image data kept).

    ``roi.data`` and ``diff.data`` (base64 images) are kept as they are. The object is never
    changed: when something is redacted, a new one is returned; otherwise ``payload`` itself.
    """
    rules = _rules_for(_payload_bytes(payload))
    if not rules:
        return payload, {}
    counts: Counts = {}
    out: JSONDict = {}
    for key, value in payload.items():
        if key in _IMAGES and isinstance(value, dict):
            out[key] = {
                k: v if k == "data" else _rebuild(v, rules, counts) for k, v in value.items()
            }
        else:
            out[key] = _rebuild(value, rules, counts)
    return (out if counts else payload), counts


# -- the configured redactor -----------------------------------------------------------------


class Redactor:
    """Redaction as configured (``RELAY_REDACT``), with its counts by kind since start.

    Shared by the buffers, which call it on their own threads, and read by metrics from any
    thread: the counts are kept under a lock (taken only when something was redacted).
    """

    def __init__(self, *, enabled: bool = True) -> None:
        self._enabled = enabled
        self._lock = threading.Lock()
        self._counts: Counts = dict.fromkeys(KINDS, 0)

    @property
    def enabled(self) -> bool:
        """False with ``RELAY_REDACT=off``: everything is kept as it came."""
        return self._enabled

    def counts(self) -> Counts:
        """Secrets replaced since start, by kind (every kind of :data:`KINDS`, zeros too)."""
        with self._lock:
            return dict(self._counts)

    def texts(self, texts: Sequence[str]) -> Sequence[str]:
        """Each of ``texts`` redacted; ``texts`` itself when nothing was (one test for all)."""
        if not self._enabled or not texts:
            return texts
        raws = [_bytes(text) for text in texts]
        rules = _rules_for(b"\n".join(raws) if len(raws) > 1 else raws[0])
        if not rules:
            return texts
        counts: Counts = {}
        redacted = [_apply(text, rules, counts, raw) for text, raw in zip(texts, raws, strict=True)]
        self._add(counts)
        return redacted if counts else texts

    def payload(self, payload: JSONDict) -> JSONDict:
        """:func:`redact_payload`, counted; ``payload`` itself when off or nothing was found."""
        if not self._enabled:
            return payload
        redacted, counts = redact_payload(payload)
        self._add(counts)
        return redacted

    def _add(self, counts: Counts) -> None:
        if counts:
            with self._lock:
                for kind, n in counts.items():
                    self._counts[kind] += n
