"""The floor of issue 5: a bare aiohttp app that answers like the relay, with nothing behind it.

Run from the repository root::

    python bench/bare_app.py --port 18800
    python bench/bare_app.py --port 18800 --feed-body feed.json --health-body health.json

``POST /feed`` and ``POST /sense`` read the body under the relay's limits (413 above),
``orjson.loads`` it, run the relay's own pure ``validate_feed`` / ``validate_sense`` (400 on a
bad body) and answer ``{"ok": true, "id": n}`` from a counter per endpoint. ``GET /feed``
(any query) and ``GET /health`` answer pre-built bytes: by default 100 feed items like the
bench's posts with an epoch, and a ``/health`` of the relay's shape and size;
``--feed-body`` and ``--health-body`` name files holding a relay's real answers instead
(``bench_ingest.py --scenarios floor`` passes those). The server is built as the relay's
transport builds it: the same event loop (``new_event_loop``: uvloop when installed), ``AppRunner``
(``access_log=None``) and ``TCPSite`` (``backlog=1024``) settings, ``client_max_size``, and
orjson answers (no CORS headers: the relay sends none to a request without ``Origin``, as the
bench's are). No middleware, no actors, no storage, no logging per request.
SIGTERM or SIGINT stops it (exit code 0).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as ``python bench/bare_app.py``: make the relay importable
    sys.path.insert(0, str(ROOT))

from actors.core.errors import BadRequest, PayloadTooLarge  # noqa: E402
from actors.core.records import FeedItem  # noqa: E402
from actors.core.validation import SENSE_BODY_LIMIT, validate_feed, validate_sense  # noqa: E402
from actors.feed_buffer import FEED_RING  # noqa: E402
from transport.http_transport import SHUTDOWN_TIMEOUT_S, new_event_loop  # noqa: E402
from transport.routes import FEED_BODY_LIMIT, json_response  # noqa: E402

FEED_TEXT = (
    "[PERIODIC] status check\n"
    "[2s ago, openrouter] so the relay keeps the last messages and the agent reads them"
)
"""The text of the bench's ``POST /feed`` body (and of the default feed answer's items)."""
EPOCH = hashlib.sha256(b"bare-app").hexdigest()[:16]
"""16 hex digits, like a relay's storage epoch."""
ACTORS = ("feed", "sense", "digest", "context", "llm", "ticker", "agent", "http")

Handler = Callable[[web.Request], Awaitable[web.Response]]


def default_feed_body() -> bytes:
    """``GET /feed?after=0`` of a relay whose ring holds 100 of the bench's posts."""
    now = int(time.time() * 1000)
    items = [
        FeedItem(id=n, text=FEED_TEXT, priority="normal", ts=now - 1000 * (FEED_RING - n))
        for n in range(1, FEED_RING + 1)
    ]
    return orjson.dumps({"messages": [item.to_json() for item in items], "epoch": EPOCH})


def default_health_body() -> bytes:
    """``GET /health`` of a healthy relay with a key and a few ticks behind it."""
    agent = {
        "enabled": True,
        "active": True,
        "hasApiKey": True,
        "model": "google/gemini-2.5-flash-lite",
        "intervalMs": 1000,
        "lastAnalysis": int(time.time() * 1000),
        "lastDigest": "The user is editing the relay's handlers in the code editor.",
        "totalCalls": 12,
        "totalTokens": {"in": 9600, "out": 480},
        "estimatedCost": 0.001152,
        "idleSkips": 40,
        "emptySkips": 0,
        "failures": 0,
        "lastError": None,
        "parseFailures": 0,
        "state": "ok",
        "consecutiveFailures": 0,
        "circuitOpenForMs": 0,
        "circuitSkips": 0,
        "inFlight": False,
        "busySkips": 0,
    }
    actor = {"alive": True, "restarts": 0, "lastRestart": None, "state": "running"}
    storage = {
        "path": "/tmp/relay-bench-data",
        "epoch": EPOCH,
        "sync": "full",
        "schemaVersions": {"feed": 1, "sense": 1, "agent": 1},
        "recovered": False,
        "movedAside": [],
        "problem": None,
    }
    body = {
        "ok": True,
        "epoch": EPOCH,
        "messages": FEED_RING,
        "senseEvents": 30,
        "agent": agent,
        "actors": dict.fromkeys(ACTORS, actor),
        "storage": storage,
    }
    return orjson.dumps(body)


async def read_json(request: web.Request, limit: int) -> Any:
    """The body parsed with orjson, at most ``limit`` bytes."""
    if request.content_length is not None and request.content_length > limit:
        msg = f"body is larger than {limit} bytes"
        raise PayloadTooLarge(msg)
    body = await request.read()
    if len(body) > limit:
        msg = f"body is larger than {limit} bytes"
        raise PayloadTooLarge(msg)
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"body is not valid JSON: {exc}") from None


def ingest(limit: int, validate: Callable[[Any], object]) -> Handler:
    """A POST handler: read, parse and validate the body; answer the next id."""
    ids = itertools.count(1)

    async def handler(request: web.Request) -> web.Response:
        try:
            validate(await read_json(request, limit))
        except BadRequest as exc:
            status = 413 if isinstance(exc, PayloadTooLarge) else 400
            return json_response({"ok": False, "error": str(exc)}, status)
        return json_response({"ok": True, "id": next(ids)})

    return handler


def prebuilt(body: bytes) -> Handler:
    """A GET handler that answers ``body`` as the relay answers JSON."""

    async def handler(_request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    return handler


def build_app(feed_body: bytes, health_body: bytes) -> web.Application:
    """The four routes the bench measures."""
    app = web.Application(client_max_size=SENSE_BODY_LIMIT + 1)
    app.router.add_post("/feed", ingest(FEED_BODY_LIMIT, validate_feed))
    app.router.add_post("/sense", ingest(SENSE_BODY_LIMIT, validate_sense))
    app.router.add_get("/feed", prebuilt(feed_body))
    app.router.add_get("/health", prebuilt(health_body))
    return app


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The bare aiohttp floor of the ingest bench.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--feed-body", type=Path, help="file answered to GET /feed")
    parser.add_argument("--health-body", type=Path, help="file answered to GET /health")
    args = parser.parse_args(argv)
    feed = args.feed_body.read_bytes() if args.feed_body else default_feed_body()
    health = args.health_body.read_bytes() if args.health_body else default_health_body()
    loop = new_event_loop()
    asyncio.set_event_loop(loop)
    runner = web.AppRunner(
        build_app(feed, health), access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT_S
    )
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, args.host, args.port, backlog=1024)
    loop.run_until_complete(site.start())
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, loop.stop)
    print(
        f"bare app on http://{args.host}:{args.port} ({type(loop).__module__} loop; "
        f"GET /feed {len(feed)} bytes, GET /health {len(health)} bytes)",
        flush=True,
    )
    try:
        loop.run_forever()
    finally:
        loop.run_until_complete(runner.cleanup())
        loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
