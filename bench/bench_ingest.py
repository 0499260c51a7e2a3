"""Ingestion under load, ``POST /feed`` and ``POST /sense`` while the fake LLM answers, answers
late, crashes or hangs (or overlays listen); docs/benchmarks.md lists the scenarios."""

from __future__ import annotations

import argparse

from bench import load
from bench.figures import print_ratios
from bench.runner import arg, choose
from bench.stats import ratio

FAULT_CONNECTIONS = (16, 64)
SETUPS = (
    load.Setup("healthy"),
    load.Setup("llm-slow", "slow", conns=FAULT_CONNECTIONS, delay_s=3.0),
    load.Setup("llm-crash", conns=FAULT_CONNECTIONS, crash_loop=True),
    load.Setup("llm-hang", "hang", conns=FAULT_CONNECTIONS),
    load.Setup("overlay", overlays=10),
)
NAMES = tuple(setup.name for setup in SETUPS)
FAULTS = tuple(setup.name for setup in SETUPS if setup.mode != "ok" or setup.crash_loop)
FAULT_P99_TARGET = 1.1
"""Ingestion p99 with the LLM failing: at most this multiple of the healthy one."""


def fault_cells(row: load.Row, healthy: load.Row) -> str:
    rps, p99 = (ratio(row.median(key), healthy.median(key)) for key in ("rps", "p99"))
    return f"{rps:>6.2f} {p99:>6.2f} {'pass' if p99 <= FAULT_P99_TARGET else 'FAIL':>6}"


def overlay_cells(row: load.Row, healthy: load.Row) -> str:
    rps, p99, base_rps, base_p99 = (r.median(a) for r in (row, healthy) for a in ("rps", "p99"))
    ratios = f"{ratio(rps, base_rps):>6.2f} {ratio(p99, base_p99):>6.2f}"
    return f"{base_rps:>8.0f} {base_p99:>7.2f} {rps:>8.0f} {p99:>7.2f} {ratios}"


OPTIONS = [
    *load.row_options("1 s x 1 round"),
    arg("--scenarios", help=f"comma-separated, from {','.join(NAMES)} (default all)"),
]


def run(args: argparse.Namespace) -> int:
    load.rows_args(args)
    setups = [s for s in SETUPS if s.name in choose(args.scenarios, NAMES)]
    print(load.header("ingest bench", args, f"; scenarios {','.join(s.name for s in setups)}"))
    title = "Medians across rounds (cpu = cores busy; other = rest of machine; wrk's p50/p99):"
    rows, rss = load.run_setups(setups, args, title)
    if "healthy" in rss and set(FAULTS) & set(rss):
        print(f"\nLLM faults (req/s, p99 over healthy's; pass: p99 <= {FAULT_P99_TARGET:g} x):")
        print_ratios(rows, "healthy", FAULTS, f"{'req/s':>6} {'p99':>6} {'target':>6}", fault_cells)
    if "healthy" in rss and "overlay" in rss:
        print("\nOverlay sockets vs none (req/s and p99 ms: healthy, 10 sockets, their ratios):")
        heads = f"{'req/s':>8} {'p99':>7} {'req/s':>8} {'p99':>7} {'req/s':>6} {'p99':>6}"
        print_ratios(rows, "healthy", ("overlay",), heads, overlay_cells)
    return 0
