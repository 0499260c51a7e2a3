"""What the agent store's full-text index costs: storing an entry, pruning it, building the
index for entries already stored, and searching, each with the index and without it.

Run from the repository root (``bench_storage``'s ``index`` scenario)::

    python -m bench storage --scenarios index               # 3000 entries
    python -m bench storage --scenarios index --quick       # 500

The real DigestStore stores the entries (one ``record`` per entry, each its own commit, as
ticks come), on a fake clock, in a fresh data directory per row: ``full`` on disk in a
temporary directory (``RELAY_SYNC=full``, the default) and ``memory`` (``:memory:``: the
CPU's share alone). "Without" is the same schema with the index's migration and its start-up
check left out. Digests are about 500 characters drawn from a fixed vocabulary (seeded), huds
about 40.
"""

from __future__ import annotations

import contextlib
import io
import random
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from unittest import mock

import pykka

from actors.agent.core.completion import Analysis
from actors.agent.core.ticks import TickResult
from actors.agent.core.window import build_context_window
from actors.agent.digest_store import DigestStore
from actors.kernel import schemas, search_index
from actors.kernel.base import ChildHandle
from actors.kernel.clock import FakeClock
from actors.kernel.search_index import match_expression
from actors.kernel.storage import MEMORY, close_storage, open_storage
from bench.stats import median
from config.logs import configure_logging

_VOCABULARY = """
the user is editing reviewing debugging a test in VS Code terminal Chrome Slack meeting about
deployment pipeline parser retry backoff OrderService getShipping NullPointerException useEffect
fetchData error analyzer retryAfterMs pull request review comment docs budget invoice spreadsheet
calendar standup design figma migration schema database index query latency p99 dashboard
grafana alert incident rollback release notes changelog branch merge
"""
WORDS = tuple(_VOCABULARY.split())
SEARCHES = ("the", "deploy", "pipeline retry", "grafana incident rollback")


@dataclass(frozen=True, slots=True)
class Row:
    """One setup's figures: µs per stored entry (median and p99), µs per pruned entry, µs per
    entry to build the index, and median ms per search."""

    setup: str
    indexed: bool
    store_us: float
    store_p99_us: float
    prune_us: float
    build_us: float | None
    search_ms: float | None


def _result(rng: random.Random, n: int) -> TickResult:
    digest = " ".join(rng.choice(WORDS) for _ in range(70))[:500]
    hud = " ".join(rng.choice(WORDS) for _ in range(6))[:40]
    return TickResult(
        tick_id=n,
        analysis=Analysis(hud=hud, digest=digest, parsed_ok=True),
        window=build_context_window([], [], now_ms=0, max_age_ms=1),
        model="bench",
        latency_ms=1,
        tokens_in=1,
        tokens_out=1,
        push_to_feed=False,
    )


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


def measure(setup: str, indexed: bool, entries: int) -> Row:
    """Store ``entries`` entries with the real DigestStore, search them, then prune half."""
    rng = random.Random(7)
    results = [_result(rng, n) for n in range(entries)]
    with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp, _schema(indexed):
        info = open_storage(MEMORY if setup == "memory" else tmp, sync="full")
        path = info.stores["agent"].path
        try:
            store = DigestStore.start(
                clock=FakeClock(), store=info.stores["agent"], feed=ChildHandle("feed")
            ).proxy()
            took: list[float] = []
            for result in results:
                started = time.perf_counter()
                store.record(result).get(timeout=30)
                took.append(time.perf_counter() - started)
            search_ms = _search_ms(store) if indexed else None
            pykka.ActorRegistry.stop_all()
            prune_us, build_us = _prune_and_build(path, entries, indexed)
        finally:
            pykka.ActorRegistry.stop_all()
            close_storage(info)
    took.sort()
    return Row(
        setup,
        indexed,
        median(took) * 1e6,
        took[int(len(took) * 0.99)] * 1e6,
        prune_us,
        build_us,
        search_ms,
    )


def _search_ms(store: Any) -> float:
    times = []
    for q in SEARCHES * 5:
        started = time.perf_counter()
        store.search(match_expression(q), None, None, None, 50).get(timeout=30)
        times.append(time.perf_counter() - started)
    return median(times) * 1e3


def _prune_and_build(path: str, entries: int, indexed: bool) -> tuple[float, float | None]:
    """µs per entry to delete the older half (as retention does, in one statement), and, with
    the index, to build it again from what is left (as the migration does)."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        half = entries // 2
        started = time.perf_counter()
        db.execute("BEGIN")
        db.execute("DELETE FROM agent_entries WHERE id <= ?", (half,))
        db.execute("COMMIT")
        prune_us = (time.perf_counter() - started) / half * 1e6
        if not indexed:
            return prune_us, None
        started = time.perf_counter()
        db.execute("BEGIN")
        db.execute(search_index.REBUILD)
        db.execute("COMMIT")
        return prune_us, (time.perf_counter() - started) / (entries - half) * 1e6
    finally:
        db.close()


def run(entries: int) -> list[Row]:
    """Every row: ``full`` and ``memory``, without the index and with it (the store's log
    lines, such as the warning that a file without the index cannot be searched, go nowhere:
    they are not figures)."""
    configure_logging("json", "error", stream=io.StringIO())
    return [
        measure(setup, indexed, entries)
        for setup in ("full", "memory")
        for indexed in (False, True)
    ]


def print_rows(rows: list[Row], entries: int) -> None:
    """The table, and the index's cost per entry in each setup."""
    print(
        f"\nThe agent store's search index ({entries} entries stored one commit each with the "
        "real DigestStore, then the older half pruned in one statement; medians):"
    )
    print(
        f"{'setup':<7} {'index':<6} {'store µs/entry':>14} {'p99 µs':>8} {'prune µs/entry':>14} "
        f"{'build µs/entry':>14} {'search ms':>9}"
    )
    for row in rows:
        build = f"{row.build_us:14.1f}" if row.build_us is not None else f"{'-':>14}"
        search = f"{row.search_ms:9.2f}" if row.search_ms is not None else f"{'-':>9}"
        print(
            f"{row.setup:<7} {'with' if row.indexed else 'none':<6} {row.store_us:14.1f} "
            f"{row.store_p99_us:8.1f} {row.prune_us:14.1f} {build} {search}"
        )
    for setup in ("full", "memory"):
        none, have = (
            next(r for r in rows if r.setup == setup and r.indexed is i) for i in (False, True)
        )
        print(
            f"  {setup}: the index adds {have.store_us - none.store_us:+.1f} µs per stored entry "
            f"and {have.prune_us - none.prune_us:+.1f} µs per pruned one"
        )
