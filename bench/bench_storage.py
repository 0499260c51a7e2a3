"""What durability costs: ingestion per sync mode, and the time from SIGTERM to exit.

Run from the repository root::

    python -m bench.bench_storage                        # 3 s x 3 rounds per row, 5 stops
    python -m bench.bench_storage --quick                # 1 s x 1 round, 2 stops
    python -m bench.bench_storage --scenarios shutdown

``storage``: three relays, one after another, each like the ingest bench's healthy one but
for its storage: ``full`` (a temporary directory, ``RELAY_SYNC=full``: a 200 means the item
is fsynced), ``normal`` (``RELAY_SYNC=normal``: survives a crash of the relay, not of the
machine) and ``memory`` (``--data-dir :memory:``: SQLite files in ``/dev/shm``, no sync).
``POST /feed`` and ``POST /sense`` at 1, 16 and 64 connections; the summary adds the ratios
full/memory and normal/memory of req/s, p50 and p99.

``shutdown``: the median time from SIGTERM to the exit of the process over ``--stops`` stops,
for a relay restarted on a directory whose feed and sense rings are full: with an idle
client (16 keep-alive connections that each got one answer and stay open), and while a
client posts at 16 connections (``/feed`` and ``/sense`` in turn; the signal comes 1 s into
the load; each connection stops at its first failure; an asyncio client of this script).
It also prints each restart's time from spawn to the first ``/health`` 200.

It prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import itertools
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import orjson

from bench.harness import (
    HOST,
    MEMORY,
    REQUEST_TIMEOUT_S,
    TERM_TIMEOUT_S,
    Server,
    agent_env,
    agent_setup,
    choose,
    post_body,
    post_many,
    relay_process,
    timed_stop,
    where,
)
from bench.load import (
    ENDPOINTS,
    Row,
    Setup,
    header,
    parse_rows_args,
    parser_with_rows,
    post,
    print_head,
    print_ratios,
    print_rss,
    print_table,
    run_scenario,
)

SCENARIOS = ("storage", "shutdown")
SETUPS = (Setup("full"), Setup("normal", sync="normal"), Setup("memory", data_dir=MEMORY))
STOP_CONNECTIONS = 16
BUSY_BEFORE_STOP_S = 1.0
FILL_POSTS = (150, 60)
"""``/feed`` and ``/sense`` posts that fill the rings before the stops."""


def storage_cells(row: Row, memory: Row) -> str:
    rps, p50, p99 = (row.median(a) / memory.median(a) for a in ("rps", "p50", "p99"))
    return f"{rps:>6.2f} {p50:>7.2f} {p99:>7.2f}"


# -- shutdown ------------------------------------------------------------------------------------


@dataclass(slots=True)
class StopSample:
    ready_s: float
    """From spawn to the first ``/health`` 200 (the rings are restored by then)."""
    stop_s: float
    code: int | None
    """Exit code; ``None`` when it had to be killed."""
    ring: tuple[object, object] = (None, None)
    """``/health`` messages and senseEvents after the restart (idle case)."""
    ok: int = 0
    """POSTs answered 200 while the client was posting (busy case)."""
    errors: Counter[str] = field(default_factory=Counter)

    def line(self) -> str:
        text = (
            f"start->healthy {self.ready_s:5.2f} s, SIGTERM->exit {self.stop_s:5.2f} s, "
            f"exit code {self.code}"
        )
        if self.ring != (None, None):
            text += f", rings after restart: feed {self.ring[0]}, sense {self.ring[1]}"
        if self.ok or self.errors:
            text += f", client: {self.ok} POSTs ok, failures {dict(self.errors) or 0}"
        return text


def idle_stop(server: Server) -> StopSample:
    """:data:`STOP_CONNECTIONS` keep-alive connections, one GET each, then SIGTERM."""
    port = urlsplit(server.base_url).port
    conns = [
        http.client.HTTPConnection(HOST, port, timeout=REQUEST_TIMEOUT_S)
        for _ in range(STOP_CONNECTIONS)
    ]
    try:
        body: dict[str, object] = {}
        for conn in conns:
            conn.request("GET", "/health")
            body = orjson.loads(conn.getresponse().read())
        time.sleep(0.2)  # every connection open, nothing in flight
        took, code = timed_stop(server)
    finally:
        for conn in conns:
            conn.close()
    ring = (body.get("messages"), body.get("senseEvents"))
    return StopSample(server.ready_s, took, code, ring=ring)


def busy_stop(server: Server) -> StopSample:
    """Post at :data:`STOP_CONNECTIONS` connections; SIGTERM after :data:`BUSY_BEFORE_STOP_S`."""
    posts = itertools.cycle([(path, post_body(path)) for path in ENDPOINTS])
    max_s = BUSY_BEFORE_STOP_S + TERM_TIMEOUT_S + 5.0
    with concurrent.futures.ThreadPoolExecutor(1) as client:
        future = client.submit(
            post, server.base_url, posts, STOP_CONNECTIONS, stop_on_error=True, max_s=max_s
        )
        time.sleep(BUSY_BEFORE_STOP_S)
        if future.done():
            msg = f"the client stopped before the SIGTERM: {future.result()}"
            raise RuntimeError(msg)
        took, code = timed_stop(server)
        result = future.result(timeout=max_s + 30)
    return StopSample(server.ready_s, took, code, ok=len(result.latencies_ms), errors=result.errors)


def run_shutdown(stops: int) -> dict[str, list[StopSample]]:
    """Fill the rings once, then restart and stop the relay ``stops`` times per case."""
    samples: dict[str, list[StopSample]] = {"idle": [], "busy": []}
    with agent_setup("shutdown") as (llm, data_dir, log_path):
        print(f"\n== scenario shutdown (fake LLM mode 'ok'; {where(data_dir)})")
        env = agent_env(llm.base_url)
        with relay_process(data_dir, log_path, env) as relay:
            post_many(relay, *FILL_POSTS)
            print(f"  filled the rings: {FILL_POSTS[0]} /feed and {FILL_POSTS[1]} /sense")
        for case, sample_list in samples.items():
            for n in range(1, stops + 1):
                with relay_process(data_dir, log_path, env) as relay:
                    sample = idle_stop(relay) if case == "idle" else busy_stop(relay)
                sample_list.append(sample)
                print(f"  {case} {n}: {sample.line()}")
    return samples


def print_stops(samples: dict[str, list[StopSample]]) -> None:
    print_head(
        f"{'client':<7} {'stops':>5} {'SIGTERM->exit median s':>22} {'min':>6} {'max':>6}",
        f"{'exit codes':<12} {'start->healthy median s':>23}",
    )
    for case, stops in samples.items():
        took = [s.stop_s for s in stops]
        codes = " ".join(str(s.code) for s in stops)
        ready = statistics.median(s.ready_s for s in stops)
        print(
            f"{case:<7} {len(stops):>5} {statistics.median(took):>22.3f} {min(took):>6.3f} "
            f"{max(took):>6.3f} {codes:<12} {ready:>23.3f}"
        )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = parser_with_rows(__doc__.split("\n", 1)[0], "1 s x 1 round, 2 stops")
    parser.add_argument("--stops", type=int, help="SIGTERMs per shutdown case (default 5)")
    parser.add_argument("--scenarios", help="storage, shutdown or both (default both)")
    args = parse_rows_args(parser, argv, stops=(2, 5))
    if args.stops < 1:
        parser.error("--stops must be at least 1")
    args.scenario_list = choose(parser, args.scenarios, SCENARIOS)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    print(
        header(
            "storage bench",
            args,
            f"; {args.stops} stops per shutdown case; scenarios {','.join(args.scenario_list)}",
        )
    )
    rows: list[Row] = []
    rss: dict[str, dict[str, float]] = {}
    stops: dict[str, list[StopSample]] = {}
    if "storage" in args.scenario_list:
        for setup in SETUPS:
            scenario_rows, rss[setup.name] = run_scenario(setup, args.rounds, args.seconds)
            rows += scenario_rows
    if "shutdown" in args.scenario_list:
        stops = run_shutdown(args.stops)
    if rows:
        print_table(
            "Storage (full = RELAY_SYNC=full on disk, normal = RELAY_SYNC=normal on disk, "
            "memory = --data-dir :memory:; medians across rounds; generator wrk; p50/p99 are "
            "wrk's percentiles):",
            rows,
        )
        print_rss(rss)
        print("\nStorage ratios (same run; req/s below 1, p50/p99 above 1: slower than memory):")
        group = f"{'req/s':>6} {'p50':>7} {'p99':>7}"
        print_ratios(rows, "memory", ("full", "normal"), group, storage_cells)
    if stops:
        print(
            f"\nSIGTERM to exit, relay restarted on full rings ({FILL_POSTS[0]} /feed and "
            f"{FILL_POSTS[1]} /sense posted first); idle = {STOP_CONNECTIONS} open keep-alive "
            f"connections, busy = posting at {STOP_CONNECTIONS} connections:"
        )
        print_stops(stops)
    return 0


if __name__ == "__main__":
    sys.exit(main())
