"""``GET /health/stream``: ``/health`` and the agent's ticks as Server-Sent Events.

What the console shows live and no hub publishes: every actor's state, the audio sources, the
escalation slot, the cost. Once a second the stream builds ``/health`` for its caller (as
``GET /health`` would answer it) and sends it when it changed, then the ticks that ended
since the last look; a keepalive comment after a quiet spell. It holds one of the slots the
streams share (``RELAY_MAX_STREAMS``) and ends, its response whole, as soon as the relay
begins to stop.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol

import msgspec
from aiohttp import web

from actors.core.errors import ActorUnavailable
from actors.core.shapes import Shape, TickNote
from transport.handlers.health import health_answer
from transport.shell.inputs import optional_int
from transport.shell.state import ACCESS, ASK, PEERS, STREAMS
from transport.streams.sse import KEEPALIVE_FRAME, RETRY_FRAME, SSE_HEADERS

HEALTH_EVERY_S = 1.0
"""How often the stream looks at ``/health`` and the ticks."""
_encode = msgspec.json.Encoder().encode


class TickSource(Protocol):
    """What the stream asks of the actor that keeps the ticks (the agent's ticker,
    :attr:`transport.shell.state.Peers.ticker`): the ticks that ended after ``after``, oldest
    first."""

    def recent_ticks(self, after: int) -> tuple[TickNote, ...]: ...


async def get_health_stream(health: type[Shape], request: web.Request) -> web.StreamResponse:
    """``GET /health/stream``: a ``health`` event when ``/health`` changed (its struct
    ``health``), a ``tick`` event per tick that ended (those the Ticker keeps after
    ``?after=`` or ``Last-Event-ID`` first)."""
    after = _after(request)
    if request.method == "HEAD":
        return web.Response(headers=SSE_HEADERS)
    streams = request.app[STREAMS]
    headers = {**SSE_HEADERS, **(request.app[ACCESS].cors(request) or {})}
    with streams.slot():
        response = web.StreamResponse(headers=headers)
        await response.prepare(request)
        await _write(response, RETRY_FRAME, streams.limits.write_timeout_s)
        loop = asyncio.get_running_loop()
        last_body, last_write = b"", loop.time()
        with contextlib.suppress(ConnectionError, TimeoutError):
            while not streams.closing and request.transport is not None:
                body, _ = await health_answer(health, request)
                frames = []
                if (encoded := _encode(body)) != last_body:
                    frames.append(b"event: health\ndata: %s\n\n" % encoded)
                    last_body = encoded
                for note in await _ticks(request, after):
                    frames.append(b"id: %d\nevent: tick\ndata: %s\n\n" % (note.id, _encode(note)))
                    after = note.id
                if frames or loop.time() - last_write >= streams.limits.keepalive_s:
                    chunk = b"".join(frames) or KEEPALIVE_FRAME
                    await _write(response, chunk, streams.limits.write_timeout_s)
                    last_write = loop.time()
                await streams.rest(HEALTH_EVERY_S)
    return response


def _after(request: web.Request) -> int:
    raw = request.headers.get("Last-Event-ID", "").strip()
    if raw.isdigit():
        return int(raw)
    return max(optional_int(request, "after") or 0, 0)


async def _ticks(request: web.Request, after: int) -> tuple[TickNote, ...]:
    peers = request.app[PEERS]
    try:
        return await request.app[ASK](peers.ticker, TickSource.recent_ticks, after)
    except ActorUnavailable:  # the ticker restarts: its ticks come at the next look
        return ()


async def _write(response: web.StreamResponse, chunk: bytes, timeout_s: float) -> None:
    async with asyncio.timeout(timeout_s):
        await response.write(chunk)
