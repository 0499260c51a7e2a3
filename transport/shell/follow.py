"""Following a hub as a Server-Sent Events route does: the resume point the client asked for
(``Last-Event-ID``, else ``?after=``, else none), the replay from the hub's ring, then live."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiohttp import web

from actors.core.errors import BadRequest
from transport.shell.inputs import optional_int
from transport.shell.state import ACCESS, STREAMS
from transport.streams.hub import Hub
from transport.streams.sse import SSE_HEADERS, serve


async def follow(request: web.Request, hub: Hub[Any]) -> web.StreamResponse:
    """Replay from the resume point (``Last-Event-ID``, else ``?after=``, else none), then
    go live; see :mod:`transport.streams.fanout`."""
    resume = _resume_point(request)
    if request.method == "HEAD":
        return web.Response(headers=SSE_HEADERS)
    streams = request.app[STREAMS]
    sub, ring = streams.subscribe(hub, request)
    try:
        replay = [] if resume is None else await hub.replay(resume, ring)
        headers: Mapping[str, str] = {**SSE_HEADERS, **(request.app[ACCESS].cors(request) or {})}
        return await serve(request, hub, sub, replay=replay, headers=headers, limits=streams.limits)
    finally:
        hub.release(sub)


def _resume_point(request: web.Request) -> int | None:
    """The id after which to replay, or ``None`` for live only; below 0 counts as 0."""
    raw = request.headers.get("Last-Event-ID", "").strip()
    if not raw:
        after = optional_int(request, "after")
        return None if after is None else max(after, 0)
    try:
        return max(int(raw), 0)
    except ValueError:
        msg = f"Last-Event-ID must be a whole number, got {raw!r}"
        raise BadRequest(msg) from None
