"""What the cases share to print: the one table printer (:class:`Table`), the load cases' rows
(:func:`print_table`, :func:`print_ratios`), argument bounds and the data files in bench/data.

A cell is formatted by its spec; a text or NaN (``-``) is only aligned as wide:

>>> [cell(1.5, ">+8.2f"), cell(12345, ">8,"), cell(math.nan, ">+6.2f"), cell("", "<3")]
['   +1.50', '  12,345', '     -', '   ']

A table aligns each head as its values, over a rule as long:

>>> table = Table("name <6|p99 ms >+8.2f|n >4,", indent="  ")
>>> table.head(blank=True)
<BLANKLINE>
  name     p99 ms    n
  --------------------
>>> table.row("feed", 2.5, 1234)
  feed      +2.50 1,234

Bounds reject what is below them or not finite:

>>> at_least(1)("3"), at_least(0, float)("0")
(3, 0.0)
>>> at_least(0, float, above=True)("0")
Traceback (most recent call last):
argparse.ArgumentTypeError: must be above 0, not 0
>>> at_least(0, float)("nan")
Traceback (most recent call last):
argparse.ArgumentTypeError: must be at least 0, not nan
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.load import Row

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
        print_head(self.line(*self.heads)[len(self.indent) :], indent=self.indent, blank=blank)

    def line(self, *values: object) -> str:
        cells = (cell(v, s) for v, s in zip(values, self.specs, strict=True))
        return self.indent + " ".join(cells)

    def row(self, *values: object) -> None:
        print(self.line(*values))


def print_progress(row: Row, prefix: str = "") -> None:
    print(
        f"  {prefix}{row.endpoint:<6} {row.conns:>3} conns: {row.median('rps'):8.0f} req/s "
        f"p50 {row.median('p50'):7.2f} ms p99 {row.median('p99'):7.2f} ms "
        f"errors {sum(row.errors().values())}; per round req/s "
        f"{[round(r.rps) for r in row.rounds]} p99 {[round(r.p99, 1) for r in row.rounds]} "
        f"other cpu {[round(r.other_cpu, 2) for r in row.rounds]}"
    )


def print_head(*columns: str, indent: str = "", blank: bool = False) -> None:
    """Column heads joined by spaces, then a rule as long (``blank``: a blank line first)."""
    head = " ".join(columns)
    print(f"{chr(10) if blank else ''}{indent}{head}\n{indent}{'-' * len(head)}")


def print_table(title: str, rows: Sequence[Row]) -> None:
    """Each row's medians across its rounds, under ``title``."""
    w = max([8, *(len(row.endpoint) for row in rows)])
    print(f"\n{title}")
    table = Table(
        f"scenario <9|endpoint <{w}|conns >5|req/s >8.0f|p50 ms >8.2f|p99 ms >8.2f|errors >6|"
        "relay cpu >9.2f|gen cpu >7.2f|other cpu >9.2f"
    )
    table.head()
    for r in rows:
        medians = (r.median(key) for key in ("rps", "p50", "p99"))
        cpu = (r.median(key) for key in ("relay_cpu", "gen_cpu", "other_cpu"))
        table.row(r.scenario, r.endpoint, r.conns, *medians, sum(r.errors().values()), *cpu)
    for r in (r for r in rows if r.errors()):
        print(f"errors {r.scenario} {r.endpoint} {r.conns}: {dict(r.errors())}")


def print_ratios(
    rows: Sequence[Row],
    base: str,
    others: Sequence[str],
    group: str,
    cell: Callable[[Row, Row], str],
    extra: tuple[str, str, Callable[[Row, list[Row]], str]] | None = None,
) -> None:
    """Per row of ``base``: ``cell(row, base_row)`` for the same row of each of ``others``
    (``group`` is their column heads); ``extra``: a title, column heads and cells at the end."""
    by_key = {(r.scenario, r.endpoint, r.conns): r for r in rows}
    names = [name for name in others if any(r.scenario == name for r in rows)]
    width = max([8, *(len(row.endpoint) for row in rows)])
    titles = [f"{name + ' / ' + base:^{len(group)}}" for name in names]
    heads = [group] * len(names)
    if extra:
        titles.append(f"{extra[0]:^{len(extra[1])}}")
        heads.append(extra[1])
    print((" " * (width + 7) + "   ".join(titles)).rstrip())
    print_head(f"{'endpoint':<{width}} {'conns':>5}", "   ".join(heads))
    for ref in (r for r in rows if r.scenario == base):
        same = [by_key.get((name, ref.endpoint, ref.conns)) for name in names]
        if not any(same):
            continue
        cells = [" " * len(group) if row is None else cell(row, ref) for row in same]
        if extra:
            cells.append(extra[2](ref, [row for row in same if row is not None]))
        print(f"{ref.endpoint:<{width}} {ref.conns:>5} " + "   ".join(cells))


def print_rss(rss: Mapping[str, Mapping[str, float]]) -> None:
    print("\nRelay RSS (MB):")
    for scenario, values in rss.items():
        print(f"  {scenario:<9} " + ", ".join(f"{k} {v:.1f}" for k, v in values.items()))
