"""The benches' tables and command-line bounds (``bench/figures.py``)."""

from __future__ import annotations

import argparse
import math

import pytest

from bench.figures import Table, at_least, cell, median


def test_a_cell_is_formatted_by_its_spec_and_a_text_or_nan_only_aligned() -> None:
    assert cell(1.5, ">+8.2f") == "   +1.50"
    assert cell(12345, ">8,") == "  12,345"
    assert cell(math.nan, ">+6.2f") == "     -"
    assert cell("", ">+6.2f") == " " * 6
    assert cell("ab", "<4") == "ab  "


def test_a_table_aligns_each_head_as_its_values_over_a_rule_as_long(
    capsys: pytest.CaptureFixture[str],
) -> None:
    table = Table("name <6|p99 ms >+8.2f|n >4,", indent="  ")
    table.head(blank=True)
    table.row("feed", 2.5, 1234)
    table.row("sense", math.nan, 7)
    assert capsys.readouterr().out.splitlines() == [
        "",
        "  name     p99 ms    n",
        "  --------------------",
        "  feed      +2.50 1,234",
        "  sense         -    7",
    ]


def test_bounds_reject_what_is_below_or_not_finite() -> None:
    assert at_least(1)("3") == 3
    assert at_least(0, float)("0") == 0.0
    for parse, text in (
        (at_least(1), "0"),
        (at_least(0, float, above=True), "0"),
        (at_least(0, float), "nan"),
    ):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)


def test_the_median_of_nothing_is_nan() -> None:
    assert math.isnan(median([]))
    assert median([3.0, 1.0, 2.0]) == 2.0
