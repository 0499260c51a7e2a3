"""What the relay's text work costs on text made to be slow: every entry point that reads a
person's screen or speech, fed every shape of ``bench/data/adversarial_text.json``.

Run from the repository root::

    python -m bench.text_cost                          # each entry point's worst µs/KiB
    python -m bench.text_cost --before /tmp/old        # before and after, in turns
    python -m bench.text_cost --entry redaction --rows # every shape's row
    python -m bench.text_cost --growth                 # cost per KiB at 4x, 16x a size / at 1x
    python -m bench.text_cost --file bench/data/minified_trace.txt   # real text, as it is

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
``--rounds`` runs, µs/KiB): ``bench/data/minified_trace.txt`` is what Node.js printed for an
error in npm's minified tar bundle (a 66 KB source line, then the trace).

``tests/actors/core/test_text_cost`` checks the growth of every shape with :func:`growth`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from actors.audio.core.transcript_filter import Filters
from actors.core.change import gist
from actors.core.completion import parse_analysis
from actors.core.error_text import safe_text
from actors.core.escalation_message import error_texts
from actors.core.exclusion import ExclusionRule
from actors.core.hud_check import checked_hud, judge
from actors.core.payload_redaction import redact_payload
from actors.core.prompt import SCREEN_BUDGET, build_prompt, fingerprint
from actors.core.records import FeedRecord, SensePost, SenseRecord
from actors.core.redaction import redact
from actors.core.screen_budget import fit_screen
from actors.core.situation import detected_errors
from actors.core.stack_traces import find_stack_traces
from actors.core.text_view import view_of
from actors.core.window import build_context_window
from actors.kernel.search_index import QueryError, match_expression
from bench.harness import parser

try:
    from actors.core.answer_redaction import redacted_answer
except ImportError:  # a checkout from before the model's words were redacted (--before)
    redacted_answer = None  # type: ignore[assignment]
from config.secrets import remember_secret

SHAPES_FILE = Path(__file__).parent / "data" / "adversarial_text.json"
NOW_MS = 1_000_000
EXCLUDED_TITLES = ExclusionRule.of(titles=r"(?i)bank|1password|private browsing|\binvoice\b")
"""A rule such as a user writes: a few words, case-insensitive."""
BENCH_SECRET = "text-cost-configured-secret-0123456789"
"""A configured secret shaped like no vendor's key, which error texts are scrubbed of."""


@dataclass(frozen=True, slots=True)
class Shape:
    """Text of one shape: ``head``, then ``unit`` again and again, then ``tail``."""

    name: str
    unit: str
    head: str = ""
    tail: str = ""
    slow: bool = False
    """A shape on which a scan that backtracks or starts again at each match takes seconds or
    more at 2 MiB: measured at the largest size always."""

    def text(self, size: int, salt: int = 0) -> str:
        """About ``size`` characters of this shape, after a line of its own holding ``salt``
        (so that no cache answers a second run)."""
        first = f"{salt}\n{self.head}"
        count = max(1, -(-(size - len(first) - len(self.tail)) // len(self.unit)))
        return first + self.unit * count + self.tail


def shapes() -> list[Shape]:
    """The shapes of :data:`SHAPES_FILE`."""
    data = json.loads(SHAPES_FILE.read_text(encoding="utf-8"))
    return [Shape(**shape) for shape in data["shapes"]]


def _sense_event(text: str) -> SenseRecord:
    payload = {"type": "text", "ts": 1.0, "ocr": text, "meta": {"app": "Code"}}
    payload["meta"] = {"app": "Code", "windowTitle": text[-300:]}
    return SenseRecord(
        id=1,
        received_at=NOW_MS - 1_000,
        type="text",
        ts=1.0,
        ocr=text,
        app="Code",
        ssim=None,
        payload=payload,
    )


def _tick(text: str) -> None:
    """What a tick reads of a window whose screen event and transcript hold ``text``."""
    feed = [FeedRecord(id=1, text=text, priority="normal", ts=NOW_MS - 500, source="audio")]
    window = build_context_window(feed, [_sense_event(text)], now_ms=NOW_MS, max_age_ms=120_000)
    build_prompt(window, now_ms=NOW_MS)
    fingerprint(window)
    gist(window)


def _escalation(text: str) -> None:
    """What an escalation message and SITUATION.md read of a window's screen."""
    window = build_context_window([], [_sense_event(text)], now_ms=NOW_MS, max_age_ms=120_000)
    detected_errors(window)
    error_texts(window)


def _answer(text: str) -> None:
    """What the relay reads of a model's answer: the analysis, the hud check, the redaction
    of its words (where the checkout has it), and the check of a hud as long as the answer."""
    analysis = checked_hud(parse_analysis(text), text).analysis
    if redacted_answer is not None:
        redacted_answer(analysis)
    judge(text)


def _error_text(text: str) -> None:
    """An error text that quotes ``text`` (a server echoing a prompt back), made safe to show,
    with a configured secret to look for."""
    remember_secret(BENCH_SECRET)
    safe_text(text)


def _transcript(text: str) -> None:
    """The transcript filters on one system-audio text, then a microphone text like it."""
    filters = Filters()
    filters.check("system", text, False, NOW_MS)
    filters.check("mic", text + " again", False, NOW_MS)


def _search(text: str) -> None:
    with contextlib.suppress(QueryError):  # too long, or no word: refused before any work
        match_expression(text)


def _excluded(text: str) -> None:
    payload: dict[str, Any] = {"meta": {"windowTitle": text}, "observation": {"subtitle": text}}
    event = SensePost(type="text", ts=1.0, ocr="", app="Code", ssim=None, payload=payload)
    EXCLUDED_TITLES.reason(event)


ENTRY_POINTS: dict[str, Callable[[str], object]] = {
    "redaction": redact,
    "payload redaction": lambda text: redact_payload(
        {"type": "text", "ts": 1, "ocr": text, "meta": {"windowTitle": text[-300:]}}
    ),
    "text view": view_of,
    "stack traces": find_stack_traces,
    "escalation and situation": _escalation,
    "screen budget": lambda text: fit_screen([text], SCREEN_BUDGET),
    "tick window and prompt": _tick,
    "answer and hud check": _answer,
    "transcript filters": _transcript,
    "exclusion": _excluded,
    "search query": _search,
    "error text": _error_text,
}
"""Every entry point of the relay's text work, as a function of one text."""


def cost_s(entry: Callable[[str], object], shape: Shape, size: int, runs: int = 1) -> float:
    """Thread CPU seconds of ``runs`` calls of ``entry`` on ``size`` characters of ``shape``
    (a new text each call, made before the clock starts)."""
    texts = [shape.text(size, salt) for salt in range(runs)]
    start = time.thread_time()
    for text in texts:
        entry(text)
    return time.thread_time() - start


def growth(
    entry: Callable[[str], object], shape: Shape, size: int, factors: tuple[int, ...] = (4, 16)
) -> dict[int, float]:
    """How much more one character costs at each of ``factors`` times ``size`` than at ``size``:
    the cost of one call at the larger size over that of as many calls at ``size`` as make the
    same length (about 1 for linear work, the factor for quadratic work). The best of up to
    three tries: a try in which no factor grew past 2 stands; otherwise the machine may have
    paused in it, and the next try is made."""
    largest = max(factors)
    best: dict[int, float] = {}
    for _ in range(3):
        base = cost_s(entry, shape, size, runs=largest)
        for factor in factors:
            ratio = cost_s(entry, shape, size * factor, runs=largest // factor) / max(base, 1e-6)
            best[factor] = min(best.get(factor, ratio), ratio)
        if max(best.values()) <= 2:
            break
    return best


def _measure(name: str, sizes: list[int], rounds: int, top: int) -> Iterator[dict[str, Any]]:
    """Rows ``{shape, size, us_per_kib}`` of entry point ``name``: every shape at the sizes
    before the last, then the ``top`` slowest at the second-to-last size (and the ``slow``
    ones) at the last; before each, ``{shape, size, started}``, so that whoever stops a
    measurement that takes too long knows which it was."""
    entry = ENTRY_POINTS[name]
    kinds = shapes()
    slowest: dict[str, float] = {}
    for shape in kinds:
        for size in sizes[:-1]:
            yield {"shape": shape.name, "size": size, "started": True}
            runs = [cost_s(entry, shape, size * 1024) for _ in range(rounds)]
            per_kib = statistics.median(runs) * 1e6 / size
            slowest[shape.name] = per_kib
            yield {"shape": shape.name, "size": size, "us_per_kib": per_kib}
    ranked = sorted(slowest, key=lambda shape: -slowest[shape])[:top]
    for shape in kinds:
        if shape.name in ranked or shape.slow:
            yield {"shape": shape.name, "size": sizes[-1], "started": True}
            runs = [cost_s(entry, shape, sizes[-1] * 1024) for _ in range(max(1, rounds // 3))]
            per_kib = statistics.median(runs) * 1e6 / sizes[-1]
            yield {"shape": shape.name, "size": sizes[-1], "us_per_kib": per_kib}


def _child(checkout: Path, name: str, args: argparse.Namespace) -> tuple[list[Any], bool]:
    """The rows of entry point ``name`` measured in a child process on ``checkout``'s code,
    and whether it was stopped at ``--limit`` seconds."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", name]
    command += ["--sizes", args.sizes, "--rounds", str(args.rounds), "--top", str(args.top)]
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
        return [json.loads(line) for line in out.read().splitlines() if line], stopped


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
            cells.append(f"{statistics.median(runs) * 1e6 * 1024 / max(len(text), 1):22.1f}")
        print(f"{name:26} " + " ".join(cells), flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parser(
        __doc__,
        sizes=(str, "1,64,2048", "sizes in KiB, comma-separated"),
        entry=(str, "", "only this entry point (default: all)"),
        rounds=(int, 3, "runs per figure (the median is shown; a third as many at the last size)"),
        top=(int, 3, "shapes measured at the last size besides the slow ones"),
        before=(Path, None, "another checkout, measured in turns with this one"),
        limit=(float, 120.0, "seconds one entry point may take in one checkout"),
        rows=(bool, None, "print every shape's row, not each entry point's worst"),
        growth=(bool, None, "print the growth from 4 KiB to 16 and 64 KiB instead"),
        file=(str, "", "real texts (comma-separated paths): each entry point on each, as it is"),
        child=(str, "", "(internal) measure this entry point, one JSON row a line"),
    ).parse_args(argv)
    names = [args.entry] if args.entry else list(ENTRY_POINTS)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.child:
        for row in _measure(args.child, sizes, args.rounds, args.top):
            print(json.dumps(row), flush=True)
    elif args.file:
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


if __name__ == "__main__":
    raise SystemExit(main())
