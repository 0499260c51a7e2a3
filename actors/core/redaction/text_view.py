"""The normalised view of a text that redaction matches on, and the way back to the text.

Redaction's patterns are ASCII (:mod:`.rules`); a secret written with
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
  :mod:`.text`);
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

import bisect
import re
import unicodedata
from collections.abc import Sequence
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
_ASTRAL = 0x10000
_REWRITTEN = re.compile(_class({c for c in _IGNORABLE | COMPATIBLE if c < _ASTRAL}))
"""A character of the Basic Multilingual Plane the view rewrites (one class of that plane,
which the engine tests with a table: the test that lets most texts be their own view)."""
_REWRITTEN_BEYOND = re.compile(_class({c for c in _IGNORABLE | COMPATIBLE if c >= _ASTRAL}))
TAB = "\t"
"""What a no-break or other Unicode space becomes in the view."""
_FORMS = {
    **{chr(code): "" for code in _IGNORABLE},
    **{
        chr(code): TAB if form == " " else "".join(c for c in form if ord(c) not in _IGNORABLE)
        for code in COMPATIBLE
        if (form := unicodedata.normalize("NFKC", chr(code)))
    },
}
"""What each character the view rewrites becomes."""
_KEY_CHARACTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_BESIDE = bytes(0x61 if b in _KEY_CHARACTERS else 0x71 if b == 0x3F else 0x20 for b in range(256))
"""Turns the bytes of ASCII key characters into ``a``, ``?`` (what a character beyond
Latin-1 is, in bytes) into ``q`` and the others into a space: ``aq`` or ``qa`` is a
character beyond Latin-1 beside a key character, which a look-alike letter in a key is."""
_WORD = re.compile(r"[\w-]+")
_FOLD = str.maketrans(LOOK_ALIKES)


class Pieces:
    """Where each character of a rewritten string came from in the string it was made from.

    A map in pieces, one where a length changed (a character removed, or read as several):
    within a piece, the characters map one to one, or all to the one character they were
    made of (``stretched``). A character replaced by one other starts no piece.
    """

    __slots__ = ("_bases", "_starts", "_stretched")

    def __init__(self) -> None:
        self._starts = [0]
        self._bases = [0]
        self._stretched = [False]

    def add(self, start: int, base: int, *, stretched: bool = False) -> None:
        """From ``start`` on, characters come from ``base`` on (all from ``base``, when
        ``stretched``)."""
        if self._starts[-1] == start:
            self._bases[-1], self._stretched[-1] = base, stretched
        else:
            self._starts.append(start)
            self._bases.append(base)
            self._stretched.append(stretched)

    def at(self, index: int) -> int:
        """Where the character at ``index`` came from."""
        piece = bisect.bisect_right(self._starts, index) - 1
        base = self._bases[piece]
        return base if self._stretched[piece] else base + index - self._starts[piece]


@dataclass(frozen=True, slots=True)
class View:
    """A text's normalised view."""

    text: str
    """The original text."""
    view: str
    """What the patterns read (``text`` itself when nothing changed)."""
    raw: bytes
    """``view`` with one byte a character (Latin-1; ``?`` for any other character)."""
    origin: Pieces | None
    """Where each character of ``view`` came from in ``text``; ``None`` when one to one."""

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The characters of ``text`` that ``view[start:end]`` (not empty) was made of."""
        if self.origin is None:
            return start, end
        return self.origin.at(start), self.origin.at(end - 1) + 1


def view_of(text: str) -> View:
    """``text``'s view (see the module's docstring)."""
    if text.isascii():
        return View(text, text, text.encode("ascii"), None)
    view, origin = text, None
    if _REWRITTEN.search(text) is not None or (
        _beyond_the_plane(text) and _REWRITTEN_BEYOND.search(text) is not None
    ):
        view, origin = _rewritten(text)
    raw = view.encode("latin-1", "replace")
    shape = raw.translate(_BESIDE)
    if b"aq" in shape or b"qa" in shape:
        folded = _fold_mixed_words(view, shape)
        if folded is not view:
            view, raw = folded, folded.encode("latin-1", "replace")
    return View(text, view, raw, origin)


def _rewritten(text: str) -> tuple[str, Pieces | None]:
    """``text`` with its invisible characters removed and its compatibility forms read as NFKC
    has them, and where each character came from (``None``: one to one)."""
    pieces: list[str] = []
    origin = Pieces()
    stretched = False
    done = size = 0
    for at in _all_rewritten(text):
        pieces.append(text[done:at])
        size += at - done
        form = _FORMS[text[at]]
        pieces.append(form)
        if len(form) != 1:
            if form:
                origin.add(size, at, stretched=True)
            origin.add(size + len(form), at + 1)
            stretched = True
        size += len(form)
        done = at + 1
    pieces.append(text[done:])
    return "".join(pieces), (origin if stretched else None)


def _all_rewritten(text: str) -> list[int]:
    """Where the characters the view rewrites are, in order."""
    found = [match.start() for match in _REWRITTEN.finditer(text)]
    if _beyond_the_plane(text):
        found = sorted((*found, *(match.start() for match in _REWRITTEN_BEYOND.finditer(text))))
    return found


def _beyond_the_plane(text: str) -> bool:
    """Whether ``text`` holds a character beyond the Basic Multilingual Plane (which takes two
    UTF-16 code units: an encoding at memory speed tells)."""
    return len(text.encode("utf-16-le", "surrogatepass")) > 2 * len(text)


def _fold_mixed_words(view: str, shape: bytes) -> str:
    """``view`` with the look-alike letters folded in each word that holds one beside an ASCII
    key character (``shape`` tells where: see :data:`_BESIDE`); same length, so the origins
    stay. ``view`` itself if there is none."""
    beside = sorted({at + 1 for at in _finds(shape, b"aq")} | set(_finds(shape, b"qa")))
    parts: list[str] = []
    done = 0
    for at in beside:
        if at < done or view[at] not in LOOK_ALIKES:
            continue
        start = at
        while start > 0 and (view[start - 1].isalnum() or view[start - 1] in "_-"):
            start -= 1
        word = _WORD.match(view, start)
        end = word.end() if word is not None else at + 1
        parts += (view[done:start], view[start:end].translate(_FOLD))
        done = end
    if not parts:
        return view
    parts.append(view[done:])
    return "".join(parts)


def _finds(data: bytes, needle: bytes) -> list[int]:
    found: list[int] = []
    at = data.find(needle)
    while at != -1:
        found.append(at)
        at = data.find(needle, at + 1)
    return found


@dataclass(frozen=True, slots=True)
class Read:
    """A text as the patterns read it: the bytes of its view (:mod:`.text_view`),
    with the splits of keys joined (:func:`~.key_joins.joins`), and the way back to
    the text."""

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
