"""The normalised view redaction matches on: what it changes, what it keeps, and the way back."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from actors.core.redaction.text_view import (
    COMPATIBLE,
    IGNORABLE_RANGES,
    LOOK_ALIKES,
    TAB,
    view_of,
)

PREPENDED = {
    *range(0x0600, 0x0606),
    0x06DD,
    0x070F,
    0x0890,
    0x0891,
    0x08E2,
    0x110BD,
    0x110CD,
}
"""Format characters that show (number signs written before digits): kept."""


def ignorable(code: int) -> bool:
    return any(first <= code <= last for first, last in IGNORABLE_RANGES)


def test_every_character_whose_nfkc_form_holds_ascii_is_read_as_that_form() -> None:
    """The blocks read at import hold all of them, in this Python's Unicode."""
    missing = [
        hex(code)
        for code in range(0x80, sys.maxunicode + 1)
        if (form := unicodedata.normalize("NFKC", chr(code))) != chr(code)
        and any(c < "\x80" for c in form)
        and code not in COMPATIBLE
        and not ignorable(code)
    ]
    assert missing == []


def test_every_invisible_format_character_is_removed() -> None:
    kept = [
        hex(code)
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) == "Cf" and not ignorable(code)
    ]
    assert {int(code, 16) for code in kept} <= PREPENDED


def test_look_alikes_are_cyrillic_or_greek_letters_that_fold_to_ascii_letters() -> None:
    for char, latin in LOOK_ALIKES.items():
        name = unicodedata.name(char)
        assert name.startswith(("CYRILLIC", "GREEK")), name
        assert latin.isascii() and latin.isalpha() and len(latin) == 1


@pytest.mark.parametrize(
    ("text", "view"),
    [
        ("plain ASCII", "plain ASCII"),
        ("naïve café — 日本語 Привет", "naïve café — 日本語 Привет"),
        ("pass\u200bword", "password"),
        ("ｓｋ-１２：", "sk-12:"),
        ("a\xa0b\u3000c\u202fd", f"a{TAB}b{TAB}c{TAB}d"),
        ("\u0455k-x \u0410KIA \u0440assword", "sk-x AKIA password"),
        ("Ѕкала ѕk", "Ѕкала sk"),  # a Cyrillic word stays; a mixed one is folded
        ("ﬁle ²", "file 2"),
    ],
)
def test_the_view(text: str, view: str) -> None:
    assert view_of(text).view == view


def test_a_text_that_needs_no_change_is_its_own_view() -> None:
    for text in ("plain", "naïve café — 日本語 Привет 🙂"):
        got = view_of(text)
        assert got.view is text
        assert got.origin is None


def test_each_character_of_the_view_knows_where_it_came_from() -> None:
    text = "a\u200bb\ufb01c\xa0d"  # a, ZWSP, b, the ligature fi, c, no-break space, d
    got = view_of(text)
    assert got.view == f"abfic{TAB}d"
    assert got.raw == b"abfic\td"
    assert [got.span(n, n + 1) for n in range(len(got.view))] == [
        (0, 1),
        (2, 3),
        (3, 4),
        (3, 4),
        (4, 5),
        (5, 6),
        (6, 7),
    ]
    assert got.span(0, 2) == (0, 3)  # "ab" covers the zero-width space between them
    assert got.span(3, 4) == (3, 4)  # "i" of the ligature: the whole ligature
    assert got.span(4, 7) == (4, 7)
