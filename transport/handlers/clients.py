"""Sinain's own clients: the capture client's ``POST /profiling/sense`` and the overlay's
WebSocket (``GET /`` and ``GET /ws``, :mod:`transport.overlay`)."""

from __future__ import annotations

import structlog
from aiohttp import web

from transport.guard import json_response
from transport.inputs import CONFIG_BODY_LIMIT, read_json
from transport.profiling import parse_report
from transport.state import CLIENT_FIGURES, PEERS

log = structlog.get_logger("relay")


async def post_profiling_sense(request: web.Request) -> web.Response:
    """``POST /profiling/sense``: the capture client's RSS, uptime and counters; ``{ok}``.

    The newest report is kept in memory for ``/health`` and ``/metrics``
    (:mod:`transport.profiling`); a malformed one is a 400 and changes nothing.
    """
    report = parse_report(await read_json(request, CONFIG_BODY_LIMIT))
    received_at = request.app[PEERS].clock.now_ms()
    request.app[CLIENT_FIGURES].report("sense", report.arrived(received_at))
    return json_response({"ok": True})
