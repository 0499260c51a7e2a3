"""Redaction: secrets replaced by typed markers before anything is stored or sent.

Redaction
---------
:func:`redact` (pure) replaces each secret it recognises by a typed marker,
``[redacted:<kind>]``; :class:`~actors.core.redactor.Redactor` applies it as configured
(``RELAY_REDACT``) and counts what it replaced, by kind:

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
(:mod:`actors.core.key_joins`): the first begins with a key's literal, the key's pattern
matches both to the end of the second (its alphabet, its length), and the pieces read as
pieces of a random key (letters and digits alternating, or a digit and a lower-case letter
before an upper-case one, or hex). After a space, which prose puts between words, both must,
and the first must be no key on its own; and only a run of 20 key characters on one side or
the other is looked at (:mod:`actors.core.redaction_rules`): a key split by a space into two
short halves (``AKIAIOSFOD NN7EXAMPLE``) reads as two words and stays. The line after a whole
key stays unless it reads as the rest of it; a word after a whole key and a space always
stays.

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
lines of a wrapped key make one run there. Figures: ``python -m bench privacy``.

Excluded apps and windows are dropped whole, at ingest: :mod:`actors.core.exclusion`.
"""

from __future__ import annotations

from collections.abc import Sequence

from actors.core.cards import card_possible
from actors.core.key_joins import joins
from actors.core.redaction_rules import R_CARD, Rule, rules_for
from actors.core.text_view import Pieces, Read, view_of

Counts = dict[str, int]


def normalised(text: str) -> bytes:
    """The bytes of ``text``'s view."""
    return text.encode("ascii") if text.isascii() else view_of(text).raw


def _read(text: str, rules: Sequence[Rule] = ()) -> Read:
    """``text`` as the patterns read it, with the splits of the keys of ``rules`` joined."""
    view = view_of(text)
    raw = view.raw
    origin = () if view.origin is None else (view.origin,)
    gaps = joins(raw, rules) if rules else []
    if gaps:
        joined = Pieces()
        kept, done, removed = [], 0, 0
        for start, end in gaps:
            kept.append(raw[done:start])
            done = end
            joined.add(start - removed, end)
            removed += end - start
        kept.append(raw[done:])
        raw, origin = b"".join(kept), (joined, *origin)
    return Read(text, raw, origin)


def apply_rules(text: str, rules: Sequence[Rule], counts: Counts, read: Read | None = None) -> str:
    """Apply ``rules`` (those :func:`~actors.core.redaction_rules.rules_for` kept) in order,
    adding to ``counts``.

    Again until a round changes nothing: a marker can make an earlier rule match (``AKIA...``
    glued to a JWT stands alone once the JWT is a marker), and redacting the result must
    change nothing. Each match eats text that is no marker, so the rounds end.
    """
    read = _read(text, rules) if read is None else read
    changed, again = True, False
    while changed:
        changed = False
        for rule in rules:
            if again and rule is R_CARD and not card_possible(read.raw):
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
    rules = rules_for(normalised(text))
    return (apply_rules(text, rules, counts) if rules else text), counts
