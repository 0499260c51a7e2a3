"""What the prompt keeps of a window, against the original relay's, on the prompt corpus.

Run from the repository root::

    python -m bench.bench_prompt              # the figures, per shape and in all
    python -m bench.bench_prompt --cases      # and a row per case, with the words it lost
    python -m bench.bench_prompt --show NAME  # both prompts of one case
    python -m bench.bench_prompt --budgets 600,800,1000   # the budget prompt with others

For each case of :mod:`bench.prompt_corpus` it builds the window a tick would read, then two
prompts: the **cut** one, the original relay's (each OCR text cut at 200 characters, its
newlines made spaces; the rest of the prompt is today's), and the **budget** one, today's
(:func:`actors.core.prompt.build_prompt`: one budget for the screen section). For each it
prints:

- **expected**: the case's expected words found (case aside) in the prompt's window part
  (from the active app to the answer's instructions, so that the instructions' own words do
  not count), n/total;
- **input words**: the share of the distinct words of 4+ letters (case-folded) of the
  window's texts (OCR, window and observation titles, narratives, transcripts, app names)
  found among the words of the prompt's window part;
- **length**: the prompt's mean length in characters, and the budget one's against the cut
  one's;
- **cost**: building a prompt (and the budget one's fingerprint), in µs per window: for each
  case the
  best of five runs, then the median over the cases. The budget prompt reads each OCR text once
  and remembers its lines while it stays in the window, and a tick builds the fingerprint and
  then the prompt from the same texts: its cost is given for a window whose every text is new
  to it, and for a tick (fingerprint, then prompt) after one new text, the usual case; and the
  same for the heavy window of ``bench.bench_costs``' tick (10 events of 4 KiB of OCR).

Targets (not asserted): every expected word kept, 99 % of the input words, a mean length at
most 1.2 times the cut one's.
"""

from __future__ import annotations

import argparse
import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial

from actors.core.bodies import sense_input
from actors.core.prompt import (
    ACTIVE_APP,
    AGE,
    ANSWER_HEADER,
    SCREEN_BUDGET,
    build_prompt,
    fingerprint,
    prompt_with_screen,
    screen_line,
)
from actors.core.records import SenseEvent
from actors.core.window import ContextWindow, build_context_window
from bench.bench_costs import sense_bodies
from bench.harness import best_us
from bench.load import print_head
from bench.prompt_corpus import (
    MAX_AGE_MS,
    SHAPES,
    T0_MS,
    Case,
    case_window,
    cases,
    input_texts,
    tick_ms,
)

CUT_OCR_CHARS = 200
"""The original relay's cut: OCR characters per screen event."""
WORD = re.compile(r"[^\W\d_]{4,}")
"""A word: four letters or more (any script), digits and underscores splitting words."""
TARGET_INPUT_SHARE = 0.99
TARGET_LENGTH_RATIO = 1.2


def cut_prompt(ctx: ContextWindow, *, now_ms: int) -> str:
    """The original relay's prompt: every OCR text cut at :data:`CUT_OCR_CHARS` characters."""
    lines = (
        AGE.format(seconds=max(0, round((now_ms - e.received_at) / 1000)))
        + screen_line(e, e.ocr.replace("\n", " ")[:CUT_OCR_CHARS])
        for e in reversed(ctx.screen)
    )
    return prompt_with_screen(ctx, "\n".join(lines), now_ms=now_ms)


def budget_prompt(ctx: ContextWindow, *, now_ms: int) -> str:
    return build_prompt(ctx, now_ms=now_ms)


PROMPTS: dict[str, Callable[..., str]] = {"cut": cut_prompt, "budget": budget_prompt}


def window_part(prompt: str) -> str:
    """The prompt from the active app to the answer's instructions."""
    start = prompt.index(ACTIVE_APP)
    return prompt[start : prompt.index(ANSWER_HEADER, start)]


def words(texts: Iterable[str]) -> set[str]:
    return {w.casefold() for text in texts for w in WORD.findall(text)}


@dataclass(frozen=True, slots=True)
class Measure:
    """One prompt of one case."""

    expected_kept: tuple[str, ...]
    expected_lost: tuple[str, ...]
    words_in: int
    words_kept: int
    length: int


def measure(case: Case, window: ContextWindow, prompt: str) -> Measure:
    part = window_part(prompt)
    folded = part.casefold()
    kept = tuple(w for w in case.expected if w.casefold() in folded)
    lost = tuple(w for w in case.expected if w.casefold() not in folded)
    given = words(input_texts(window))
    shown = words([part])
    return Measure(kept, lost, len(given), len(given & shown), len(prompt))


@dataclass(frozen=True, slots=True)
class Totals:
    cases: int
    expected: int
    expected_kept: int
    words_in: int
    words_kept: int
    mean_length: float

    @classmethod
    def of(cls, measures: Sequence[Measure]) -> Totals:
        return cls(
            cases=len(measures),
            expected=sum(len(m.expected_kept) + len(m.expected_lost) for m in measures),
            expected_kept=sum(len(m.expected_kept) for m in measures),
            words_in=sum(m.words_in for m in measures),
            words_kept=sum(m.words_kept for m in measures),
            mean_length=statistics.fmean(m.length for m in measures),
        )

    @property
    def share(self) -> float:
        return self.words_kept / self.words_in if self.words_in else 1.0

    def cells(self) -> str:
        expected = f"{self.expected_kept}/{self.expected}"
        return f"{expected:>7} {self.share:>6.1%} {self.mean_length:>6.0f}"


COST_CALLS = 200
"""Calls per timed run."""


def cost_us(build: Callable[[], object]) -> float:
    return best_us(build, number=COST_CALLS)


def tick_us(window: ContextWindow, now_ms: int, *, new_texts: int, fingerprinted: bool) -> float:
    """µs to build the prompt of ``window`` (after its fingerprint if ``fingerprinted``) when
    its ``new_texts`` newest OCR texts are ones the relay has not read before: each call gets
    copies of them (with a line of spaces more: the same lines), which it has never seen."""

    kept, renewed = window.screen[:-new_texts], window.screen[-new_texts:]

    def fresh(n: int) -> ContextWindow:
        copies = tuple(replace(e, ocr=f"{e.ocr}\n{' ' * n}") for e in renewed)
        return replace(window, screen=kept + copies)

    copies = iter([fresh(n) for n in range(1, 5 * COST_CALLS + 1)])

    def tick() -> None:
        copy = next(copies)
        if fingerprinted:
            fingerprint(copy)
        build_prompt(copy, now_ms=now_ms)

    return best_us(tick, number=COST_CALLS)


def heavy_window() -> tuple[ContextWindow, int]:
    """The window of ``bench.bench_costs``' tick: 10 events of 4 KiB of OCR each."""
    now_ms = T0_MS
    bodies = sense_bodies(now_ms)
    sense = [SenseEvent.stored(n, b["ts"], sense_input(b)) for n, b in enumerate(bodies, 1)]
    window = build_context_window([], sense, now_ms=now_ms, max_age_ms=MAX_AGE_MS)
    return window, now_ms


def print_rows(rows: Sequence[tuple[str, Totals, Totals]]) -> None:
    width = max(len(label) for label, _, _ in rows)
    print(" " * (width + 7) + f"{'cut':^21}   {'budget':^21}")
    print_head(
        f"{'':<{width}} {'cases':>5}",
        f"{'expect':>7} {'words':>6} {'length':>6}   {'expect':>7} {'words':>6} {'length':>6}",
        f"{'budget/cut':>10}",
    )
    for label, cut, budget in rows:
        ratio = budget.mean_length / cut.mean_length
        print(f"{label:<{width}} {cut.cases:>5} {cut.cells()}   {budget.cells()} {ratio:>10.2f}")


def print_budgets(
    corpus: Sequence[Case],
    windows: dict[str, ContextWindow],
    cut: Totals,
    budgets: Sequence[int],
) -> None:
    """The budget prompt with each of ``budgets`` as its screen budget, against the cut one."""
    print("\nscreen budgets (the budget prompt, all cases):")
    print_head(
        f"{'budget':>8} {'expect':>7} {'words':>6} {'length':>6} {'budget/cut':>10}", indent="  "
    )
    for budget in budgets:
        totals = Totals.of(
            [
                measure(
                    c,
                    windows[c.name],
                    build_prompt(windows[c.name], now_ms=tick_ms(c), screen_budget=budget),
                )
                for c in corpus
            ]
        )
        ratio = totals.mean_length / cut.mean_length
        print(f"  {budget:>8} {totals.cells()} {ratio:>10.2f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", action="store_true", help="a row per case, with lost words")
    parser.add_argument("--show", metavar="NAME", help="print both prompts of one case")
    parser.add_argument(
        "--budgets",
        metavar="N,N,...",
        help=f"also the budget prompt with these budgets (the relay's is {SCREEN_BUDGET})",
    )
    args = parser.parse_args(argv)
    corpus = cases()
    windows = {case.name: case_window(case) for case in corpus}
    if args.show:
        case = next((c for c in corpus if c.name == args.show), None)
        if case is None:
            parser.error(f"no case {args.show!r}; cases: {', '.join(c.name for c in corpus)}")
        for name, build in PROMPTS.items():
            print(f"==== {name} ({case.name}) ====")
            print(build(windows[case.name], now_ms=tick_ms(case)))
        return 0

    measures = {
        name: {
            case.name: measure(
                case, windows[case.name], build(windows[case.name], now_ms=tick_ms(case))
            )
            for case in corpus
        }
        for name, build in PROMPTS.items()
    }
    print(f"sinain-relay prompt bench: {len(corpus)} windows of the prompt corpus")
    print(
        "expect: expected words kept; words: share of the distinct input words (4+ letters) "
        "kept; length: mean prompt characters\n"
    )

    def totals(name: str, chosen: Sequence[Case]) -> Totals:
        return Totals.of([measures[name][c.name] for c in chosen])

    rows = [
        (shape, totals("cut", chosen), totals("budget", chosen))
        for shape in SHAPES
        if (chosen := [c for c in corpus if c.shape == shape])
    ]
    for label, busy in (("small windows", False), ("busy windows", True)):
        chosen = [c for c in corpus if c.busy is busy]
        rows.append((label, totals("cut", chosen), totals("budget", chosen)))
    rows.append(("all", totals("cut", corpus), totals("budget", corpus)))
    print_rows(rows)

    if args.cases:
        print()
        print_rows([(c.name, totals("cut", [c]), totals("budget", [c])) for c in corpus])
        print()
        for case in corpus:
            for name in PROMPTS:
                lost = measures[name][case.name].expected_lost
                if lost:
                    print(f"{case.name}: {name} lost {', '.join(lost)}")

    print("\ncost per window, µs (median over the cases of the best of 5 runs):")
    costs = {
        "cut: prompt": [
            cost_us(partial(cut_prompt, windows[c.name], now_ms=tick_ms(c))) for c in corpus
        ],
        "budget: prompt, every text new": [
            tick_us(
                windows[c.name],
                tick_ms(c),
                new_texts=len(windows[c.name].screen),
                fingerprinted=False,
            )
            for c in corpus
        ],
        "budget: tick after one new text": [
            tick_us(windows[c.name], tick_ms(c), new_texts=1, fingerprinted=True) for c in corpus
        ],
    }
    width = max(len(label) for label in costs)
    for label, values in costs.items():
        print(f"  {label:<{width}} {statistics.median(values):>7.1f}   (max {max(values):.1f})")
    print("  (a tick: the fingerprint, then the prompt, of a window whose newest text is new)")
    heavy, now_ms = heavy_window()
    events, kib = len(heavy.screen), sum(len(e.ocr) for e in heavy.screen) // 1024
    cut_us = cost_us(partial(cut_prompt, heavy, now_ms=now_ms))
    all_new = tick_us(heavy, now_ms, new_texts=events, fingerprinted=False)
    one_new = tick_us(heavy, now_ms, new_texts=1, fingerprinted=True)
    print(
        f"  heavy window ({events} events, {kib} KiB of OCR): cut {cut_us:.0f}, "
        f"every text new {all_new:.0f}, tick after one new text {one_new:.0f}"
    )

    cut_all, budget_all = totals("cut", corpus), totals("budget", corpus)
    if args.budgets:
        print_budgets(corpus, windows, cut_all, [int(b) for b in args.budgets.split(",")])
    ratio = budget_all.mean_length / cut_all.mean_length
    print("\ntargets (the budget prompt):")
    print(f"  every expected word   {budget_all.expected_kept}/{budget_all.expected}")
    print(f"  input words >= {TARGET_INPUT_SHARE:.0%}     {budget_all.share:.1%}")
    print(f"  length <= {TARGET_LENGTH_RATIO:g} x cut     {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
