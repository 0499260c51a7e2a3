"""Redaction: secrets replaced by typed markers before anything is stored or sent.

:func:`redact` (pure) replaces each secret the rules find by a typed marker,
``[redacted:<kind>]``, and counts what it replaced, by kind;
:class:`~.redactor.Redactor` applies it as configured (``RELAY_REDACT``). The rules,
one row per secret with its kind, its pattern and what it finds, are the table of
:mod:`.rules`; docs/privacy.md says what they find and what they leave.

Only the rules whose cheap test passes run (:func:`~.rules.rules_for`),
so a text without a secret costs a few scans. They match the text's normalised view
(:mod:`.text_view`: invisible characters removed, NFKC forms, look-alike letters
folded), with a key split at a line end, a tab or a space joined when the pieces make one
key (:mod:`.key_joins`); a match is replaced in the original text over exactly the
characters it was made of. The rules apply in order, again until a round changes nothing, and
a marker never matches again, so redacting redacted text changes nothing.

The buffers' ``append_many`` is the one choke point: client data enters the relay's state
there only, redacted on the buffer's own thread before the item gets its id and its row, so
nothing unredacted is stored, served or sent, and rows restored at a restart are not redacted
again. Excluded apps and windows are dropped whole, at ingest: :mod:`actors.core.exclusion`.
"""

from __future__ import annotations

from collections.abc import Sequence

from actors.core.redaction.cards import card_possible
from actors.core.redaction.key_joins import joins
from actors.core.redaction.rules import R_CARD, Rule, rules_for
from actors.core.redaction.text_view import Pieces, Read, view_of

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
    """Apply ``rules`` (those :func:`~.rules.rules_for` kept) in order,
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
