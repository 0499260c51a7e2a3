"""RELAY_EXCLUDE_TITLES's ``\\w``, ``\\d``, ``\\s`` and their negations match as Python's ``re``
matches them, non-ASCII letters, digits and spaces included, though RE2 runs the search; a
``\\b`` or ``\\B``, which RE2 reads for ASCII only, stops the start with what to write."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.core.bodies import sense_input
from actors.core.exclusion import ExclusionRule
from config.command_line import load_settings
from config.common.errors import ConfigError
from config.common.unicode_regex import CLASSES, _every_character, compile_python, python_classes

PATTERNS = [
    r"(?i)private\sbrowsing",
    r"\d",
    r"^\w+$",
    r"\w\s\w",
    r"^\S+$",
    r"\W",
    r"^\D+$",
    r"[\w]{3}",
    r"[^\w\s]",
    r"[a\s]x",
    r"[^\d]\d",
    r"[\d\s]+$",
    r"(?i)^[x\W]",
    r"(?i)[^\W]",
    r"[^\Wa]",
    r"(?i)\w+ \S",
    r"\\w|\\d",
]
"""Each class alone, in a bracket class, negated, with other items and with ``(?i)``."""

LETTERS = st.characters(categories=("L", "N", "Zs", "Zl", "Zp", "Cc", "P", "S", "M"))
"""Letters, digits and spaces of any script (with marks, punctuation and controls around)."""
TITLES = st.text(
    st.one_of(LETTERS, st.sampled_from("aAxX19 _\t\u00a0\u2009\u3000٣é\\d")), max_size=12
)


def excluded(pattern: str, title: str) -> str | None:
    rule = ExclusionRule.of((), pattern)
    return rule.reason(sense_input({"type": "text", "ts": 1, "meta": {"windowTitle": title}}))


@pytest.mark.parametrize(
    ("pattern", "title"),
    [
        (r"(?i)private\sbrowsing", "Private\u00a0Browsing — Firefox"),
        (r"(?i)private\sbrowsing", "private\u2009browsing"),
        (r"^\w+$", "Café"),
        (r"\d{4}", "Invoice ٢٠٢٤"),
        (r"\W", "Straße\u3000Berlin"),
        (r"[\s]", "a\u0085b"),
    ],
)
def test_a_unicode_title_is_excluded_as_pythons_re_would(pattern: str, title: str) -> None:
    assert re.search(pattern, title)
    assert excluded(pattern, title) == "title"


@pytest.mark.slow
@settings(derandomize=True, max_examples=400, deadline=None, database=None)
@given(pattern=st.sampled_from(PATTERNS), title=TITLES)
def test_re2_and_pythons_re_agree_on_every_title(pattern: str, title: str) -> None:
    wanted = "title" if re.search(pattern, title) else None
    assert excluded(pattern, title) == wanted


@pytest.mark.parametrize("pattern", [r"\bprivate\b", r"x\B", r"(?i)\Bincognito"])
def test_a_word_boundary_stops_the_start_saying_what_to_write(pattern: str) -> None:
    with pytest.raises(ConfigError, match=r"RELAY_EXCLUDE_TITLES.*\(\?:\^\|\\W\)"):
        load_settings([], {"RELAY_EXCLUDE_TITLES": pattern}, isatty=False)


@pytest.mark.parametrize("pattern", [r"\\b", r"[\b]x|y", r"\Q\b\E"])
def test_a_b_that_is_no_boundary_is_left_to_re2(pattern: str) -> None:
    assert python_classes(pattern) == pattern


def test_the_rewrite_leaves_a_pattern_without_classes_as_it_is() -> None:
    for pattern in (r"(?i)incognito|private browsing", r"^a\.b\x{e9}\pL[[:alpha:]]$", ""):
        assert python_classes(pattern) == pattern


@pytest.mark.slow
@pytest.mark.parametrize("letter", CLASSES)
def test_each_class_matches_the_characters_pythons_does_every_one(letter: str) -> None:
    every = _every_character()  # the runs each finds, over every code point, are the same
    for pattern in (rf"\{letter}+", rf"(?i)\{letter}+", rf"[\{letter}]+", rf"(?i)[^\{letter}]+"):
        assert compile_python(pattern).findall(every) == re.findall(pattern, every), pattern
