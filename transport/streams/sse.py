"""Serving one Server-Sent Events stream: ``retry:``, the replay, then what its hub queues.

The hubs (:mod:`transport.streams.hub`) queue each subscriber's frames on the event loop; this
writes them to the client in bounded pieces, each with a timeout, sends a keepalive comment
after a quiet spell, and ends the stream when the client leaves, is dropped, or the
transport stops.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from aiohttp import web

from transport.streams.fanout import abort
from transport.streams.hub import Hub, log
from transport.streams.limits import StreamLimits
from transport.streams.subscriber import DROPPED, SHUTDOWN, Subscriber

WRITE_CHUNK_BYTES = 256 * 1024
"""Queued events are written in pieces of about this size, each with its own timeout."""
RETRY_MS = 3000
"""The ``retry:`` an ``EventSource`` waits before it reconnects."""
RETRY_FRAME = b"retry: %d\n\n" % RETRY_MS
KEEPALIVE_FRAME = b": keepalive\n\n"


class _WriteTimeout(Exception):
    """A write to a client did not go out in time."""


SSE_HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",  # nginx: pass each event on, do not buffer the stream
}


async def serve(
    request: web.Request,
    hub: Hub[Any],
    sub: Subscriber,
    *,
    replay: list[bytes],
    headers: Mapping[str, str],
    limits: StreamLimits,
) -> web.StreamResponse:
    """Write ``retry:``, the replay, then the live events of ``sub`` until the stream ends.

    It ends when the client leaves, when it is dropped (too far behind, or a write timed
    out), or when the transport stops.
    """
    response = web.StreamResponse(headers=headers)
    loop = asyncio.get_running_loop()
    try:
        await response.prepare(request)
        await _send(response, sub, [RETRY_FRAME, *replay], limits.write_timeout_s)
        last_write = loop.time()
        while True:
            frames = sub.take()
            if sub.closed == DROPPED:
                break
            if frames:
                await _send(response, sub, frames, limits.write_timeout_s)
                last_write = loop.time()
                continue
            if sub.closed is not None or request.transport is None:  # stopping, or client gone
                break
            idle = loop.time() - last_write
            if idle >= limits.keepalive_s:
                await _send(response, sub, [KEEPALIVE_FRAME], limits.write_timeout_s)
                last_write = loop.time()
                continue
            await sub.wait(min(limits.client_check_s, limits.keepalive_s - idle))
        if sub.closed == SHUTDOWN and _behind(request):
            abort(request)  # the end of the stream would wait for a client that is behind
    except _WriteTimeout:
        hub.drop(sub, "write_timeout")
    except ConnectionError:
        pass  # the client left in the middle of a write
    except Exception:  # keeps the server serving: only this stream ends
        log.exception("stream.failed", actor="http", stream=hub.kind, peer=sub.peer)
        abort(request)
    return response


async def _send(
    response: web.StreamResponse, sub: Subscriber, frames: list[bytes], timeout_s: float
) -> None:
    for piece in pieces(frames):
        sub.writing = True
        try:
            async with asyncio.timeout(timeout_s):
                await response.write(piece)
        except TimeoutError:
            raise _WriteTimeout from None
        finally:
            sub.writing = False


def pieces(frames: Sequence[bytes]) -> Iterator[bytes]:
    """The frames joined into writes of at least :data:`WRITE_CHUNK_BYTES` (the last one
    what is left): few writes for a long replay, and a deadline that each write can meet."""
    chunk: list[bytes] = []
    size = 0
    for frame in frames:
        chunk.append(frame)
        size += len(frame)
        if size >= WRITE_CHUNK_BYTES:
            yield b"".join(chunk)
            chunk, size = [], 0
    if chunk:
        yield b"".join(chunk)


def _behind(request: web.Request) -> bool:
    protocol = request.protocol
    return protocol is not None and protocol.writing_paused
