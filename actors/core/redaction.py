"""Privacy: secrets redacted before anything is stored or sent; excluded apps and windows dropped.

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
burst of feed messages, are joined and tested once. Figures: ``bench/bench_privacy.py``.

Exclusion
---------
:class:`ExclusionRule` (``RELAY_EXCLUDE_APPS``, ``RELAY_EXCLUDE_TITLES``) and its counter
:class:`Exclusions` drop whole screen events of excluded apps or windows. That is the
transport's decision: ``POST /sense`` answers ``{"ok": true, "dropped": "excluded"}`` before
anything reaches an actor, so such an event is never stored, served, streamed nor seen by a
tick.
"""

from __future__ import annotations

import re
import string
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

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


# -- patterns -------------------------------------------------------------------------------
# Each begins with a literal (see "Cost" above); a word boundary before a key is a look-behind
# placed after the literal. Those of case-insensitive names are written in lower case and
# searched in the text's bytes lower-cased (ASCII letters only, as re.ASCII | re.IGNORECASE
# would match them, but at the speed of a literal scan).

_KEY = "A-Za-z0-9_-"
"""Characters of base64url-like keys."""
_CRED = "A-Za-z0-9._~+/-"
"""Characters of an HTTP credential (RFC 9110 token68, less the trailing ``=``)."""
_PEM_LINE = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_NOT_A_VALUE = (
    r"(?:str|string|bytes|int|bool|none|null|nil|undefined|true|false|optional|secretstr)\b"
)
"""What follows ``password:`` in code when it is a type or an empty value, not a password."""


def _compile(pattern: str) -> re.Pattern[bytes]:
    return re.compile(pattern.encode(), re.DOTALL)


_PRIVATE = _compile(r"<private>.*?(?:</private>|\Z)")
_PEM = _compile(rf"-----BEGIN {_PEM_LINE}.*?(?:-----END {_PEM_LINE}|\Z)")
_SK = _compile(rf"sk-(?<![{_KEY}]sk-)(?=[A-Za-z_-]*[0-9])[{_KEY}]{{20,}}")
_GITHUB = _compile(r"gh[pousr]_(?<![A-Za-z0-9_]gh[pousr]_)[A-Za-z0-9]{30,}")
_GITHUB_PAT = _compile(r"github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{30,}")
_SLACK = _compile(r"xox[abprse]-(?<![A-Za-z0-9_-]xox[abprse]-)(?=[A-Za-z-]*[0-9])[A-Za-z0-9-]{10,}")
_AWS = _compile(r"A[KS]IA(?<![A-Za-z0-9]A[KS]IA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_JWT = _compile(rf"eyJ(?<![{_KEY}]eyJ)[{_KEY}]{{5,}}\.eyJ[{_KEY}]{{5,}}\.[{_KEY}]*")
_BEARER = _compile(
    rf"bearer(?<!\wbearer)[ \t]+(?!\[redacted:)"
    rf"(?P<value>(?:(?=[{_CRED}]*?[0-9])[{_CRED}]{{8,}}|[{_CRED}]{{20,}})=*)"
)
_PASSWORD = _compile(
    r"pass(?:word|wd|phrase)[\"']?[ \t]*[=:][ \t]*(?P<quote>[\"'])?(?!\[redacted:)"
    r"(?P<value>(?(quote)(?:(?!(?P=quote))[^\n])+"
    rf"|(?!{_NOT_A_VALUE})[^\s\"'`,;&=<>][^\s\"'`,;&<>]*))"
)
# Keys that vendors issue behind a prefix of their own, with the length and alphabet they give
# them (as gitleaks' and detect-secrets' rules have them); like ``sk-`` above, a key stands
# alone: no key character glued before its prefix, and none after its last character.
_STRIPE = _compile(r"sk_(?<![A-Za-z0-9_]sk_)(?:live|test|prod)_[A-Za-z0-9]{24,}(?![A-Za-z0-9_])")
_STRIPE_RESTRICTED = _compile(
    r"rk_(?<![A-Za-z0-9_]rk_)(?:live|test|prod)_[A-Za-z0-9]{24,}(?![A-Za-z0-9_])"
)
_GITLAB = _compile(
    rf"gl(?<![{_KEY}]gl)(?:pat|dt|rt|ptt|cbt|ft|imt|agent|oas|soat|ffct)-[{_KEY}]{{20,}}"
    rf"(?:\.[0-9a-z]{{9}}(?![{_KEY}]))?"
)
_NPM = _compile(r"npm_(?<![A-Za-z0-9_]npm_)[A-Za-z0-9]{36}(?![A-Za-z0-9_])")
_GOOGLE = _compile(rf"AIza(?<![{_KEY}]AIza)[{_KEY}]{{35}}(?![{_KEY}])")
_HUGGING_FACE = _compile(r"hf_(?<![A-Za-z0-9_]hf_)[A-Za-z0-9]{34,}(?![A-Za-z0-9_])")
_SLACK_WEBHOOK = _compile(
    r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<value>[A-Za-z0-9/]*[A-Za-z0-9]{24,})"
)
"""A Slack webhook's path, which is its credential: ``T.../B.../`` and a secret of 24 letters
or digits or more; the host stays."""
_SENDGRID = _compile(rf"SG\.(?<![.{_KEY}]SG\.)[{_KEY}]{{22}}\.[{_KEY}]{{43}}(?![{_KEY}])")
_TWILIO = _compile(r"SK(?<![A-Za-z0-9_]SK)[0-9a-fA-F]{32}(?![A-Za-z0-9_])")
_SHOPIFY = _compile(r"shp(?<![A-Za-z0-9_]shp)(?:at|ss|ca|pa)_[0-9a-fA-F]{32}(?![A-Za-z0-9_])")
_DIGITALOCEAN = _compile(r"do[opr]_v1_(?<![A-Za-z0-9_]do[opr]_v1_)[0-9a-f]{64}(?![A-Za-z0-9_])")
_PYPI = _compile(rf"pypi-AgE(?<![{_KEY}]pypi-AgE)[{_KEY}]{{50,}}")
_DATABRICKS = _compile(r"dapi(?<![A-Za-z0-9_]dapi)[0-9a-f]{32}(?:-[0-9])?(?![A-Za-z0-9_])")
_TELEGRAM = _compile(rf":(?<=[0-9]{{8}}:)(?P<value>AA[{_KEY}]{{32,33}})(?![{_KEY}])")
"""A Telegram bot's token, ``<bot id>:AA...``: what follows the colon (which Telegram begins
with ``AA``) is the secret; the id before it stays."""
_LINEAR = _compile(r"lin_api_(?<![A-Za-z0-9_]lin_api_)[A-Za-z0-9]{40}(?![A-Za-z0-9_])")
_PERPLEXITY = _compile(rf"pplx-(?<![{_KEY}]pplx-)[A-Za-z0-9]{{48}}(?![{_KEY}])")
_SENTRY = _compile(r"sntryu_(?<![A-Za-z0-9_]sntryu_)[0-9a-f]{64}(?![A-Za-z0-9_])")
_AGE = _compile(rf"AGE-SECRET-KEY-1(?<![{_KEY}]AGE-SECRET-KEY-1)[02-9AC-HJ-NP-Z]{{58}}(?![{_KEY}])")
_URL_USERINFO = "A-Za-z0-9._~%!$&()*+,;="
"""Characters of a URL's user name or password as written (RFC 3986, less ``'``, which is
more often a quote around the URL)."""
_URL_PASSWORD = _compile(
    rf"://[{_URL_USERINFO}-]*:(?P<value>[{_URL_USERINFO}:@-]*[{_URL_USERINFO}:-])(?=@)"
)
"""The password of ``scheme://user:password@host``, up to the last ``@`` before the path (the
way browsers read ``user:p@ss@host``); the scheme, the user and the host stay."""
_SK_LITERAL = _compile("sk-")
_GITHUB_LITERAL = _compile("gh[pousr]_")
_SLACK_LITERAL = _compile("xox[abprse]-")
_AWS_LITERAL = _compile("A[KS]IA")
_JWT_LITERAL = _compile("eyJ")
_PASSWORD_LITERAL = _compile("pass(?:w|phrase)")
_URL_LITERAL = _compile("://")
"""The literals the patterns begin with: a compiled literal scans faster than ``in`` for
three or four bytes."""
_KEY_BYTES = f"{string.ascii_letters}{string.digits}_-".encode()
_SHAPES = bytes(
    0x61 if b in _KEY_BYTES else 0x20 if b in b" \t\n\r\f\v" else 0x2E for b in range(256)
)
"""Turns key characters (ASCII letters, digits, ``_``, ``-``) into ``a``, whitespace (what
``\\s`` matches in bytes) into a space and any other byte into ``.``."""
_KEY_RUN = 20
"""The fewest key characters in a row that every key in a word of its own holds (an AWS key
id has exactly 20; the others more): see :func:`_key_words`."""
_KEY_RUN_SHAPE = b"a" * _KEY_RUN


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


_R_PRIVATE = _Rule("private", _PRIVATE, folded=True)
_R_PEM = _Rule("private-key", _PEM)
_R_SK = _Rule("api-key", _SK)
_R_GITHUB = _Rule("api-key", _GITHUB)
_R_GITHUB_PAT = _Rule("api-key", _GITHUB_PAT)
_R_SLACK = _Rule("api-key", _SLACK)
_R_AWS = _Rule("aws-key", _AWS)
_R_JWT = _Rule("token", _JWT)
_R_BEARER = _Rule("token", _BEARER, folded=True, keep_head=True)
_R_URL_PASSWORD = _Rule("password", _URL_PASSWORD, keep_head=True)
_R_PASSWORD = _Rule("password", _PASSWORD, folded=True, keep_head=True)
_R_CARD = _Rule("card", CARD_CANDIDATE)

_KEYS_BEFORE_SLACK = (
    (_R_SK, _SK_LITERAL),
    (_R_GITHUB, _GITHUB_LITERAL),
    (_R_GITHUB_PAT, _compile("github_pat_")),
)
_KEYS_AFTER_SLACK = (
    (_Rule("api-key", _STRIPE), _compile("sk_(?:live|test|prod)_")),
    (_Rule("api-key", _STRIPE_RESTRICTED), _compile("rk_(?:live|test|prod)_")),
    (_Rule("api-key", _GITLAB), _compile("gl(?:pat|dt|rt|ptt|cbt|ft|imt|agent|oas|soat|ffct)-")),
    (_Rule("api-key", _NPM), _compile("npm_")),
    (_Rule("api-key", _GOOGLE), _compile("AIza")),
    (_Rule("api-key", _HUGGING_FACE), _compile("hf_")),
    (_Rule("api-key", _SLACK_WEBHOOK, keep_head=True), _compile(r"hooks\.slack\.com/")),
    (_Rule("api-key", _SENDGRID), _compile(r"SG\.")),
    (_Rule("api-key", _TWILIO), _compile("SK")),
    (_Rule("api-key", _SHOPIFY), _compile("shp(?:at|ss|ca|pa)_")),
    (_Rule("api-key", _DIGITALOCEAN), _compile("do[opr]_v1_")),
    (_Rule("api-key", _PYPI), _compile("pypi-AgE")),
    (_Rule("api-key", _DATABRICKS), _compile("dapi")),
    (_Rule("api-key", _TELEGRAM, keep_head=True), _compile(":AA")),
    (_Rule("api-key", _LINEAR), _compile("lin_api_")),
    (_Rule("api-key", _PERPLEXITY), _compile("pplx-")),
    (_Rule("api-key", _SENTRY), _compile("sntryu_")),
    (_Rule("private-key", _AGE), _compile("AGE-SECRET-KEY-1")),
    (_R_AWS, _AWS_LITERAL),
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
    """The words of ``raw`` (split at whitespace) that hold a run of :data:`_KEY_RUN` key
    characters (letters, digits, ``_``, ``-``) or more, joined by newlines; ``b""`` if none.

    Every key of :data:`_KEYS_BEFORE_SLACK` and :data:`_KEYS_AFTER_SLACK` holds such a run
    and no whitespace, so its literal is in these words. Prose and code seldom have one (an
    identifier of 20 characters, a UUID, a hash): one projection of the bytes and one search
    then stand for the literal scans of all those rules.
    """
    shape = raw.translate(_SHAPES)
    start = shape.find(_KEY_RUN_SHAPE)
    if start == -1:
        return b""
    words: list[bytes] = []
    while start != -1:
        first = shape.rfind(b" ", 0, start) + 1
        end = shape.find(b" ", start + _KEY_RUN)
        end = len(shape) if end == -1 else end
        words.append(raw[first:end])
        start = shape.find(_KEY_RUN_SHAPE, end)
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
    if b"-" in raw and _SLACK_LITERAL.search(raw):  # memchr: most prose has no dash
        hits.append(_R_SLACK)
    if words:
        hits += [rule for rule, literal in _KEYS_AFTER_SLACK if literal.search(words)]
    if b"J" in raw and _JWT_LITERAL.search(raw):
        hits.append(_R_JWT)
    if b"bearer" in folded:
        hits.append(_R_BEARER)
    if b"@" in raw and _URL_LITERAL.search(raw):
        hits.append(_R_URL_PASSWORD)
    if _PASSWORD_LITERAL.search(folded):
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
