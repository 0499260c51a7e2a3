"""What the cases share to print: the one table printer (:class:`Table`), argument bounds and
the data files in ``bench/data``.

A cell is formatted by its spec; a text or NaN (``-``) is only aligned as wide:

>>> [cell(1.5, ">+8.2f"), cell(12345, ">8,"), cell(math.nan, ">+6.2f"), cell("ab", "<4")]
['   +1.50', '  12,345', '     -', 'ab  ']
>>> cell("", ">+6.2f") == " " * 6
True

A table aligns each head as its values, over a rule as long:

>>> table = Table("name <6|p99 ms >+8.2f|n >4,", indent="  ")
>>> table.head(blank=True)
<BLANKLINE>
  name     p99 ms    n
  --------------------
>>> table.row("feed", 2.5, 1234)
  feed      +2.50 1,234
>>> table.row("sense", math.nan, 7)
  sense         -    7

Bounds reject what is below them or not finite:

>>> at_least(1)("3"), at_least(0, float)("0")
(3, 0.0)
>>> for parse, text in ((at_least(1), "0"), (at_least(0, float, above=True), "0"),
...                     (at_least(0, float), "nan")):
...     try:
...         parse(text)
...     except argparse.ArgumentTypeError as exc:
...         print(exc)
must be at least 1, not 0
must be above 0, not 0
must be at least 0, not nan
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
_SPEC = re.compile(r"([<>=^]?)[-+ ]?z?#?0?(\d*)")
"""The alignment and the width of a format spec."""


def data(name: str) -> Any:
    """``bench/data/<name>.json``: texts and tables the benches feed the relay."""
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def at_least(low: float, kind: Callable[[str], Any] = int, *, above: bool = False) -> Any:
    """An argparse type: ``kind`` of the text, finite and at least ``low`` (``above`` it)."""

    def parse(text: str) -> Any:
        value = kind(text)
        if not math.isfinite(value) or value < low or (above and value == low):
            msg = f"must be {'above' if above else 'at least'} {low:g}, not {text}"
            raise argparse.ArgumentTypeError(msg)
        return value

    return parse


def cell(value: object, spec: str) -> str:
    """``value`` by ``spec`` (``>8.2f``); a text or NaN (``-``) only aligned as wide."""
    align, width = _SPEC.match(spec).groups()  # type: ignore[union-attr]
    if isinstance(value, float) and math.isnan(value):
        value = "-"
    return format(value, align + width) if isinstance(value, str) else format(value, spec)


class Table:
    """Columns ``"head spec|head spec..."`` (``"p99 ms >8.2f"``), printed joined by spaces, each
    head aligned as its spec aligns the values; :meth:`head` prints the heads over a rule."""

    def __init__(self, columns: str, indent: str = "") -> None:
        self.heads, self.specs = zip(*(c.rsplit(" ", 1) for c in columns.split("|")), strict=True)
        self.indent = indent

    def head(self, *, blank: bool = False) -> None:
        line = self.line(*self.heads)
        print(
            f"{chr(10) if blank else ''}{line}\n{self.indent}{'-' * (len(line) - len(self.indent))}"
        )

    def line(self, *values: object) -> str:
        cells = (cell(v, s) for v, s in zip(values, self.specs, strict=True))
        return self.indent + " ".join(cells)

    def row(self, *values: object) -> None:
        print(self.line(*values))
