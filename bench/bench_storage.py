"""What durability costs: ingestion per sync mode, and the time from SIGTERM to exit.

Run from the repository root::

    python -m bench storage                        # 3 s x 3 rounds per row, 5 stops
    python -m bench storage --quick                # 1 s x 1 round, 2 stops
    python -m bench storage --scenarios shutdown
    python -m bench storage --scenarios index      # the search index's cost

``storage``: the ingest bench's healthy relay three times: ``full`` (``RELAY_SYNC=full``: a 200
means the item is fsynced), ``normal`` (survives a crash of the relay, not of the machine) and
``memory`` (``--data-dir :memory:``, no sync), with the ratios full/memory and normal/memory.
``shutdown``: the median time from SIGTERM to exit over ``--stops`` stops of a relay restarted
on full rings, with 16 idle keep-alive connections and while a client posts at 16 connections
(the signal 1 s into the load; each connection stops at its first failure); and each restart's
time from spawn to the first ``/health`` 200.
``index``: what the agent store's full-text index costs per entry stored, pruned and indexed
at migration, and a search's time (:mod:`bench.index_cost`; ``--entries``, 3000 or 500 quick).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import itertools
import time
from collections import Counter
from dataclasses import dataclass, field

import orjson

from bench import index_cost, load
from bench.figures import print_head, print_ratios
from bench.load import Row, Setup
from bench.runner import UsageError, arg, choose
from bench.stats import median
from tests.support import harness
from tests.support.harness import HOST, MEMORY, Server

SCENARIOS = ("storage", "shutdown", "index")
SETUPS = (Setup("full"), Setup("normal", sync="normal"), Setup("memory", data_dir=MEMORY))
STOP_CONNECTIONS = 16
BUSY_BEFORE_STOP_S = 1.0
FILL_POSTS = (150, 60)
"""``/feed`` and ``/sense`` posts that fill the rings before the stops."""


def storage_cells(row: Row, memory: Row) -> str:
    rps, p50, p99 = (row.median(a) / memory.median(a) for a in ("rps", "p50", "p99"))
    return f"{rps:>6.2f} {p50:>7.2f} {p99:>7.2f}"


@dataclass(slots=True)
class StopSample:
    """One stop: spawn to the first 200, SIGTERM to exit, the exit code (``None``: killed); the
    rings ``/health`` showed after the restart (idle), the client's POSTs answered 200 and its
    failures (busy)."""

    ready_s: float
    stop_s: float
    code: int | None
    ring: tuple[object, object] = (None, None)
    ok: int = 0
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
    port = int(server.base_url.rsplit(":", 1)[1])
    conns = [
        http.client.HTTPConnection(HOST, port, timeout=harness.REQUEST_TIMEOUT_S)
        for _ in range(STOP_CONNECTIONS)
    ]
    try:
        body: dict[str, object] = {}
        for conn in conns:
            conn.request("GET", "/health")
            body = orjson.loads(conn.getresponse().read())
        time.sleep(0.2)  # every connection open, nothing in flight
        took, code = harness.timed_stop(server)
    finally:
        for conn in conns:
            conn.close()
    return StopSample(
        server.ready_s, took, code, ring=(body.get("messages"), body.get("senseEvents"))
    )


def busy_stop(server: Server) -> StopSample:
    """Post at :data:`STOP_CONNECTIONS` connections; SIGTERM after :data:`BUSY_BEFORE_STOP_S`."""
    posts = itertools.cycle([(path, harness.post_body(path)) for path in load.ENDPOINTS])
    max_s = BUSY_BEFORE_STOP_S + harness.TERM_TIMEOUT_S + 5.0
    with concurrent.futures.ThreadPoolExecutor(1) as client:
        future = client.submit(
            load.post, server.base_url, posts, STOP_CONNECTIONS, stop_on_error=True, max_s=max_s
        )
        time.sleep(BUSY_BEFORE_STOP_S)
        if future.done():
            raise RuntimeError(f"the client stopped before the SIGTERM: {future.result()}")
        took, code = harness.timed_stop(server)
        result = future.result(timeout=max_s + 30)
    return StopSample(server.ready_s, took, code, ok=len(result.latencies_ms), errors=result.errors)


def run_shutdown(stops: int) -> dict[str, list[StopSample]]:
    """Fill the rings once, then restart and stop the relay ``stops`` times per case."""
    samples: dict[str, list[StopSample]] = {"idle": [], "busy": []}
    with harness.agent_setup("shutdown") as (llm, data_dir, log_path):
        print(f"\n== scenario shutdown (fake LLM mode 'ok'; {harness.where(data_dir)})")
        env = harness.agent_env(llm.base_url)
        with harness.relay_process(data_dir, log_path, env) as relay:
            harness.post_many(relay, *FILL_POSTS)
            print(f"  filled the rings: {FILL_POSTS[0]} /feed and {FILL_POSTS[1]} /sense")
        for (case, sample_list), n in itertools.product(samples.items(), range(1, stops + 1)):
            with harness.relay_process(data_dir, log_path, env) as relay:
                sample = idle_stop(relay) if case == "idle" else busy_stop(relay)
            sample_list.append(sample)
            print(f"  {case} {n}: {sample.line()}")
    return samples


OPTIONS = [
    *load.row_options("1 s x 1 round, 2 stops"),
    arg("--stops", type=int, help="SIGTERMs per shutdown case (default 5)"),
    arg("--scenarios", help="storage, shutdown, index (default all)"),
    arg("--entries", type=int, help="entries of the index scenario (3000)"),
]


def run(args: argparse.Namespace) -> int:
    load.rows_args(args, stops=(2, 5), entries=(500, 3000))
    if args.stops < 1:
        raise UsageError("--stops must be at least 1")
    scenarios = choose(args.scenarios, SCENARIOS)
    extra = f"; {args.stops} stops per shutdown case; scenarios {','.join(scenarios)}"
    print(load.header("storage bench", args, extra))
    if "storage" in scenarios:
        rows, _rss = load.run_setups(
            SETUPS,
            args,
            "Storage (full = RELAY_SYNC=full on disk, normal = RELAY_SYNC=normal on disk, "
            "memory = --data-dir :memory:; medians across rounds; generator wrk; p50/p99 are "
            "wrk's percentiles):",
        )
        print("\nStorage ratios (same run; req/s below 1, p50/p99 above 1: slower than memory):")
        group = f"{'req/s':>6} {'p50':>7} {'p99':>7}"
        print_ratios(rows, "memory", ("full", "normal"), group, storage_cells)
    if "shutdown" in scenarios:
        stops = run_shutdown(args.stops)
        print(
            f"\nSIGTERM to exit, relay restarted on full rings ({FILL_POSTS[0]} /feed and "
            f"{FILL_POSTS[1]} /sense posted first); idle = {STOP_CONNECTIONS} open keep-alive "
            f"connections, busy = posting at {STOP_CONNECTIONS} connections:"
        )
        print_head(
            f"{'client':<7} {'stops':>5} {'SIGTERM->exit median s':>22} {'min':>6} {'max':>6}",
            f"{'exit codes':<12} {'start->healthy median s':>23}",
        )
        for case, samples in stops.items():
            took = [s.stop_s for s in samples]
            codes = " ".join(str(s.code) for s in samples)
            ready = median(s.ready_s for s in samples)
            print(
                f"{case:<7} {len(samples):>5} {median(took):>22.3f} {min(took):>6.3f} "
                f"{max(took):>6.3f} {codes:<12} {ready:>23.3f}"
            )
    if "index" in scenarios:
        index_cost.print_rows(index_cost.run(args.entries), args.entries)
    return 0
