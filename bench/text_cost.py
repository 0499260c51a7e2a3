"""What the relay's text work costs on text made to be slow: every entry point of
``tests/support/text_cost.py`` fed every shape of ``tests/data/adversarial_text.json``, in a
child process per checkout (stopped after ``--limit`` seconds). docs/benchmarks.md says which
sizes each shape is measured at and how to read a cell.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.figures import Table
from bench.runner import flags
from bench.stats import median
from tests.support.text_cost import ENTRY_POINTS, growth, measure, shapes

CHILD = Path(__file__).resolve().parents[1] / "tests" / "support" / "text_cost.py"
"""Run as a file with another checkout first on the path, it measures that checkout's code."""


def _per_kib(row: dict[str, Any]) -> dict[str, Any]:
    """The row with the median of its runs in µs per KiB (a ``started`` row as it is)."""
    if "runs" in row:
        row["us_per_kib"] = median(row.pop("runs")) * 1e6 / row["size"]
    return row


def _child(checkout: Path, name: str, args: argparse.Namespace) -> tuple[list[Any], bool]:
    """The rows of entry point ``name`` measured in a child process on ``checkout``'s code,
    and whether it was stopped at ``--limit`` seconds."""
    command = [sys.executable, str(CHILD), name, args.sizes, str(args.rounds), str(args.top)]
    env = {**os.environ, "PYTHONPATH": str(checkout.resolve())}
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(command, stdout=out, env=env, cwd=checkout)
        try:
            stopped = child.wait(timeout=args.limit) != 0
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            stopped = True
        out.seek(0)
        return [_per_kib(json.loads(line)) for line in out.read().splitlines() if line], stopped


def _cell(rows: list[Any], stopped: bool, size: int) -> tuple[object, str]:
    """One checkout's cell at ``size``: the worst shape's µs/KiB and its name; ``stopped`` and
    the shape it was measuring when ``--limit`` stopped it there; NaN when not measured."""
    if stopped and rows and "started" in rows[-1] and rows[-1]["size"] == size:
        return "stopped", rows[-1]["shape"]  # the measurement that hung
    done = [r for r in rows if r["size"] == size and "started" not in r]
    return max(((r["us_per_kib"], r["shape"]) for r in done), default=(math.nan, ""))


def _table(args: argparse.Namespace, names: list[str], sizes: list[int]) -> None:
    here = Path.cwd()
    checkouts = [("before", args.before), ("after", here)] if args.before else [("this", here)]
    columns = [f"{label} µs/KiB >10.1f|(worst shape) <22" for label, _ in checkouts]
    ratio = ["after/before >13.3f"] if args.before else []
    table = Table("|".join(["entry point <26", "KiB >5", *columns, *ratio]))
    table.head()
    for turn, name in enumerate(names):
        measured: dict[str, tuple[list[Any], bool]] = {}
        for label, checkout in checkouts if turn % 2 == 0 else checkouts[::-1]:
            measured[label] = _child(checkout, name, args)
        for size in sizes:
            cells = [_cell(*measured[label], size) for label, _ in checkouts]
            row = [name, size, *(value for cell in cells for value in cell)]
            if args.before:
                before, after = (c[0] if isinstance(c[0], float) else math.nan for c in cells)
                row.append(after / before if before else math.nan)
            table.row(*row)
    print(f"stopped: the measurement of that shape passed --limit ({args.limit:.0f} s)")


def _real(paths: list[str], names: list[str], rounds: int) -> None:
    """Each entry point's µs/KiB on each real text of ``paths``."""
    texts = {Path(path).name: Path(path).read_text(encoding="utf-8") for path in paths}
    table = Table("|".join(["entry point <26", *(f"{name[:22]} >22.1f" for name in texts)]))
    print(table.line(*table.heads))
    print(table.line("", *(f"{len(t) / 1024:.0f} KiB, µs/KiB" for t in texts.values())))
    for name in names:
        cells = []
        for text in texts.values():
            runs = []
            for _ in range(rounds):
                start = time.thread_time()
                ENTRY_POINTS[name](text)
                runs.append(time.thread_time() - start)
            cells.append(median(runs) * 1e6 * 1024 / max(len(text), 1))
        print(table.line(name, *cells), flush=True)


OPTIONS = flags(
    sizes=(str, "1,64,2048", "sizes in KiB, comma-separated"),
    entry=(str, "", "only this entry point (default: all)"),
    rounds=(int, 3, "runs per figure (the median is shown; a third as many at the last size)"),
    top=(int, 3, "shapes measured at the last size besides the slow ones"),
    before=(Path, None, "another checkout, measured in turns with this one"),
    limit=(float, 120.0, "seconds one entry point may take in one checkout"),
    rows=(bool, None, "print every shape's row, not each entry point's worst"),
    growth=(bool, None, "print the growth from 4 KiB to 16 and 64 KiB instead"),
    file=(str, "", "real texts (comma-separated paths): each entry point on each, as it is"),
)


def run(args: argparse.Namespace) -> int:
    names = [args.entry] if args.entry else list(ENTRY_POINTS)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.file:
        _real(args.file.split(","), names, args.rounds)
    elif args.growth:
        for name in names:
            for shape in shapes():
                ratio = max(growth(ENTRY_POINTS[name], shape, 4096).values())
                print(f"{name:26} {shape.name:24} {ratio:6.2f}", flush=True)
    elif args.rows:
        for name in names:
            for row in map(_per_kib, measure(name, sizes, args.rounds, args.top)):
                if "started" not in row:
                    shape, size, us = row["shape"], row["size"], row["us_per_kib"]
                    print(f"{name:26} {shape:24} {size:6} KiB {us:10.1f} µs/KiB", flush=True)
    else:
        _table(args, names, sizes)
    return 0
