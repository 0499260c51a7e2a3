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
    13 to 19 digits that start with 2 to 6 (the card networks' first digits) and pass the
    Luhn check, in groups split by single spaces or dashes, or in a card's layout (four
    digits, then groups of four to six) split by dots or two or three spaces. A JSON number
    that is one becomes the marker (a string).

What the patterns read
----------------------
Each text is matched in its normalised view (:mod:`actors.core.text_view`): invisible
characters removed (``pass\u200bword=``, a soft hyphen in ``AKIA...``), compatibility forms
read as NFKC has them (full-width ``sk-`` and ``:``), Cyrillic and Greek look-alike letters
folded in a word that holds an ASCII letter or digit beside one, a no-break space read as a
tab. A match is replaced in the original text over exactly the characters it was made of,
the invisible ones inside it included.

A key split at a line end (where OCR and editors wrap a long key), by a tab or a no-break
space, or by one space, is joined when the two runs of key characters make the key together
(:func:`_joins`): the first begins with a key's literal, the key's pattern matches both to the
end of the second (its alphabet, its length), and the pieces read as pieces of a random key
(letters and digits alternating, or a digit and a lower-case letter before an upper-case one,
or hex). After a space, which prose puts between words, both must, and the first must be no
key on its own; and only a run of 20 key characters on one side or the other is looked at
(:func:`_key_words`): a key split by a space into two short halves (``AKIAIOSFOD
NN7EXAMPLE``) reads as two words and stays. The line after a whole key stays unless it reads
as the rest of it; a word after a whole key and a space always stays.

Object keys of a JSON payload are text too: a key that holds a secret is redacted, and a key
that then equals one already there gets ``#2`` (``#3``...) after it, so both values stay.

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
phone numbers, UUIDs and git SHAs (digits glued to letters, dashes or dots are no card),
dotted numbers in other layouts than a card's (IP addresses, OIDs, versions), ``ts`` and
``meta.ssim`` of a sense event (numbers it must keep). ``pwd`` is not a password name:
``PWD=/home/me`` is the working directory in every ``env`` listing. Prose in Cyrillic or
Greek is not folded; a word split from a key-like one (``sk-learn estimators``) is not
joined. Discord bot tokens have no prefix of their own to be told by, and are not looked for.

What cannot be redacted: image data (``roi.data``, ``diff.data``: base64 images, kept as
sent; whatever a screenshot shows is not read), a secret with no shape to be told by (a
password typed without its name), and a key split into halves both shorter than 20
characters by a plain space, or cut by a line end where a half does not read as a piece of a
key.

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
burst of feed messages, are joined and tested once. An ASCII text is its own normalised view
(``str.isascii``, at memory speed); another is rebuilt only when it holds a character the
view changes (one class search), and folded only where a character beyond Latin-1 stands
beside a key character (one projection). Joining splits costs nothing until a key's literal
is found: line ends and tabs count as key characters in the projection of key words, so the
lines of a wrapped key make one run there. Figures: ``python -m bench.bench_privacy``.

Excluded apps and windows are dropped whole, at ingest: :mod:`actors.core.exclusion`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from actors.core import secret_patterns as patterns
from actors.core.cards import CARD_CANDIDATE, card_possible, card_spans
from actors.core.records import JSONDict
from actors.core.text_view import Pieces, view_of

KINDS = ("private", "private-key", "api-key", "aws-key", "token", "password", "card")
"""Every kind of redaction, in the order the rules apply."""

Counts = dict[str, int]


def marker(kind: str) -> str:
    """The text that replaces a secret of ``kind``: ``[redacted:<kind>]``."""
    return f"[redacted:{kind}]"


@dataclass(frozen=True, slots=True)
class _Read:
    """A text as the patterns read it: the bytes of its view (:mod:`actors.core.text_view`),
    with the splits of keys joined (:func:`_joins`), and the way back to the text."""

    text: str
    raw: bytes
    origin: tuple[Pieces, ...]
    """From ``raw`` back to ``text``, the last piecewise map first (none: one to one)."""

    def replace(self, spans: Sequence[tuple[int, int]], marker: str) -> str:
        """``text`` with the characters that made each of ``spans`` (of ``raw``, in order)
        replaced by ``marker``."""
        parts: list[str] = []
        done = 0
        for start, end in spans:
            first, last = start, end - 1
            for pieces in self.origin:
                first, last = pieces.at(first), pieces.at(last)
            parts += (self.text[done : max(first, done)], marker)
            done = last + 1
        parts.append(self.text[done:])
        return "".join(parts)


def _normalised(text: str) -> bytes:
    """The bytes of ``text``'s view."""
    return text.encode("ascii") if text.isascii() else view_of(text).raw


def _read(text: str, rules: Sequence[_Rule] = ()) -> _Read:
    """``text`` as the patterns read it, with the splits of the keys of ``rules`` joined."""
    view = view_of(text)
    raw = view.raw
    origin = () if view.origin is None else (view.origin,)
    gaps = _joins(raw, rules) if rules else []
    if gaps:
        joined = Pieces()
        kept, done = [], 0
        for start, end in gaps:
            kept.append(raw[done:start])
            done = end
            joined.add(start - _removed(gaps, start), end)
        kept.append(raw[done:])
        raw, origin = b"".join(kept), (joined, *origin)
    return _Read(text, raw, origin)


def _removed(gaps: list[tuple[int, int]], before: int) -> int:
    """How many bytes the gaps that end at or before ``before`` take."""
    return sum(end - start for start, end in gaps if end <= before)


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

    def spans(self, raw: bytes) -> list[tuple[int, int]]:
        """Where in ``raw`` this rule's matches are, in order (the value only, with
        ``keep_head``)."""
        if self.kind == "card":
            return card_spans(raw)
        group = "value" if self.keep_head else 0
        matches = self.pattern.finditer(raw.lower() if self.folded else raw)
        return [match.span(group) for match in matches]

    def apply(self, read: _Read) -> tuple[str, int]:
        """``read``'s text with this rule's matches replaced, and how many were."""
        spans = self.spans(read.raw)
        return (read.replace(spans, self.marker), len(spans)) if spans else (read.text, 0)

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

    A key split where :func:`_joins` joins it is found too: line ends and tabs count as key
    characters here (the lines of a wrapped key make one run; two short words at a line end
    seldom make 20 characters), and a word split from such a run by one space comes with it.
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


_JOINABLE = tuple(
    (rule, literal)
    for rule, literal in (
        *_KEYS_BEFORE_SLACK,
        (_R_SLACK, patterns.SLACK_LITERAL),
        *_KEYS_AFTER_SLACK,
    )
    if rule.pattern not in (patterns.SLACK_WEBHOOK, patterns.TELEGRAM)
)
"""The keys a split may have cut, each with the literal it begins with: every kind that
stands in a word of its own (not a Slack webhook's path nor a Telegram token, which follow
text of their own)."""
_JOIN_LITERALS = {id(rule): literal for rule, literal in _JOINABLE}
_ALTERNATION = re.compile(rb"(?=[A-Za-z][0-9]|[0-9][A-Za-z])")
_HUMP = re.compile(rb"[a-z][A-Z]")
_HEX = re.compile(rb"[0-9a-f]{8,}")


def _key_shaped(part: bytes) -> bool:
    """Whether ``part`` of a word reads as a piece of a random key, not of a word or a name:
    letters and digits alternate twice or more, or it holds a digit and a lower-case letter
    before an upper-case one, or it is 8 hex digits or more, letters and digits both."""
    if len(_ALTERNATION.findall(part)) >= 2:
        return True
    digit = any(0x30 <= byte <= 0x39 for byte in part)
    if digit and _HUMP.search(part) is not None:
        return True
    return digit and _HEX.fullmatch(part) is not None and not part.isdigit()


def _joins(raw: bytes, rules: Sequence[_Rule]) -> list[tuple[int, int]]:
    """The splits inside keys of ``rules`` in ``raw``: the whitespace to drop, in order.

    A split is a line end, a tab (a no-break or other Unicode space, in the view) or one
    space between two runs of key characters, the first of which begins with the literal of
    a key (:data:`_JOINABLE`). It is joined when the key's pattern matches the two runs
    together, to the end of the second (the second continues the key's alphabet, and the
    whole has the key's length), and:

    - after a line end or a tab: the first run is no key on its own and one of the two reads
      as a piece of a key (:func:`_key_shaped`); or the first run is a key already and the
      second reads as a piece of a key (a long key wrapped over lines, joined line by line);
    - after a space, which prose puts between words: the first run is no key on its own,
      both read as pieces of a key, and one holds :data:`patterns.KEY_RUN` characters (the
      words :func:`_key_words` looks at).

    So a word after a whole key stays (``sk-... token2``, ``sk-...\\nNext``), and so does a
    word after a prefix that is no key (``sk-learn estimators``).
    """
    gaps: set[tuple[int, int]] = set()
    for rule in rules:
        literal = _JOIN_LITERALS.get(id(rule))
        if literal is None:
            continue
        for found in literal.finditer(raw):
            start = found.start()
            if start and raw[start - 1] in patterns.KEY_BYTES:
                continue  # not the beginning of a word
            run = patterns.RUN.match(raw, found.end())
            end = run.end() if run is not None else found.end()
            word = raw[start:end]
            while (split := patterns.SPLIT.match(raw, end)) is not None:
                nxt = patterns.RUN.match(raw, split.end())
                if nxt is None or nxt.end() == split.end():
                    break
                line = split.group() != b" "
                if not _joined(rule, word, found.end() - start, nxt.group(), line=line):
                    break
                gaps.add(split.span())
                word += nxt.group()
                end = nxt.end()
    return sorted(gaps)


def _joined(rule: _Rule, first: bytes, prefix: int, second: bytes, *, line: bool) -> bool:
    """Whether ``first`` (a run that begins with the ``prefix`` characters of ``rule``'s
    literal) and ``second``, split by a line end or tab (``line``) or a space, are one key."""
    whole = rule.pattern.match(first + second)
    if whole is None or whole.end() != len(first) + len(second):
        return False
    alone = rule.pattern.match(first)
    if alone is not None and alone.end() == len(first):
        return line and _key_shaped(second)
    body = first[prefix:]
    if line:
        return _key_shaped(body) or _key_shaped(second)
    long_enough = max(len(first), len(second)) >= patterns.KEY_RUN  # as _key_words looks
    return long_enough and _key_shaped(body) and _key_shaped(second)


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


def _apply(text: str, rules: Sequence[_Rule], counts: Counts, read: _Read | None = None) -> str:
    """Apply ``rules`` (those :func:`_rules_for` kept) in order, adding to ``counts``.

    Again until a round changes nothing: a marker can make an earlier rule match (``AKIA...``
    glued to a JWT stands alone once the JWT is a marker), and redacting the result must
    change nothing. Each match eats text that is no marker, so the rounds end.
    """
    read = _read(text, rules) if read is None else read
    changed, again = True, False
    while changed:
        changed = False
        for rule in rules:
            if again and rule is _R_CARD and not card_possible(read.raw):
                continue  # its cheap test first: it redacted what it found the first time
            redacted, n = rule.apply(read)
            if n:
                counts[rule.kind] = counts.get(rule.kind, 0) + n
                read, changed = _read(redacted, rules), True
        again = True
    return read.text


def redact(text: str) -> tuple[str, Counts]:
    """``text`` with every secret replaced by its marker, and how many of each kind.

    Pure and idempotent. ``counts`` has the kinds found only; when it is empty, ``text``
    itself is returned.
    """
    counts: Counts = {}
    rules = _rules_for(_normalised(text))
    return (_apply(text, rules, counts) if rules else text), counts


# -- JSON payloads ---------------------------------------------------------------------------

_IMAGES = ("roi", "diff")
"""Top-level objects whose ``data`` is base64 image data: not text, never redacted."""
_CARD_LEAST = 10**12
"""Integers below this have fewer than 13 digits: no card."""


def _number_text(value: Any) -> str | None:
    """A JSON number as the text a card would be, or ``None`` when it cannot be one."""
    kind = type(value)
    if kind is int:
        return str(value) if value >= _CARD_LEAST else None
    if kind is float and value >= _CARD_LEAST and value.is_integer() and value < 1e20:
        return str(int(value))
    return None


def _collect(value: Any, strings: list[str], keys: list[str]) -> None:
    """Add the strings in ``value``, a dict or a list, at any depth, to ``strings`` (string
    values and the numbers that may be cards) and ``keys``."""
    if type(value) is dict:
        keys.extend(value)
        items = value.values()
    else:
        items = value
    for item in items:
        kind = type(item)
        if kind is str:
            strings.append(item)
        elif kind is dict or kind is list:
            _collect(item, strings, keys)
        elif (kind is int or kind is float) and item >= _CARD_LEAST:
            number = _number_text(item)
            if number is not None:
                strings.append(number)


_APART = b"\x00"
"""What strings tested at once are joined by: a byte no literal, key run or card holds, so a
rule is chosen for the join exactly when it would be for one of the strings (the cheap tests
are all that the join is for)."""


def _tested(strings: Sequence[str]) -> bytes:
    """``strings`` as the patterns read them, joined (:data:`_APART`) to be tested at once."""
    joined = "\x00".join(strings)
    if joined.isascii():  # each string is its own view
        return joined.encode("ascii")
    return _APART.join([_normalised(string) for string in strings])


def _payload_strings(payload: JSONDict) -> tuple[list[str], list[str]]:
    """The string values of ``payload`` but the image data (and the numbers that may be
    cards), and its keys, at any depth."""
    strings: list[str] = []
    keys: list[str] = list(payload)
    for key, value in payload.items():
        kind = type(value)
        if kind is str:
            strings.append(value)
        elif (kind is int or kind is float) and key != "ts":
            number = _number_text(value)
            if number is not None:
                strings.append(number)
        elif kind is dict and key in _IMAGES and "data" in value:
            keys.append("data")
            _collect({k: v for k, v in value.items() if k != "data"}, strings, keys)
        elif kind is dict or kind is list:
            _collect(value, strings, keys)
    return strings, keys


_PLAIN_KEYS = frozenset(
    (
        *("type", "ts", "ocr", "meta", "roi", "diff", "observation", "extra"),
        *("app", "windowTitle", "screen", "ssim", "data", "bbox", "thumb", "scene"),
        *("title", "subtitle", "facts", "narrative", "concepts"),
    )
)
"""The names a sense event's fields have in Sinain's capture client: no secret, not tested."""


def _unique(out: dict[str, Any], key: str) -> str:
    """``key``, or ``key#2``, ``key#3``... the first that ``out`` does not hold yet: two keys
    that redact alike keep both their values."""
    if key not in out:
        return key
    n = 2
    while f"{key}#{n}" in out:
        n += 1
    return f"{key}#{n}"


@dataclass(frozen=True, slots=True)
class _Rebuild:
    """Redacts a payload's values with ``rules`` and its keys with ``key_rules`` (those the
    cheap tests chose for each), adding to ``counts``."""

    rules: Sequence[_Rule]
    key_rules: Sequence[_Rule]
    counts: Counts

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return _apply(value, self.rules, self.counts) if self.rules else value
        if isinstance(value, dict):
            return self.object(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if _R_CARD in self.rules and (number := _number_text(value)) is not None:
            redacted = _apply(number, (_R_CARD,), self.counts)
            return value if redacted == number else redacted
        return value

    def object(self, value: dict[str, Any], kept: str | None = None) -> dict[str, Any]:
        """``value`` redacted, but the value of ``kept`` (image data, a number to keep)."""
        out: dict[str, Any] = {}
        for k, v in value.items():
            out[_unique(out, self.key(k))] = v if k == kept else self.value(v)
        return out

    def key(self, key: str) -> str:
        return _apply(key, self.key_rules, self.counts) if self.key_rules else key


def redact_payload(payload: JSONDict) -> tuple[JSONDict, Counts]:
    """A client's JSON object with every string redacted, keys too, and each number that is a
    card replaced by the card's marker (a string).

    ``roi.data`` and ``diff.data`` (base64 images) are kept as they are: image data is not
    text, and what it shows is not read. ``ts`` and ``meta.ssim`` stay numbers. A key that
    redacts to a key already there gets ``#2`` (``#3``...) after it, so both values stay.
    The object is never changed: when something is redacted, a new one is returned;
    otherwise ``payload`` itself.
    """
    strings, keys = _payload_strings(payload)
    keys = [key for key in keys if key not in _PLAIN_KEYS]
    rules = _rules_for(_tested(strings))
    key_rules = _rules_for(_tested(keys)) if keys else []
    if not rules and not key_rules:
        return payload, {}
    rebuild = _Rebuild(rules, key_rules, {})
    out: JSONDict = {}
    for key, value in payload.items():
        if key in _IMAGES and isinstance(value, dict):
            kept: Any = rebuild.object(value, "data")
        elif key == "meta" and isinstance(value, dict):
            kept = rebuild.object(value, "ssim")
        elif key == "ts":
            kept = value
        else:
            kept = rebuild.value(value)
        out[_unique(out, rebuild.key(key))] = kept
    counts = rebuild.counts
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
        rules = _rules_for(_tested(texts))
        if not rules:
            return texts
        counts: Counts = {}
        redacted = [_apply(text, rules, counts) for text in texts]
        self._add(counts)
        return redacted if counts else texts

    def names(self, names: Sequence[str]) -> list[str]:
        """Each of ``names`` (of fields, of counters) redacted as :meth:`texts`, a name that
        redacts to one already given getting ``#2`` (``#3``...) after it."""
        out: dict[str, None] = {}
        for name in self.texts(names):
            out[_unique(out, name)] = None
        return list(out)

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
