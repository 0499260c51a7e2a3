"""What counting a request for ``GET /metrics`` costs, in microseconds, and what a scrape costs.

Run from the repository root::

    python -m bench.bench_metrics [--number 200000]

Each per-request figure is the best of 5 ``timeit`` runs, per call:

``observe``    the statement the route guard runs per request (:func:`transport.guard.guarded`):
               ``stats.observe(status, time.perf_counter() - started)``, on a
               :class:`transport.metrics.RouteStats`.
``guard``      a whole guarded ``POST /feed`` route around a handler that answers a prebuilt
               response, driven without an event loop, on aiohttp's ``make_mocked_request``,
               with the real ``RouteStats`` and with a stand-in whose ``observe`` does nothing;
               the difference is what the counting adds beyond a method call.
``prometheus`` for comparison, the same count done with prometheus-client's own objects:
               ``Histogram.labels(...).observe()`` and ``Counter.labels(...).inc()``.
``scrape``     ``transport.exposition.render`` on a relay with the fake LLM and a few ticks'
               worth of counters (in-process, ``data_dir=":memory:"``), median of 50 scrapes,
               in milliseconds, with the size of the text.

It prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

import orjson
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from prometheus_client import CollectorRegistry, Counter, Histogram

from bench.harness import best_us, drive
from transport.auth import Access
from transport.guard import guarded as _guarded
from transport.metrics import HTTP_BUCKETS_S, RouteStats


class _NoStats(RouteStats):
    """A ``RouteStats`` that counts nothing: the guard's cost without the counting."""

    __slots__ = ()

    def observe(self, status: int, seconds: float) -> None:
        pass


def per_request(number: int) -> None:
    stats = RouteStats("POST", "/feed")
    started = time.perf_counter()
    observe = best_us(lambda: stats.observe(200, time.perf_counter() - started), number)
    print(f"observe (the guard's added statement)      {observe:6.3f} us")

    answer = web.Response(body=orjson.dumps({"ok": True, "id": 1}), content_type="application/json")

    async def handler(_request: web.Request) -> web.StreamResponse:
        return answer

    access = Access("", ())
    request = make_mocked_request(
        "POST", "/feed", headers={"Content-Type": "application/json", "Content-Length": "16"}
    )
    figures = {}
    for name, route_stats in (("counting", RouteStats("POST", "/feed")), ("not", _NoStats("", ""))):
        guarded = _guarded(
            handler,
            trace=False,
            access=access,
            admit=access.gate("POST", "/feed"),
            stats=route_stats,
        )
        figures[name] = best_us(lambda g=guarded: drive(g, request), number)  # type: ignore[misc]
    print(f"guard, counting                           {figures['counting']:6.3f} us")
    print(f"guard, observe() a no-op                  {figures['not']:6.3f} us")
    added = figures["counting"] - figures["not"]
    print(f"  difference                              {added:6.3f} us")

    registry = CollectorRegistry(auto_describe=False)
    histogram = Histogram(
        "h_seconds", "h", ["method", "route"], buckets=HTTP_BUCKETS_S, registry=registry
    )
    counter = Counter("c", "c", ["method", "route", "status"], registry=registry)

    def with_prometheus_client() -> None:
        seconds = time.perf_counter() - started
        histogram.labels("POST", "/feed").observe(seconds)
        counter.labels("POST", "/feed", "200").inc()

    reference = best_us(with_prometheus_client, number)
    print(f"prometheus-client Histogram + Counter     {reference:6.3f} us (for comparison)")


def scrape_ms(scrapes: int = 50) -> None:
    from actors.core.entries import EMPTY_AGENT  # noqa: PLC0415
    from actors.core.records import EMPTY_FEED, EMPTY_SENSE  # noqa: PLC0415
    from actors.kernel.clock import SystemClock  # noqa: PLC0415
    from actors.kernel.published import Published  # noqa: PLC0415
    from actors.tree import start_relay  # noqa: PLC0415
    from config.settings import AgentConfig, Settings  # noqa: PLC0415
    from transport.app import streams_of as _streams  # noqa: PLC0415
    from transport.bridge import Asker  # noqa: PLC0415
    from transport.demo.fake_llm import FakeLLM  # noqa: PLC0415
    from transport.exposition import render  # noqa: PLC0415
    from transport.metrics import HttpStats  # noqa: PLC0415
    from transport.state import Peers  # noqa: PLC0415
    from transport.streams import StreamLimits  # noqa: PLC0415

    with FakeLLM() as llm:
        agent = AgentConfig(base_url=llm.base_url, api_key="x", interval_ms=3_600_000)
        clock = SystemClock()
        relay = start_relay(Settings(port=0, data_dir=":memory:", agent=agent), clock)
        try:
            for n in range(5):  # counters for one model, as a few ticks leave them
                relay.handles["sense"].proxy().append(_sense(n)).get(timeout=5)
                relay.handles["ticker"].proxy().tick().get(timeout=5)
                time.sleep(0.1)
            http = HttpStats()
            for method, route in (("POST", "/feed"), ("POST", "/sense"), ("GET", "/health")):
                stats = http.route(method, route)
                for n in range(1000):
                    stats.observe(200 if n % 50 else 400, n / 100_000)
            handles: dict[str, Any] = {
                name: relay.handles[name]
                for name in ("feed", "sense", "digest", "context", "ticker")
            }
            views = (Published(EMPTY_FEED), Published(EMPTY_SENSE), Published(EMPTY_AGENT))
            peers = Peers(
                **handles,
                feed_view=views[0],
                sense_view=views[1],
                agent_view=views[2],
                actors=relay.handles,
                timeout_s=2.0,
                storage=relay.storage,
                clock=clock,
            )

            async def run() -> tuple[list[float], int]:
                # a scrape reads the streams' counts
                streams = _streams(peers, Asker(peers.timeout_s), StreamLimits.current(), 32)
                times, size = [], 0
                for _ in range(scrapes):
                    started = time.perf_counter()
                    body = await render(peers, Asker(peers.timeout_s), http, streams)
                    times.append(time.perf_counter() - started)
                    size = len(body)
                return times, size

            times, size = asyncio.run(run())
        finally:
            relay.stop()
    median = statistics.median(times) * 1000
    print(f"scrape (render), median of {scrapes}             {median:6.2f} ms, {size} bytes")


def _sense(n: int) -> object:
    from actors.core.bodies import sense_input  # noqa: PLC0415

    return sense_input({"type": "text", "ts": n, "ocr": f"screen {n}", "meta": {"app": "idea"}})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--number", type=int, default=200_000, help="calls per timeit run")
    parser.add_argument("--no-scrape", action="store_true", help="per-request figures only")
    args = parser.parse_args(argv)
    per_request(args.number)
    if not args.no_scrape:
        scrape_ms()
    return 0


if __name__ == "__main__":
    sys.exit(main())
