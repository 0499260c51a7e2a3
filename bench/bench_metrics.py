"""What counting a request for ``GET /metrics`` costs, in microseconds, and what a scrape costs.

Run from the repository root::

    python -m bench metrics [--number 200000] [--no-scrape]

Per request, the best of 5 ``timeit`` runs, per call: ``observe``, the statement the route guard
runs per request on a :class:`transport.metrics.RouteStats`; ``guard``, a whole guarded
``POST /feed`` route (as ``bench_auth``'s) with the real ``RouteStats`` and with one whose
``observe`` does nothing (the difference is what counting adds beyond a method call); and for
comparison prometheus-client's ``Histogram.labels(...).observe()`` + ``Counter...inc()``.
``scrape``: ``transport.exposition.render`` on an in-process relay with the fake LLM and a few
ticks' counters, median of 50, in milliseconds, with the size of the text.
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
from actors.tree import start_relay
from bench.bench_auth import route
from bench.runner import flags
from bench.stats import best_us, median
from config.settings import AgentSettings, Settings
from tests.support.harness import drive
from transport.app import streams_of
from transport.auth import Access
from transport.bridge import Asker
from transport.demo.fake_llm import FakeLLM
from transport.exposition import render
from transport.frontend import HttpFrontend
from transport.metrics import HTTP_BUCKETS_S, HttpStats, RouteStats
from transport.state import Peers
from transport.streams.limits import StreamLimits


class _NoStats(RouteStats):
    """A ``RouteStats`` that counts nothing: the guard's cost without the counting."""

    __slots__ = ()

    def observe(self, status: int, seconds: float) -> None:
        pass


def per_request(number: int) -> None:
    stats, started = RouteStats("POST", "/feed"), time.perf_counter()
    observe = best_us(lambda: stats.observe(200, time.perf_counter() - started), number)
    print(f"observe (the guard's added statement)      {observe:6.3f} us")
    headers = {"Content-Type": "application/json", "Content-Length": "16"}
    figures = {}
    for name, route_stats in (("counting", RouteStats("POST", "/feed")), ("not", _NoStats("", ""))):
        guarded, request = route(Access("", ()), route_stats, headers, arrived=False)
        figures[name] = best_us(lambda g=guarded, r=request: drive(g, r), number)  # type: ignore[misc]
    print(f"guard, counting                           {figures['counting']:6.3f} us")
    print(f"guard, observe() a no-op                  {figures['not']:6.3f} us")
    print(
        f"  difference                              {figures['counting'] - figures['not']:6.3f} us"
    )
    registry = CollectorRegistry(auto_describe=False)
    labels = ["method", "route"]
    histogram = Histogram("h_seconds", "h", labels, buckets=HTTP_BUCKETS_S, registry=registry)
    counter = Counter("c", "c", [*labels, "status"], registry=registry)

    def with_prometheus_client() -> None:
        seconds = time.perf_counter() - started
        histogram.labels("POST", "/feed").observe(seconds)
        counter.labels("POST", "/feed", "200").inc()

    reference = best_us(with_prometheus_client, number)
    print(f"prometheus-client Histogram + Counter     {reference:6.3f} us (for comparison)")


def scrape_ms(scrapes: int = 50) -> None:
    with FakeLLM() as llm:
        agent = AgentSettings(base_url=llm.base_url, api_key="x", interval_ms=3_600_000)
        clock = SystemClock()
        settings = Settings(port=0, data_dir=":memory:", agent=agent)
        relay = start_relay(settings, clock, frontend=HttpFrontend(settings))
        try:
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
            handles: dict[str, Any] = {name: relay.handles[name] for name in names}
            empty = {"feed_view": EMPTY_FEED, "sense_view": EMPTY_SENSE, "agent_view": EMPTY_AGENT}
            views: dict[str, Any] = {name: Published(value) for name, value in empty.items()}
            storage, actors = relay.storage, relay.handles
            peers = Peers(
                **handles, **views, actors=actors, timeout_s=2.0, storage=storage, clock=clock
            )

            async def run() -> tuple[list[float], int]:
                # a scrape reads the streams' counts
                streams = streams_of(peers, Asker(peers.timeout_s), StreamLimits.current(), 32)
                times, size = [], 0
                for _ in range(scrapes):
                    started = time.perf_counter()
                    size = len(await render(peers, Asker(peers.timeout_s), http, streams))
                    times.append(time.perf_counter() - started)
                return times, size

            times, size = asyncio.run(run())
        finally:
            relay.stop()
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
