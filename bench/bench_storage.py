"""What durability costs: ingestion per sync mode (``storage``), the time from SIGTERM to exit
(``shutdown``) and what the agent store's full-text index costs per entry (``index``).
docs/benchmarks.md says how each scenario is measured and how to read it.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import http.client
import io
import itertools
import math
import random
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from typing import NamedTuple
from unittest import mock

import orjson
import pykka

from actors.agent.core.completion import Analysis
from actors.agent.core.ticks import TickResult
from actors.agent.digest_store import DigestStore
from actors.core.window import build_context_window
from actors.kernel import schemas, search_index
from actors.kernel.base import ChildHandle
from actors.kernel.clock import FakeClock
from actors.kernel.search_index import match_expression
from actors.kernel.storage import close_storage, open_storage
from bench import load
from bench.figures import Table, at_least, data, print_ratios
from bench.load import Row, Setup
from bench.runner import arg, choose
from bench.stats import median
from config.logs import configure_logging
from tests.support import harness
from tests.support.harness import HOST, MEMORY, Server

SCENARIOS = ("storage", "shutdown", "index")
SETUPS = (Setup("full"), Setup("normal", sync="normal"), Setup("memory", data_dir=MEMORY))
STOP_CONNECTIONS, BUSY_BEFORE_STOP_S = 16, 1.0
FILL_POSTS = (150, 60)  # /feed and /sense posts that fill the rings before the stops


class StopSample(NamedTuple):
    """One stop: spawn to the first 200, SIGTERM to exit, the exit code (``None``: killed), and
    what it saw: the rings ``/health`` showed after the restart (idle), or the client's POSTs
    answered 200 and its failures (busy)."""

    ready_s: float
    stop_s: float
    code: int | None
    seen: str


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
    seen = f"rings after restart: feed {body.get('messages')}, sense {body.get('senseEvents')}"
    return StopSample(server.ready_s, took, code, seen)


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
    seen = f"client: {len(result.latencies_ms)} POSTs ok, failures {dict(result.errors) or 0}"
    return StopSample(server.ready_s, took, code, seen)


def run_shutdown(stops: int) -> None:
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
            print(
                f"  {case} {n}: start->healthy {sample.ready_s:5.2f} s, SIGTERM->exit "
                f"{sample.stop_s:5.2f} s, exit code {sample.code}, {sample.seen}"
            )
    print(
        f"\nSIGTERM to exit, relay restarted on full rings ({FILL_POSTS[0]} /feed and "
        f"{FILL_POSTS[1]} /sense posted first); idle = {STOP_CONNECTIONS} open keep-alive "
        f"connections, busy = posting at {STOP_CONNECTIONS} connections:"
    )
    table = Table(
        "client <7|stops >5|SIGTERM->exit median s >22.3f|min >6.3f|max >6.3f|exit codes <12|"
        "start->healthy median s >23.3f"
    )
    table.head()
    for case, done in samples.items():
        took, codes = [s.stop_s for s in done], " ".join(str(s.code) for s in done)
        ready = median(s.ready_s for s in done)
        table.row(case, len(done), median(took), min(took), max(took), codes, ready)


INDEX = data("index_entries")  # the words of the digests and huds it stores, and its searches
WORDS = tuple(INDEX["words"].split())


class IndexRow(NamedTuple):
    """A setup's µs per entry stored (median, p99), pruned and indexed; ms a search (NaN: none)."""

    setup: str
    indexed: bool
    store_us: float
    store_p99_us: float
    prune_us: float
    build_us: float
    search_ms: float


@contextlib.contextmanager
def _schema(indexed: bool) -> Iterator[None]:
    """The agent file's schema with the index, or as it was before it."""
    if indexed:
        yield
        return
    steps = tuple(s for s in schemas.MIGRATIONS["agent"] if s is not search_index.build)
    with (
        mock.patch.dict(schemas.MIGRATIONS, {"agent": steps}),
        mock.patch.dict(schemas.RECONCILE, clear=True),
    ):
        yield


def measure_index(setup: str, indexed: bool, entries: int) -> IndexRow:
    """Store ``entries`` entries with the real DigestStore, search them, then prune half."""
    rng, window = random.Random(7), build_context_window([], [], now_ms=0, max_age_ms=1)
    results = []
    for n in range(entries):
        digest = " ".join(rng.choice(WORDS) for _ in range(70))[:500]
        hud = " ".join(rng.choice(WORDS) for _ in range(6))[:40]
        results.append(TickResult(n, Analysis(hud, digest, True), window, "bench", 1, 1, 1, False))
    with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp, _schema(indexed):
        info = open_storage(MEMORY if setup == "memory" else tmp, sync="full")
        try:
            store = DigestStore.start(
                clock=FakeClock(), store=info.stores["agent"], feed=ChildHandle("feed")
            ).proxy()
            took: list[float] = []
            for result in results:
                started = time.perf_counter()
                store.record(result).get(timeout=30)
                took.append(time.perf_counter() - started)
            times = []
            for q in INDEX["searches"] * 5 if indexed else ():
                started = time.perf_counter()
                store.search(match_expression(q), None, None, None, 50).get(timeout=30)
                times.append(time.perf_counter() - started)
            pykka.ActorRegistry.stop_all()
            prune_us, build_us = _prune_and_build(info.stores["agent"].path, entries, indexed)
        finally:
            pykka.ActorRegistry.stop_all()
            close_storage(info)
    took.sort()
    p99 = took[int(len(took) * 0.99)]
    search_ms = median(times) * 1e3  # NaN without the index
    return IndexRow(setup, indexed, median(took) * 1e6, p99 * 1e6, prune_us, build_us, search_ms)


def _transaction_s(db: sqlite3.Connection, sql: str, *params: object) -> float:
    """Seconds to run ``sql`` in a transaction of its own."""
    started = time.perf_counter()
    db.execute("BEGIN")
    db.execute(sql, params)
    db.execute("COMMIT")
    return time.perf_counter() - started


def _prune_and_build(path: str, entries: int, indexed: bool) -> tuple[float, float]:
    """µs per entry to delete the older half (as retention does, in one statement), and, with
    the index, to build it again from what is left (as the migration does)."""
    half = entries // 2
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        prune_s = _transaction_s(db, "DELETE FROM agent_entries WHERE id <= ?", half)
        build_s = _transaction_s(db, search_index.REBUILD) if indexed else math.nan
    return prune_s / half * 1e6, build_s / (entries - half) * 1e6


def run_index(entries: int) -> None:
    """Every row, ``full`` and ``memory`` without the index and with it, and what the index
    adds in each (the store's log lines, such as the warning that a file without the index
    cannot be searched, go nowhere: they are not figures)."""
    configure_logging("json", "error", stream=io.StringIO())
    rows = [measure_index(s, i, entries) for s in ("full", "memory") for i in (False, True)]
    print(f"\nThe agent store's search index, {entries} entries (medians):")
    table = Table(
        "setup <7|index <6|store µs/entry >14.1f|p99 µs >8.1f|prune µs/entry >14.1f|"
        "build µs/entry >14.1f|search ms >9.2f"
    )
    table.head()
    for row in rows:
        table.row(row.setup, "with" if row.indexed else "none", *row[2:])
    for none, have in zip(rows[::2], rows[1::2], strict=True):
        print(
            f"  {none.setup}: the index adds {have.store_us - none.store_us:+.1f} µs per stored "
            f"entry and {have.prune_us - none.prune_us:+.1f} µs per pruned one"
        )


OPTIONS = [
    *load.row_options("1 s x 1 round, 2 stops"),
    arg("--stops", type=at_least(1), help="SIGTERMs per shutdown case (default 5)"),
    arg("--scenarios", help="storage, shutdown, index (default all)"),
    arg("--entries", type=at_least(2), help="entries of the index scenario (3000)"),
]


def run(args: argparse.Namespace) -> int:
    load.rows_args(args, stops=(2, 5), entries=(500, 3000))
    scenarios = choose(args.scenarios, SCENARIOS)
    extra = f"; {args.stops} stops per shutdown case; scenarios {','.join(scenarios)}"
    print(load.header("storage bench", args, extra))
    if "storage" in scenarios:
        title = "Storage (full, normal: RELAY_SYNC=full, normal on disk; memory: --data-dir"
        rows, _rss = load.run_setups(SETUPS, args, f"{title} :memory:; medians; wrk's p50/p99):")
        print("\nStorage ratios (same run; req/s below 1, p50/p99 above 1: slower than memory):")
        group = f"{'req/s':>6} {'p50':>7} {'p99':>7}"

        def cells(row: Row, memory: Row) -> str:
            rps, p50, p99 = (row.median(a) / memory.median(a) for a in ("rps", "p50", "p99"))
            return f"{rps:>6.2f} {p50:>7.2f} {p99:>7.2f}"

        print_ratios(rows, "memory", ("full", "normal"), group, cells)
    if "shutdown" in scenarios:
        run_shutdown(args.stops)
    if "index" in scenarios:
        run_index(args.entries)
    return 0
