"""A bare aiohttp app that reads and checks bodies as the relay does, and answers ``GET /feed``
and ``GET /health`` with files, with nothing behind it: the floor (docs/benchmarks.md)."""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Awaitable, Callable
from pathlib import Path

import msgspec
import orjson
from aiohttp import web

from actors.core.bodies import FEED_BODY_LIMIT, SENSE_BODY_LIMIT, FeedInput, decode, sense_input
from actors.core.errors import BadRequest
from bench.runner import flags
from tests.support.harness import HOST, serve_forever
from transport.http_transport import SHUTDOWN_TIMEOUT_S, new_event_loop
from transport.shell.answers import Accepted, Error
from transport.shell.guard import PayloadTooLarge, json_response

Handler = Callable[[web.Request], Awaitable[web.Response]]


def ingest(limit: int, validate: Callable[[bytes], object]) -> Handler:
    """A POST handler: read, parse and validate the body (400 when it is not JSON, or not
    what the relay takes; 413 above ``limit``); answer the next id."""
    ids = itertools.count(1)

    async def handler(request: web.Request) -> web.Response:
        try:
            if (request.content_length or 0) > limit or len(body := await request.read()) > limit:
                raise PayloadTooLarge(f"body is larger than {limit} bytes")
            validate(body)
        except (msgspec.DecodeError, orjson.JSONDecodeError) as exc:
            return json_response(Error(ok=False, error=f"body is not valid JSON: {exc}"), 400)
        except BadRequest as exc:
            status = 413 if isinstance(exc, PayloadTooLarge) else 400
            return json_response(Error(ok=False, error=str(exc)), status)
        return json_response(Accepted(ok=True, id=next(ids)))

    return handler


def prebuilt(body: bytes) -> Handler:
    """A GET handler that answers ``body`` as the relay answers JSON."""

    async def handler(_request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    return handler


OPTIONS = flags(
    port=(int, ..., "port to listen on"),
    feed_body=(Path, ..., "answer to GET /feed"),
    health_body=(Path, ..., "answer to GET /health"),
)


def run(args: argparse.Namespace) -> int:
    feed_body, health_body = args.feed_body.read_bytes(), args.health_body.read_bytes()
    app = web.Application(client_max_size=SENSE_BODY_LIMIT + 1)
    app.router.add_post("/feed", ingest(FEED_BODY_LIMIT, lambda b: decode(b, FeedInput).record()))
    app.router.add_post("/sense", ingest(SENSE_BODY_LIMIT, lambda b: sense_input(orjson.loads(b))))
    app.router.add_get("/feed", prebuilt(feed_body))
    app.router.add_get("/health", prebuilt(health_body))
    loop = new_event_loop()
    sizes = f"GET /feed {len(feed_body)} bytes, GET /health {len(health_body)} bytes"
    banner = f"bare app on http://{HOST}:{args.port} ({type(loop).__module__} loop; {sizes})"
    return serve_forever(
        app, loop, args.port, banner, backlog=1024, shutdown_timeout_s=SHUTDOWN_TIMEOUT_S
    )
