"""Sinain's own clients: the capture client's ``POST /profiling/sense`` and the overlay's
WebSocket (``GET /`` and ``GET /ws``, :mod:`transport.overlay.socket`)."""

from __future__ import annotations

import structlog
from aiohttp import web

from actors.core.bodies import CONFIG_BODY_LIMIT, ProcessReport
from actors.core.errors import BadRequest
from transport.answers import CommandAnswer, Done
from transport.console.page import page_response
from transport.guard import Refused, json_response
from transport.inputs import read_body
from transport.overlay.messages import COMMAND_NOTICES
from transport.overlay.socket import is_upgrade, serve
from transport.profiling import report_of
from transport.state import CLIENT_FIGURES, OVERLAYS, PEERS

log = structlog.get_logger("relay")


class UpgradeRequired(Refused):
    """A request for the WebSocket that is no upgrade (HTTP 426)."""

    status = 426


async def get_root(request: web.Request) -> web.StreamResponse:
    """``GET /``: the overlay's WebSocket, for an upgrade request; the console page for
    anything else (:mod:`transport.console.page`)."""
    if not is_upgrade(request):
        return page_response()
    return await serve(request, request.app[OVERLAYS])


async def get_ws(request: web.Request) -> web.StreamResponse:
    """``GET /ws``: the overlay's WebSocket; a 426 for a request that is no upgrade."""
    if not is_upgrade(request):
        msg = "this is the overlay's WebSocket: connect with a WebSocket client (ws://.../ws)"
        raise UpgradeRequired(msg, {"Upgrade": "websocket"})
    return await serve(request, request.app[OVERLAYS])


async def post_overlay_command(request: web.Request) -> web.Response:
    """``POST /overlay/command?action=...``: a switch of the overlay's, asked by another
    client (the console): ``toggle_audio``, ``switch_device`` or ``toggle_screen``. Every
    overlay hears what changed, as when one of them asks; the answer is the overlay's line."""
    action = request.query.get("action", "")
    if action not in COMMAND_NOTICES:
        msg = f"action must be one of {', '.join(COMMAND_NOTICES)}"
        raise BadRequest(msg)
    text = await request.app[OVERLAYS].command(None, action)
    return json_response(CommandAnswer(ok=True, text=text))


async def post_profiling_sense(request: web.Request) -> web.Response:
    """``POST /profiling/sense``: the capture client's RSS, uptime and counters; ``{ok}``.

    The newest report is kept in memory for ``/health`` and ``/metrics``
    (:mod:`transport.profiling`); a malformed one is a 400 and changes nothing.
    """
    report = report_of(await read_body(request, CONFIG_BODY_LIMIT, ProcessReport))
    received_at = request.app[PEERS].clock.now_ms()
    request.app[CLIENT_FIGURES].report("sense", report.arrived(received_at))
    return json_response(Done(ok=True))
