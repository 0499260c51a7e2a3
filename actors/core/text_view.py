"""The normalised view of a text that redaction matches on, and the way back to the text.

Redaction's patterns are ASCII (:mod:`actors.core.secret_patterns`); a secret written with
characters that look the same but are not those ASCII ones must still be found. The view of a
text is that text with:

- **invisible characters removed**: Unicode's default-ignorable code points
  (:data:`IGNORABLE_RANGES`: zero-width space, zero-width joiner and non-joiner, word joiner, soft
  hyphen, byte-order mark, bidirectional marks and isolates, variation selectors, tags, ...)
  and the other format characters that show nothing;
- **compatibility forms read as what they stand for** (each character's NFKC form, where it
  holds an ASCII character: :data:`COMPATIBLE`): full-width ``sk-`` (U+FF53 U+FF4B) and
  ``:`` (U+FF1A) as ``sk-`` and ``:``, ligatures, super- and subscript digits, letter-like
  symbols; a no-break space or any other Unicode space as a tab (whitespace to every
  pattern, as a space is, and a place where a key may have been split: see
  :mod:`actors.core.redaction`);
- **look-alike letters folded**, in a word that also holds an ASCII letter or digit:
  the Cyrillic and Greek letters of :data:`LOOK_ALIKES` that look like the Latin letters of
  key prefixes and of ``password`` (a Cyrillic dze in ``sk-``, a Cyrillic A in ``AKIA``, a
  Cyrillic er in ``password``). A word without an
  ASCII letter or digit is left as it is: Russian or Greek prose is no key.

Characters the view does not change (accents, CJK, Cyrillic prose, emoji) stay as they are;
redaction reads each as one byte, ``?`` beyond Latin-1, which no pattern matches.

Each character of the view knows where it came from (:attr:`View.origin`), so a match in the
view is replaced in the original text over exactly the characters it was made of, the
invisible ones inside it included.

Cost: an ASCII text is its own view (``str.isascii`` is one pass at memory speed); another
text is searched once for a character the view would change (one precompiled class), and
only a text that holds one is rebuilt.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

IGNORABLE_RANGES = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFFB),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
"""Unicode's Default_Ignorable_Code_Point, the interlinear annotation marks (U+FFF9 to
U+FFFB) and the Egyptian hieroglyph format controls, first and last: characters that show
nothing, removed from the view. The other format characters (Arabic number signs and the
like) show."""

LOOK_ALIKES = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "һ": "h", "і": "i", "ј": "j", "к": "k", "о": "o", "р": "p",
    "ѕ": "s", "с": "c", "у": "y", "х": "x", "ԁ": "d", "ԛ": "q", "ԝ": "w",
    "А": "A", "В": "B", "Е": "E", "Н": "H", "І": "I", "Ј": "J", "К": "K", "М": "M", "О": "O",
    "Р": "P", "Ѕ": "S", "С": "C", "Т": "T", "Х": "X", "Ү": "Y",
    # Greek
    "α": "a", "ι": "i", "κ": "k", "ο": "o", "ρ": "p", "υ": "u", "ν": "v",
    "Α": "A", "Β": "B", "Ε": "E", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Χ": "X", "Υ": "Y", "Ζ": "Z",
}  # fmt: skip
"""Cyrillic and Greek letters that look like Latin ones, folded in a word that also holds an
ASCII letter or digit (the prefixes of keys, ``AKIA``, ``password``, ``bearer``)."""

COMPATIBLE_BLOCKS = (
    (0x00A0, 0x0400),
    (0x1D00, 0x2C80),
    (0x2E80, 0x3400),
    (0xA700, 0xA800),
    (0xFB00, 0xFFF0),
    (0x10780, 0x107C0),
    (0x1D400, 0x1D800),
    (0x1F100, 0x1F200),
    (0x1FBF0, 0x1FC00),
)
"""The blocks that hold every character whose NFKC form holds an ASCII character (a test
reads the whole of Unicode to check it): read at import, in a few milliseconds."""


def _compatible() -> set[int]:
    return {
        code
        for first, end in COMPATIBLE_BLOCKS
        for code in range(first, end)
        if (form := unicodedata.normalize("NFKC", chr(code))) != chr(code)
        and any(c < "\x80" for c in form)
    }


def _ranges(codes: set[int]) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for code in sorted(codes):
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    return ranges


def _class(codes: set[int]) -> str:
    """``codes`` as a regular-expression class."""
    parts = (
        re.escape(chr(first)) + ("" if first == last else f"-{re.escape(chr(last))}")
        for first, last in _ranges(codes)
    )
    return f"[{''.join(parts)}]"


_IGNORABLE = {code for first, last in IGNORABLE_RANGES for code in range(first, last + 1)}
COMPATIBLE = frozenset(_compatible() - _IGNORABLE)
"""Characters whose NFKC form holds an ASCII character (full-width letters and colon, the
ligature fi, superscript two, a no-break space)."""
_FOLDABLE = {ord(c) for c in LOOK_ALIKES}
_ASTRAL = 0x10000
_CHANGES = re.compile(_class({c for c in _IGNORABLE | COMPATIBLE | _FOLDABLE if c < _ASTRAL}))
"""A character of the Basic Multilingual Plane the view may change: the test that lets most
texts be their own view (in one class of that plane, which the engine tests with a table)."""
_BEYOND = re.compile("[\U00010000-\U0010ffff]")
_CHANGES_BEYOND = re.compile(_class({c for c in _IGNORABLE | COMPATIBLE if c >= _ASTRAL}))
_REWRITTEN = re.compile(_class(_IGNORABLE | COMPATIBLE))
_IGNORED = re.compile(_class(_IGNORABLE))
_FOLDABLE_CLASS = _class(_FOLDABLE)
_MIXED = re.compile(f"{_FOLDABLE_CLASS}[A-Za-z0-9_-]|[A-Za-z0-9_-]{_FOLDABLE_CLASS}")
"""A look-alike letter beside an ASCII key character: the word around it is folded."""
_WORD = re.compile(r"[\w-]+")
_FOLD = str.maketrans(LOOK_ALIKES)
TAB = "\t"
"""What a no-break or other Unicode space becomes in the view."""


@dataclass(frozen=True, slots=True)
class View:
    """A text's normalised view."""

    text: str
    """The original text."""
    view: str
    """What the patterns read (``text`` itself when nothing changed)."""
    origin: list[int] | None
    """For each character of ``view``, the index in ``text`` of the character it came from;
    ``None`` when ``view`` is ``text``."""

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The characters of ``text`` that ``view[start:end]`` (not empty) was made of."""
        if self.origin is None:
            return start, end
        return self.origin[start], self.origin[end - 1] + 1


def view_of(text: str) -> View:
    """``text``'s view (see the module's docstring)."""
    if text.isascii() or (
        _CHANGES.search(text) is None
        and (_BEYOND.search(text) is None or _CHANGES_BEYOND.search(text) is None)
    ):
        return View(text, text, None)
    view, origin = (text, None) if _REWRITTEN.search(text) is None else _rewritten(text)
    if _MIXED.search(view) is not None:
        view = _fold_mixed_words(view)
    return View(text, view, origin) if view != text else View(text, text, None)


def _rewritten(text: str) -> tuple[str, list[int]]:
    """``text`` with its invisible characters removed and its compatibility forms read as NFKC
    has them, and the origin of each character."""
    pieces: list[str] = []
    origin: list[int] = []
    done = 0
    for match in _REWRITTEN.finditer(text):
        at = match.start()
        pieces.append(text[done:at])
        origin.extend(range(done, at))
        char = text[at]
        if _IGNORED.match(char) is None:
            form = unicodedata.normalize("NFKC", char)
            form = TAB if form == " " else _IGNORED.sub("", form)
            pieces.append(form)
            origin.extend([at] * len(form))
        done = at + 1
    pieces.append(text[done:])
    origin.extend(range(done, len(text)))
    return "".join(pieces), origin


def _fold_mixed_words(view: str) -> str:
    """``view`` with the look-alike letters folded in each word that holds an ASCII letter or
    digit beside one (same length: the origins stay)."""
    parts: list[str] = []
    done = 0
    for match in _MIXED.finditer(view):
        if match.start() < done:
            continue
        start = match.start()
        while start > 0 and (view[start - 1].isalnum() or view[start - 1] in "_-"):
            start -= 1
        word = _WORD.match(view, start)
        end = word.end() if word is not None else match.end()
        parts += (view[done:start], view[start:end].translate(_FOLD))
        done = end
    parts.append(view[done:])
    return "".join(parts)
