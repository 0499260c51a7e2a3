"""Ingestion under load: ``POST /feed`` and ``POST /sense`` while the LLM is healthy or failing.

Run from the repository root::

    python -m bench.bench_ingest                  # 3 s x 3 rounds per row
    python -m bench.bench_ingest --quick          # 1 s x 1 round: a smoke run
    python -m bench.bench_ingest --scenarios healthy,llm-hang

Each scenario starts its own relay (``python run.py --log-level warning --data-dir <temp
dir>``, ``RELAY_SYNC=full``) pointed at a fake LLM on a thread of this script, ticking every
second (``AGENT_INTERVAL_MS=1000``, ``AGENT_TIMEOUT_MS=5000``), so the LLM path runs during
the measurements. ``healthy`` measures both endpoints at 1, 16 and 64 connections, the fault
scenarios at 16 and 64:

``healthy``   the fake LLM answers at once
``llm-slow``  it answers after 3 s: every tick succeeds, late; the ticks between are skipped
``llm-crash`` the LLM caller crashes in a loop: ``RELAY_FAULTS=1`` and a thread POSTs
              ``/debug/fault {"actor": "llm", "kind": "crash"}`` every 0.5 s (200: crash sent;
              503: the caller was waiting out its restart backoff); ``RELAY_MAX_RESTARTS`` is
              high enough that no supervisor escalates; it says whether the relay still runs
``llm-hang``  it never answers: every tick times out after 5 s
``overlay``   as ``healthy``, with 10 overlay WebSockets connected for the whole scenario, each
              sent every feed item (and its status and pings) and reading it as it comes

It prints each row (median req/s, p50, p99, errors, the CPU of the relay, of the generator and
of the rest of the machine; ``bench/load.py``), each relay's RSS at start and at the end,
and "LLM faults vs healthy": per endpoint and connections, each fault scenario's req/s and
p99 over healthy's, ``pass`` when that p99 is at most 1.1 x healthy's; and "overlay sockets
vs none": per endpoint and connections, healthy's and overlay's median req/s and p99 and their
ratios. It asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bench.harness import choose
from bench.load import (
    Row,
    Setup,
    header,
    parse_rows_args,
    parser_with_rows,
    print_ratios,
    print_rss,
    print_table,
    run_scenario,
)

FAULT_CONNECTIONS = (16, 64)
SETUPS = (
    Setup("healthy"),
    Setup("llm-slow", "slow", conns=FAULT_CONNECTIONS, delay_s=3.0),
    Setup("llm-crash", conns=FAULT_CONNECTIONS, crash_loop=True),
    Setup("llm-hang", "hang", conns=FAULT_CONNECTIONS),
    Setup("overlay", overlays=10),
)
NAMES = tuple(setup.name for setup in SETUPS)
FAULTS = tuple(setup.name for setup in SETUPS if setup.mode != "ok" or setup.crash_loop)
FAULT_P99_TARGET = 1.1
"""Ingestion p99 with the LLM failing: at most this multiple of the healthy one."""


def fault_cells(row: Row, healthy: Row) -> str:
    p99 = row.median("p99") / healthy.median("p99")
    verdict = "pass" if p99 <= FAULT_P99_TARGET else "FAIL"
    return f"{row.median('rps') / healthy.median('rps'):>6.2f} {p99:>6.2f} {verdict:>6}"


def overlay_cells(row: Row, healthy: Row) -> str:
    rps, p99 = row.median("rps"), row.median("p99")
    base_rps, base_p99 = healthy.median("rps"), healthy.median("p99")
    return (
        f"{base_rps:>8.0f} {base_p99:>7.2f} {rps:>8.0f} {p99:>7.2f} "
        f"{rps / base_rps:>6.2f} {p99 / base_p99:>6.2f}"
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = parser_with_rows(__doc__.split("\n", 1)[0], "1 s x 1 round")
    parser.add_argument(
        "--scenarios", help=f"comma-separated, from {','.join(NAMES)} (default all)"
    )
    args = parse_rows_args(parser, argv)
    wanted = choose(parser, args.scenarios, NAMES)
    args.setups = [setup for setup in SETUPS if setup.name in wanted]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    names = ",".join(setup.name for setup in args.setups)
    print(header("ingest bench", args, f"; scenarios {names}"))
    rows: list[Row] = []
    rss: dict[str, dict[str, float]] = {}
    for setup in args.setups:
        scenario_rows, rss[setup.name] = run_scenario(setup, args.rounds, args.seconds)
        rows += scenario_rows
    print_table(
        "Medians across rounds (cpu = cores busy over the window; other = rest of machine; "
        "generator wrk; p50/p99 are wrk's percentiles):",
        rows,
    )
    print_rss(rss)
    if "healthy" in rss and set(FAULTS) & set(rss):
        print(
            "\nLLM faults vs healthy (same run; each fault scenario's median req/s and p99 over "
            f"healthy's; target: p99 <= {FAULT_P99_TARGET:g} x healthy):"
        )
        print_ratios(rows, "healthy", FAULTS, f"{'req/s':>6} {'p99':>6} {'target':>6}", fault_cells)
    if "healthy" in rss and "overlay" in rss:
        print(
            "\nOverlay sockets vs none (same run; median req/s and p99 ms of healthy, no "
            "socket, then of overlay, 10 sockets, then overlay's over healthy's):"
        )
        heads = f"{'req/s':>8} {'p99':>7} {'req/s':>8} {'p99':>7} {'req/s':>6} {'p99':>6}"
        print_ratios(rows, "healthy", ("overlay",), heads, overlay_cells)
    return 0


if __name__ == "__main__":
    sys.exit(main())
