"""RE2 patterns read with Python's Unicode classes: ``\\w``, ``\\d``, ``\\s`` and their
negations match what they match in Python's :mod:`re`.

RE2 (``google-re2``) matches in time linear in the text whatever the pattern, which is why a
pattern from the settings is compiled with it; but its ``\\w``, ``\\d`` and ``\\s`` know ASCII
only, so ``(?i)private\\sbrowsing`` would miss a title with a no-break space, and ``\\w+``
would stop at ``é``. :func:`python_classes` writes each of the six class escapes as the
ranges of code points Python's own ``re`` finds for it (read once, from this interpreter, so
the two agree on every character), leaving the rest of the pattern as it is. The rewrite is
one pass over the pattern; each class adds a fixed number of ranges.

``\\b`` and ``\\B`` cannot be written so (RE2 has no look-around), and RE2's are ASCII: a
pattern using them is refused (:class:`UnicodeBoundary`), with what to write instead.

Case: Python's classes ignore ``(?i)``, so a class escape is written ``(?-i:[...])``, alone
or in a bracket class of class escapes only (``[^\\w\\s]``); one in a bracket class with
other items is taken out of it, ``[a\\w]`` as ``(?:[a]|(?-i:[...]))``. Only in a negated
bracket class with other items (``(?i)[^a\\w]``) does it stay in the class, where ``(?i)``
also excludes the few characters that share a case with one of the class (U+0345, the
combining iota, beside ``\\w``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

import re2

CLASSES = "dswDSW"
"""The escapes rewritten."""
BOUNDARIES = "bB"
"""The escapes refused."""
_SURROGATES = range(0xD800, 0xE000)


class UnicodeBoundary(ValueError):
    """A pattern uses ``\\b`` or ``\\B``, which RE2 reads for ASCII only."""


def _every_character() -> str:
    """Every code point but the surrogates (which no title holds), in order."""
    return "".join(map(chr, range(_SURROGATES.start))) + "".join(
        map(chr, range(_SURROGATES.stop, 0x110000))
    )


def _code_point(index: int) -> int:
    """The code point at ``index`` of :func:`_every_character`."""
    return index if index < _SURROGATES.start else index + len(_SURROGATES)


def _runs(pattern: str, text: str) -> Iterator[tuple[int, int]]:
    """The first and last code point of each run of ``text`` that ``pattern`` matches, a run
    that spans the surrogates cut in two."""
    for match in re.finditer(pattern, text):
        first, last = _code_point(match.start()), _code_point(match.end() - 1)
        if first < _SURROGATES.start <= last:
            yield first, _SURROGATES.start - 1
            first = _SURROGATES.stop
        yield first, last


@functools.cache
def class_ranges() -> dict[str, str]:
    """Each of :data:`CLASSES` as the ranges of a bracket class in RE2's syntax
    (``\\x{30}-\\x{39}...``), as Python's ``re`` matches it on this interpreter."""
    text = _every_character()
    return {
        letter: "".join(
            rf"\x{{{a:X}}}" if a == b else rf"\x{{{a:X}}}-\x{{{b:X}}}"
            for a, b in _runs(rf"\{letter}+", text)
        )
        for letter in CLASSES
    }


def _boundary(letter: str) -> UnicodeBoundary:
    return UnicodeBoundary(
        f"\\{letter} is read for ASCII letters only here (RE2): write (?:^|\\W) before a "
        f"word and (?:\\W|$) after it instead of \\b (\\W and \\w match as in Python)"
    )


def _bracket(pattern: str, start: int) -> tuple[str, int]:
    """The bracket class that opens at ``pattern[start]``, rewritten, and where it ends."""
    i = start + 1
    negated = pattern.startswith("^", i)
    i += negated
    rest: list[str] = []
    escapes: list[str] = []
    first = i
    while i < len(pattern) and (pattern[i] != "]" or i == first):
        if pattern[i] == "\\" and i + 1 < len(pattern):
            letter = pattern[i + 1]
            if letter in CLASSES:
                escapes.append(letter)
            else:
                rest.append(pattern[i : i + 2])
            i += 2
        elif posix := re.match(r"\[:\^?[a-z]+:\]", pattern[i : i + 16]):
            rest.append(posix.group())
            i += posix.end()
        else:
            rest.append(pattern[i])
            i += 1
    end = min(i + 1, len(pattern))
    items = "".join(rest)
    if not escapes:
        return pattern[start:end], end
    ranges = "".join(class_ranges()[letter] for letter in escapes)
    if negated:
        return (f"[^{items}{ranges}]" if items else f"(?-i:[^{ranges}])"), end
    alone = f"(?-i:[{ranges}])"
    if not items:
        return alone, end
    items = "\\" + items if items.startswith("^") else items
    return f"(?:[{items}]|{alone})", end


def python_classes(pattern: str) -> str:
    """``pattern`` (RE2 syntax) with ``\\w``, ``\\d``, ``\\s``, ``\\W``, ``\\D`` and ``\\S``
    written as the code points Python's ``re`` matches for them (see the module).

    Raises:
        UnicodeBoundary: the pattern uses ``\\b`` or ``\\B`` outside a bracket class.
    """
    if "\\" not in pattern:
        return pattern
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "[":
            text, i = _bracket(pattern, i)
            out.append(text)
            continue
        if char != "\\" or i + 1 == len(pattern):
            out.append(char)
            i += 1
            continue
        letter = pattern[i + 1]
        if letter in BOUNDARIES:
            raise _boundary(letter)
        if letter == "Q":  # RE2's literal text, to \E or the end
            end = pattern.find("\\E", i + 2)
            end = len(pattern) if end == -1 else end + 2
            out.append(pattern[i:end])
            i = end
            continue
        out.append(f"(?-i:[{class_ranges()[letter]}])" if letter in CLASSES else char + letter)
        i += 2
    return "".join(out)


def compile_python(pattern: str) -> re2._Regexp[str]:
    """``pattern`` compiled by RE2 with Python's Unicode classes (:func:`python_classes`).

    Raises:
        UnicodeBoundary: the pattern uses ``\\b`` or ``\\B``.
        re2.error: RE2 cannot compile it.
    """
    return re2.compile(python_classes(pattern))
