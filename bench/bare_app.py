"""A bare aiohttp app that answers like the relay with nothing behind it: the floor bench's.

Run from the repository root::

    python -m bench.bare_app --port 18800 --feed-body feed.json --health-body health.json

``POST /feed`` and ``POST /sense`` read the body under the relay's limits (413 above), decode
and check it as the relay does (``/feed`` straight into its struct, ``/sense`` parsed with
orjson and checked by ``sense_input``; 400 on a bad body) and answer ``{"ok": true, "id": n}``.
``GET /feed`` (any query) and ``GET /health`` answer the files given (``bench_floor`` passes a
relay's real answers). The server is built as the relay's transport builds it: the same event
loop, ``AppRunner`` and ``TCPSite`` settings, ``client_max_size`` and orjson answers; no
middleware, actors, storage or logging per request. SIGTERM or SIGINT stops it (exit code 0).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import msgspec
import orjson
from aiohttp import web

from actors.core.bodies import FEED_BODY_LIMIT, SENSE_BODY_LIMIT, FeedInput, decode, sense_input
from actors.core.errors import BadRequest, PayloadTooLarge
from transport.guard import json_response
from transport.http_transport import SHUTDOWN_TIMEOUT_S, new_event_loop

Handler = Callable[[web.Request], Awaitable[web.Response]]


async def read_bytes(request: web.Request, limit: int) -> bytes:
    """The body, at most ``limit`` bytes."""
    if request.content_length is not None and request.content_length > limit:
        msg = f"body is larger than {limit} bytes"
        raise PayloadTooLarge(msg)
    body = await request.read()
    if len(body) > limit:
        msg = f"body is larger than {limit} bytes"
        raise PayloadTooLarge(msg)
    return body


def feed(body: bytes) -> object:
    try:
        return decode(body, FeedInput).record()
    except msgspec.DecodeError as exc:
        raise BadRequest(f"body is not valid JSON: {exc}") from None


def sense(body: bytes) -> object:
    try:
        return sense_input(orjson.loads(body))
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"body is not valid JSON: {exc}") from None


def ingest(limit: int, validate: Callable[[bytes], object]) -> Handler:
    """A POST handler: read, parse and validate the body; answer the next id."""
    ids = itertools.count(1)

    async def handler(request: web.Request) -> web.Response:
        try:
            validate(await read_bytes(request, limit))
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
    app.router.add_post("/feed", ingest(FEED_BODY_LIMIT, feed))
    app.router.add_post("/sense", ingest(SENSE_BODY_LIMIT, sense))
    app.router.add_get("/feed", prebuilt(feed_body))
    app.router.add_get("/health", prebuilt(health_body))
    return app


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The bare aiohttp floor of the ingest bench.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--feed-body", type=Path, required=True, help="answer to GET /feed")
    parser.add_argument("--health-body", type=Path, required=True, help="answer to GET /health")
    args = parser.parse_args(argv)
    feed, health = args.feed_body.read_bytes(), args.health_body.read_bytes()
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
