"""The overlay's routes: its WebSocket at ``/ws`` (:mod:`transport.overlay.socket`), and its
switches worked by another client (``POST /overlay/command``)."""

from __future__ import annotations

from aiohttp import web

from actors.core.errors import BadRequest
from transport.overlay.messages import COMMAND_NOTICES
from transport.overlay.socket import OVERLAYS, is_upgrade, serve
from transport.shell.answers import CommandAnswer
from transport.shell.guard import Refused, json_response


class UpgradeRequired(Refused):
    """A request for the WebSocket that is no upgrade (HTTP 426)."""

    status = 426


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
