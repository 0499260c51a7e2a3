"""The capture client's ``POST /profiling/sense``: its own figures, kept for ``/health`` and
``/metrics``."""

from __future__ import annotations

import structlog
from aiohttp import web

from actors.core.bodies import CONFIG_BODY_LIMIT, ProcessReport
from transport.shell.answers import Done
from transport.shell.guard import json_response
from transport.shell.inputs import read_body
from transport.shell.profiling import report_of
from transport.shell.state import CLIENT_FIGURES, PEERS

log = structlog.get_logger("relay")


async def post_profiling_sense(request: web.Request) -> web.Response:
    """``POST /profiling/sense``: the capture client's RSS, uptime and counters; ``{ok}``.

    The newest report is kept in memory for ``/health`` and ``/metrics``
    (:mod:`transport.shell.profiling`); a malformed one is a 400 and changes nothing.
    """
    report = report_of(await read_body(request, CONFIG_BODY_LIMIT, ProcessReport))
    received_at = request.app[PEERS].clock.now_ms()
    request.app[CLIENT_FIGURES].report("sense", report.arrived(received_at))
    return json_response(Done(ok=True))
