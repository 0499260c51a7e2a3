"""What the prompt keeps of a window against the original relay's prompt (each OCR text cut at
200 characters), on the windows of ``tests/support/prompt_corpus.py``, and what it costs to
build. docs/benchmarks.md says how to read the figures and targets.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial

from actors.agent.core.prompt import SCREEN_BUDGET, build_prompt, fingerprint
from actors.core.bodies import sense_input
from actors.core.records import SenseRecord
from actors.core.window import TickWindow, build_context_window
from bench.figures import Table
from bench.runner import UsageError, arg, flags
from bench.stats import best_us, median
from bench.tick_cost import sense_bodies
from tests.support import prompt_corpus as corpus
from tests.support.prompt_corpus import Measure, cut_prompt, measure

TARGET_INPUT_SHARE, TARGET_LENGTH_RATIO = 0.99, 1.2
COST_CALLS = 200  # calls per timed run

PROMPTS: dict[str, Callable[..., str]] = {"cut": cut_prompt, "budget": build_prompt}


@dataclass(frozen=True, slots=True)
class Totals:
    cases: int
    expected: int
    expected_kept: int
    share: float
    mean_length: float

    @classmethod
    def of(cls, measures: Sequence[Measure]) -> Totals:
        kept = sum(len(m.expected_kept) for m in measures)
        words_in = sum(m.words_in for m in measures)
        return cls(
            len(measures), kept + sum(len(m.expected_lost) for m in measures), kept,
            sum(m.words_kept for m in measures) / words_in if words_in else 1.0,
            statistics.fmean(m.length for m in measures),
        )  # fmt: skip

    def cells(self) -> tuple[str, float, float]:
        """The values of the columns ``expect``, ``words`` and ``length``."""
        return f"{self.expected_kept}/{self.expected}", self.share, self.mean_length


def tick_us(window: TickWindow, now_ms: int, *, new_texts: int, fingerprinted: bool) -> float:
    """µs to build the prompt of ``window`` (after its fingerprint if ``fingerprinted``) when
    its ``new_texts`` newest OCR texts are ones the relay has not read before: each call gets
    copies of them (with a line of spaces more: the same lines), which it has never seen."""
    kept, renewed = window.screen[:-new_texts], window.screen[-new_texts:]
    calls = range(1, 5 * COST_CALLS + 1)
    screens = [kept + tuple(replace(e, ocr=f"{e.ocr}\n{' ' * n}") for e in renewed) for n in calls]
    copies = iter([replace(window, screen=screen) for screen in screens])  # before the clock starts

    def tick() -> None:
        copy = next(copies)
        if fingerprinted:
            fingerprint(copy)
        build_prompt(copy, now_ms=now_ms)

    return best_us(tick, number=COST_CALLS)


TOTALS = "expect >7|words >6.1%|length >6.0f"


def print_rows(rows: Sequence[tuple[str, Totals, Totals]]) -> None:
    width = max(len(label) for label, _, _ in rows)
    print(" " * (width + 7) + f"{'cut':^21}   {'budget':^21}")
    table = Table(f" <{width}|cases >5|{TOTALS}| >1|{TOTALS}|budget/cut >10.2f")
    table.head()
    for label, cut, budget in rows:
        ratio = budget.mean_length / cut.mean_length
        table.row(label, cut.cases, *cut.cells(), "", *budget.cells(), ratio)


def window_costs(window: TickWindow, now_ms: int) -> tuple[float, float, float]:
    """µs to build the cut prompt of ``window``, its budget prompt when every text is new, and
    a tick's work (the fingerprint, then the budget prompt) after one new text."""
    return (
        best_us(partial(cut_prompt, window, now_ms=now_ms), COST_CALLS),
        tick_us(window, now_ms, new_texts=len(window.screen), fingerprinted=False),
        tick_us(window, now_ms, new_texts=1, fingerprinted=True),
    )


def print_costs(cases: Sequence[corpus.Case], windows: dict[str, TickWindow]) -> None:
    print("\ncost per window, µs (median over the cases of the best of 5 runs):")
    labels = ("cut: prompt", "budget: prompt, every text new", "budget: tick after one new text")
    per_case = [window_costs(windows[c.name], corpus.tick_ms(c)) for c in cases]
    for label, values in zip(labels, zip(*per_case, strict=True), strict=True):
        print(f"  {label:<31} {median(values):>7.1f}   (max {max(values):.1f})")
    print("  (a tick: the fingerprint, then the prompt, of a window whose newest text is new)")
    # the window of bench.bench_costs' tick: 10 events of 4 KiB of OCR each
    now_ms = corpus.T0_MS
    bodies = enumerate(sense_bodies(now_ms), 1)
    sense = [SenseRecord.stored(n, b["ts"], sense_input(b)) for n, b in bodies]
    heavy = build_context_window([], sense, now_ms=now_ms, max_age_ms=corpus.MAX_AGE_MS)
    cut_us, all_new, one_new = window_costs(heavy, now_ms)
    kib = sum(len(e.ocr) for e in heavy.screen) // 1024
    print(
        f"  heavy window ({len(heavy.screen)} events, {kib} KiB of OCR): cut {cut_us:.0f}, "
        f"every text new {all_new:.0f}, tick after one new text {one_new:.0f}"
    )


OPTIONS = [
    *flags(cases=(bool, None, "a row per case, with lost words")),
    arg("--show", metavar="NAME", help="print both prompts of one case"),
    arg(
        "--budgets",
        metavar="N,N,...",
        help=f"also the budget prompt with these budgets (the relay's is {SCREEN_BUDGET})",
    ),
]


def run(args: argparse.Namespace) -> int:
    cases = corpus.cases()
    windows = {case.name: corpus.case_window(case) for case in cases}
    if args.show:
        case = next((c for c in cases if c.name == args.show), None)
        if case is None:
            raise UsageError(f"no case {args.show!r}; cases: {', '.join(c.name for c in cases)}")
        for name, build in PROMPTS.items():
            print(f"==== {name} ({case.name}) ====")
            print(build(windows[case.name], now_ms=corpus.tick_ms(case)))
        return 0

    def measured(build: Callable[..., str], case: corpus.Case, **options: int) -> Measure:
        window = windows[case.name]
        return measure(case, window, build(window, now_ms=corpus.tick_ms(case), **options))

    measures = {n: {c.name: measured(build, c) for c in cases} for n, build in PROMPTS.items()}
    print(
        f"sinain-relay prompt bench: {len(cases)} windows of the prompt corpus\nexpect: expected "
        "words kept; words: share of the distinct input words (4+ letters) kept; length: mean "
        "prompt characters\n"
    )

    def row(label: str, chosen: Sequence[corpus.Case]) -> tuple[str, Totals, Totals]:
        cut, budget = (Totals.of([measures[n][c.name] for c in chosen]) for n in PROMPTS)
        return label, cut, budget

    rows = [row(s, chosen) for s in corpus.SHAPES if (chosen := [c for c in cases if c.shape == s])]
    for label, busy in (("small windows", False), ("busy windows", True)):
        rows.append(row(label, [c for c in cases if c.busy is busy]))
    rows.append(row("all", cases))
    print_rows(rows)
    if args.cases:
        print()
        print_rows([row(c.name, [c]) for c in cases])
        print()
        for case in cases:
            for name in PROMPTS:
                if lost := measures[name][case.name].expected_lost:
                    print(f"{case.name}: {name} lost {', '.join(lost)}")
    print_costs(cases, windows)
    _, cut_all, budget_all = rows[-1]
    if args.budgets:
        print("\nscreen budgets (the budget prompt, all cases):")
        table = Table(f"budget >8|{TOTALS}|budget/cut >10.2f", indent="  ")
        table.head()
        for budget in (int(b) for b in args.budgets.split(",")):
            totals = Totals.of([measured(build_prompt, c, screen_budget=budget) for c in cases])
            table.row(budget, *totals.cells(), totals.mean_length / cut_all.mean_length)
    ratio = budget_all.mean_length / cut_all.mean_length
    print("\ntargets (the budget prompt):")
    print(f"  every expected word   {budget_all.expected_kept}/{budget_all.expected}")
    print(f"  input words >= {TARGET_INPUT_SHARE:.0%}     {budget_all.share:.1%}")
    print(f"  length <= {TARGET_LENGTH_RATIO:g} x cut     {ratio:.2f}")
    return 0
