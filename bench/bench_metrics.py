"""What counting a request for ``GET /metrics`` costs (a guarded route with counting and
without, beside prometheus-client's), and what a scrape costs on an in-process relay with a fake
LLM. docs/benchmarks.md says what each figure holds.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram

from actors.agent.core.entries import EMPTY_AGENT
from actors.core.bodies import sense_input
from actors.core.records import EMPTY_FEED, EMPTY_SENSE
from actors.kernel.clock import SystemClock
from actors.kernel.published import Published
from bench.bench_auth import route
from bench.runner import flags
from bench.stats import best_us, median
from bench.tick_cost import in_process_relay
from tests.support.harness import drive
from transport.agent.fake_llm import FakeLLM
from transport.handlers.exposition import render
from transport.registry import FEATURES
from transport.shell.auth import Access
from transport.shell.bridge import Asker
from transport.shell.metrics import HTTP_BUCKETS_S, HttpStats, RouteStats
from transport.shell.state import Peers, streams_of
from transport.streams.limits import StreamLimits


class _NoStats(RouteStats):
    """A ``RouteStats`` that counts nothing: the guard's cost without the counting."""

    __slots__ = ()

    def observe(self, status: int, seconds: float) -> None:
        pass


def per_request(number: int) -> None:
    stats, started = RouteStats("POST", "/feed"), time.perf_counter()
    observe = best_us(lambda: stats.observe(200, time.perf_counter() - started), number)
    figures = {"observe (the guard's added statement)": observe}
    headers = {"Content-Type": "application/json", "Content-Length": "16"}
    counting, noop = "guard, counting", "guard, observe() a no-op"
    for name, route_stats in ((counting, RouteStats("POST", "/feed")), (noop, _NoStats("", ""))):
        guarded, request = route(Access("", ()), route_stats, headers, arrived=False)
        figures[name] = best_us(lambda g=guarded, r=request: drive(g, r), number)  # type: ignore[misc]
    figures["  difference"] = figures[counting] - figures[noop]
    registry = CollectorRegistry(auto_describe=False)
    labels = ["method", "route"]
    histogram = Histogram("h_seconds", "h", labels, buckets=HTTP_BUCKETS_S, registry=registry)
    counter = Counter("c", "c", [*labels, "status"], registry=registry)

    def with_prometheus_client() -> None:
        seconds = time.perf_counter() - started
        histogram.labels("POST", "/feed").observe(seconds)
        counter.labels("POST", "/feed", "200").inc()

    figures["prometheus-client Histogram + Counter"] = best_us(with_prometheus_client, number)
    for name, us in figures.items():
        print(f"{name:<41} {us:6.3f} us" + (" (for comparison)" if "prom" in name else ""))


def scrape_ms(scrapes: int = 50) -> None:
    with FakeLLM() as llm, in_process_relay(llm, ":memory:", []) as relay:
        for n in range(5):  # counters for one model, as a few ticks leave them
            event = {"type": "text", "ts": n, "ocr": f"screen {n}", "meta": {"app": "idea"}}
            relay.handles["sense"].proxy().append(sense_input(event)).get(timeout=5)
            relay.handles["ticker"].proxy().tick().get(timeout=5)
            time.sleep(0.1)
        http = HttpStats()
        for method, path in (("POST", "/feed"), ("POST", "/sense"), ("GET", "/health")):
            stats = http.route(method, path)
            for n in range(1000):
                stats.observe(200 if n % 50 else 400, n / 100_000)
        names = ("feed", "sense", "digest", "context", "ticker")
        empty = {"feed_view": EMPTY_FEED, "sense_view": EMPTY_SENSE, "agent_view": EMPTY_AGENT}
        known: dict[str, Any] = {name: relay.handles[name] for name in names}
        known |= {name: Published(value) for name, value in empty.items()}
        clock, storage = SystemClock(), relay.storage
        peers = Peers(**known, actors=relay.handles, timeout_s=2.0, storage=storage, clock=clock)

        async def run() -> tuple[list[float], int]:
            # a scrape reads the streams' counts
            ask = Asker(peers.timeout_s)
            streams = streams_of(peers, ask, StreamLimits.current(), 32)
            times, size = [], 0
            for _ in range(scrapes):
                started = time.perf_counter()
                size = len(await render(peers, ask, http, streams, features=FEATURES))
                times.append(time.perf_counter() - started)
            return times, size

        times, size = asyncio.run(run())
    middle = median(times) * 1000
    print(f"scrape (render), median of {scrapes}             {middle:6.2f} ms, {size} bytes")


OPTIONS = flags(
    number=(int, 200_000, "calls per timeit run"),
    no_scrape=(bool, None, "per-request figures only"),
)


def run(args: argparse.Namespace) -> int:
    per_request(args.number)
    if not args.no_scrape:
        scrape_ms()
    return 0
