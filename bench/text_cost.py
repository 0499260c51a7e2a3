"""What the relay's text work costs on text made to be slow: every entry point that reads a
person's screen or speech, fed every shape of ``bench/data/adversarial_text.json``.

Run from the repository root::

    python -m bench.text_cost                         # µs per KiB at 1 KiB, 64 KiB and 2 MiB
    python -m bench.text_cost --sizes 4,64 --entry redaction
    python -m bench.text_cost --growth                # cost per KiB at 4x, 16x a size / at 1x

Each row is an entry point and a shape; the figures are the median of ``--rounds`` runs of
thread CPU time (what the one thread spent, whatever else the machine does). Linear work
costs about the same per KiB at every size; the ``worst`` line names the row whose cost per
KiB grew the most from the smallest size to the largest. ``tests/actors/core/test_text_cost``
checks the growth of every row with :func:`growth`.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from actors.core.change import gist
from actors.core.completion import parse_analysis
from actors.core.escalation_message import error_texts
from actors.core.exclusion import ExclusionRule
from actors.core.hud_check import checked_hud, judge
from actors.core.payload_redaction import redact_payload
from actors.core.prompt import SCREEN_BUDGET, build_prompt, fingerprint
from actors.core.records import FeedItem, SenseEvent, SenseInput
from actors.core.redaction import redact
from actors.core.screen_budget import fit_screen
from actors.core.situation import detected_errors
from actors.core.stack_traces import find_stack_traces
from actors.core.text_view import view_of
from actors.core.transcript_filter import Filters
from actors.core.window import build_context_window
from actors.kernel.search_index import QueryError, match_expression
from bench.harness import parser

SHAPES_FILE = Path(__file__).parent / "data" / "adversarial_text.json"
NOW_MS = 1_000_000
EXCLUDED_TITLES = ExclusionRule.of(titles=r"(?i)bank|1password|private browsing|\binvoice\b")
"""A rule such as a user writes: a few words, case-insensitive."""


@dataclass(frozen=True, slots=True)
class Shape:
    """Text of one shape: ``head``, then ``unit`` again and again, then ``tail``."""

    name: str
    unit: str
    head: str = ""
    tail: str = ""

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


def _sense_event(text: str) -> SenseEvent:
    payload = {"type": "text", "ts": 1.0, "ocr": text, "meta": {"app": "Code"}}
    payload["meta"] = {"app": "Code", "windowTitle": text[-300:]}
    return SenseEvent(
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
    feed = [FeedItem(id=1, text=text, priority="normal", ts=NOW_MS - 500, source="audio")]
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
    """What the relay reads of a model's answer: the analysis, then the hud check."""
    analysis = parse_analysis(text)
    checked_hud(analysis, text)
    judge(text)


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
    event = SenseInput(type="text", ts=1.0, ocr="", app="Code", ssim=None, payload=payload)
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


def _rows(names: list[str], wanted: list[str]) -> Iterator[tuple[str, Shape]]:
    for name in names:
        for shape in shapes():
            if not wanted or shape.name in wanted:
                yield name, shape


def main(argv: list[str] | None = None) -> int:
    args = parser(
        __doc__,
        sizes=(str, "1,64,2048", "sizes in KiB, comma-separated"),
        entry=(str, "", "only this entry point (default: all)"),
        shape=(str, "", "only these shapes, comma-separated (default: all)"),
        rounds=(int, 3, "runs per figure (the median is shown)"),
        growth=(bool, None, "print the growth from 4 KiB to 16 and 64 KiB instead"),
    ).parse_args(argv)
    names = [args.entry] if args.entry else list(ENTRY_POINTS)
    wanted = [s for s in args.shape.split(",") if s]
    if args.growth:
        worst = ("", "", 0.0)
        for name, shape in _rows(names, wanted):
            ratio = max(growth(ENTRY_POINTS[name], shape, 4096).values())
            print(f"{name:26} {shape.name:24} {ratio:6.2f}", flush=True)
            worst = max(worst, (name, shape.name, ratio), key=lambda row: row[2])
        print(f"worst: {worst[0]} / {worst[1]}: {worst[2]:.2f}")
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'entry point':26} {'shape':24} " + " ".join(f"{s:>9} KiB" for s in sizes))
    print(f"{'':26} {'':24} " + " ".join(f"{'µs/KiB':>13}" for _ in sizes))
    worst = ("", "", 0.0)
    for name, shape in _rows(names, wanted):
        per_kib = []
        for size in sizes:
            runs = [cost_s(ENTRY_POINTS[name], shape, size * 1024) for _ in range(args.rounds)]
            per_kib.append(statistics.median(runs) * 1e6 / size)
        print(f"{name:26} {shape.name:24} " + " ".join(f"{v:13.1f}" for v in per_kib), flush=True)
        grew = per_kib[-1] / max(per_kib[0], 1e-3)
        worst = max(worst, (name, shape.name, grew), key=lambda row: row[2])
    print(
        f"worst growth of µs/KiB, {sizes[0]} KiB to {sizes[-1]} KiB: {worst[0]} / {worst[1]}: "
        f"{worst[2]:.1f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
