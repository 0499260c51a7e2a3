"""What the relay's text work costs on text made to be slow: every entry point that reads a
person's screen or speech, fed every shape of ``tests/data/adversarial_text.json``.

Run from the repository root::

    python -m bench text-cost                          # each entry point's worst µs/KiB
    python -m bench text-cost --before /tmp/old        # before and after, in turns
    python -m bench text-cost --entry redaction --rows # every shape's row
    python -m bench text-cost --growth                 # cost per KiB at 4x, 16x a size / at 1x
    python -m bench text-cost --file tests/data/minified_trace.txt   # real text, as it is

For each entry point, every shape is measured at the sizes before the last (1 and 64 KiB by
default), and the shapes slowest at the second-to-last size (and those marked ``slow``) at
the last (2 MiB): a cell is the median of ``--rounds`` runs of thread CPU time per KiB (what
the one thread spent, whatever else the machine does), with the shape that cost the most.
Linear work costs about the same per KiB at every size.

``--before DIR`` measures another checkout (made with ``git worktree add DIR <commit>``) in
the same run: each entry point is measured in a child process per checkout, the two taking
turns, and a child that passes ``--limit`` seconds is stopped (its cell says ``stopped`` and
names the shape it was measuring). What the other checkout lacks (the redaction of the
model's words) is left out of its measurement.

``--file`` measures each entry point on real texts instead, each as it is (the median of
``--rounds`` runs, µs/KiB): ``tests/data/minified_trace.txt`` is what Node.js printed for an
error in npm's minified tar bundle (a 66 KB source line, then the trace).

``tests/actors/core/test_text_cost`` checks the growth of every shape with :func:`growth`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.runner import flags
from bench.stats import median
from tests.support.text_cost import ENTRY_POINTS, growth, measure, shapes

CHILD = Path(__file__).resolve().parents[1] / "tests" / "support" / "text_cost.py"
"""Run as a file with another checkout first on the path, it measures that checkout's code."""


def _measure(name: str, sizes: list[int], rounds: int, top: int) -> Iterator[dict[str, Any]]:
    """Rows ``{shape, size, us_per_kib}`` (the median of the runs), measured in this process."""
    for row in measure(name, sizes, rounds, top):
        yield _per_kib(row)


def _per_kib(row: dict[str, Any]) -> dict[str, Any]:
    if "runs" not in row:
        return row
    return {
        "shape": row["shape"],
        "size": row["size"],
        "us_per_kib": median(row["runs"]) * 1e6 / row["size"],
    }


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
        rows = [_per_kib(json.loads(line)) for line in out.read().splitlines() if line]
        return rows, stopped


def _worst(rows: list[Any], size: int) -> tuple[float, str] | None:
    found = [(row["us_per_kib"], row["shape"]) for row in rows if row["size"] == size]
    return max((row for row in found if row[0] is not None), default=None)


def _cell(rows: list[Any], size: int, stopped: bool) -> tuple[str, float | None]:
    """The cell of one checkout at ``size``, and its figure when the checkout finished it."""
    last = rows[-1] if rows else None
    if stopped and last is not None and "started" in last and last["size"] == size:
        return f"{'stopped':>10} {last['shape']:22}", None  # the measurement that hung
    worst = _worst([row for row in rows if "started" not in row], size)
    if worst is None:
        return f"{'-':>10} {'':22}", None
    return f"{worst[0]:10.1f} {worst[1]:22}", worst[0]


def _table(args: argparse.Namespace, names: list[str]) -> None:
    sizes = [int(s) for s in args.sizes.split(",")]
    checkouts = [("before", args.before), ("after", Path.cwd())] if args.before else []
    checkouts = checkouts or [("this", Path.cwd())]
    heads = "".join(f"{label + ' µs/KiB':>10} {'(worst shape)':22}" for label, _ in checkouts)
    print(f"{'entry point':26} {'KiB':>5} {heads}" + ("  after/before" if args.before else ""))
    for turn, name in enumerate(names):
        measured: dict[str, tuple[list[Any], bool]] = {}
        for label, checkout in checkouts if turn % 2 == 0 else checkouts[::-1]:
            measured[label] = _child(checkout, name, args)
        for size in sizes:
            cells = {
                label: _cell(measured[label][0], size, measured[label][1]) for label, _ in checkouts
            }
            line = f"{name:26} {size:5} " + "".join(cells[label][0] for label, _ in checkouts)
            before, after = cells.get("before", ("", None))[1], cells.get("after", ("", None))[1]
            if before and after:
                line += f"  {after / before:12.3f}"
            print(line, flush=True)
    print(f"stopped: the measurement of that shape passed --limit ({args.limit:.0f} s)")


def _real(paths: list[str], names: list[str], rounds: int) -> None:
    """Each entry point's µs/KiB on each real text of ``paths``."""
    texts = {Path(path).name: Path(path).read_text(encoding="utf-8") for path in paths}
    print(f"{'entry point':26} " + " ".join(f"{name[:22]:>22}" for name in texts))
    print(
        f"{'':26} " + " ".join(f"{f'{len(t) / 1024:.0f} KiB, µs/KiB':>22}" for t in texts.values())
    )
    for name in names:
        cells = []
        for text in texts.values():
            runs = []
            for _ in range(rounds):
                start = time.thread_time()
                ENTRY_POINTS[name](text)
                runs.append(time.thread_time() - start)
            cells.append(f"{median(runs) * 1e6 * 1024 / max(len(text), 1):22.1f}")
        print(f"{name:26} " + " ".join(cells), flush=True)


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
            for row in _measure(name, sizes, args.rounds, args.top):
                if "started" in row:
                    continue
                print(
                    f"{name:26} {row['shape']:24} {row['size']:6} KiB "
                    f"{row['us_per_kib']:10.1f} µs/KiB",
                    flush=True,
                )
    else:
        _table(args, names)
    return 0
