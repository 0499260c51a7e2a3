"""Keys split by a line end, a tab or a space (where OCR and editors wrap a long key), joined
when the two pieces make one key: the splits redaction drops from the text its rules read
(:mod:`.text`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from actors.core.redaction import patterns
from actors.core.redaction.rules import RULES, Rule

_JOIN_LITERALS = {
    id(rule): rule.literal for rule in RULES if rule.joinable and rule.literal is not None
}
"""The keys a split may have cut, by rule, each with the literal it begins with: every kind
that stands in a word of its own (not a Slack webhook's path nor a Telegram token, which
follow text of their own)."""
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


MAX_PIECES = 24
"""Pieces one key may be joined from at the most: a long key wrapped in a narrow column takes a
dozen lines; more pieces are not looked at (the chain of a key stops there)."""


def joins(raw: bytes, rules: Sequence[Rule]) -> list[tuple[int, int]]:
    """The splits inside keys of ``rules`` in ``raw``: the whitespace to drop, in order.

    A split is a line end, a tab (a no-break or other Unicode space, in the view) or one
    space between two runs of key characters, the first of which begins with the literal of
    a key (:data:`_JOIN_LITERALS`). It is joined when the key's pattern matches the two runs
    together, to the end of the second (the second continues the key's alphabet, and the
    whole has the key's length), and:

    - after a line end or a tab: the first run is no key on its own and one of the two reads
      as a piece of a key (:func:`_key_shaped`); or the first run is a key already and the
      second reads as a piece of a key (a long key wrapped over lines, joined line by line);
    - after a space, which prose puts between words: the first run is no key on its own,
      both read as pieces of a key, and one holds :data:`patterns.KEY_RUN` characters (the
      words :func:`~.rules._key_words` looks at).

    So a word after a whole key stays (``sk-... token2``, ``sk-...\\nNext``), and so does a
    word after a prefix that is no key (``sk-learn estimators``).

    Time linear in ``raw``: a key's literal inside a key already joined (a line of a wrapped
    key that begins like one) starts no key of its own, and a key is joined from
    :data:`MAX_PIECES` pieces at the most, so each byte is matched a bounded number of times.
    """
    gaps: list[tuple[int, int]] = []
    for rule in rules:
        literal = _JOIN_LITERALS.get(id(rule))
        if literal is None:
            continue
        joined_to = 0
        for found in literal.finditer(raw):
            start = found.start()
            if start < joined_to or (start and raw[start - 1] in patterns.KEY_BYTES):
                continue  # inside a key already joined, or not the beginning of a word
            run = patterns.RUN.match(raw, found.end())
            end = run.end() if run is not None else found.end()
            word = raw[start:end]
            for _ in range(MAX_PIECES - 1):
                split = patterns.SPLIT.match(raw, end)
                if split is None:
                    break
                nxt = patterns.RUN.match(raw, split.end())
                if nxt is None or nxt.end() == split.end():
                    break
                line = split.group() != b" "
                if not _joined(rule, word, found.end() - start, nxt.group(), line=line):
                    break
                gaps.append(split.span())
                word += nxt.group()
                end = joined_to = nxt.end()
    return sorted(set(gaps))


def _joined(rule: Rule, first: bytes, prefix: int, second: bytes, *, line: bool) -> bool:
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
