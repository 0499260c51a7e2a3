"""``GET /metrics``, ``GET /openapi.json`` and the fault drills' ``POST /debug/fault``."""

from __future__ import annotations

import structlog
from aiohttp import web
from msgspec import UNSET

from actors.core.bodies import CONFIG_BODY_LIMIT
from actors.core.control_bodies import Fault
from actors.core.errors import BadRequest
from actors.kernel.base import RelayActor
from transport.host.feature import SERVED, Feature
from transport.shell.answers import Done
from transport.shell.guard import json_response, raw_json_response
from transport.shell.inputs import read_body
from transport.shell.state import (
    ASK,
    CLIENT_FIGURES,
    CONNECTIONS,
    HTTP_STATS,
    OPENAPI,
    PEERS,
    POLICY,
    STREAMS,
)

log = structlog.get_logger("relay")


async def get_metrics(request: web.Request) -> web.Response:
    """``GET /metrics``: the Prometheus text format (:mod:`transport.handlers.exposition`)."""
    # imported at the first scrape: prometheus-client weighs on the relay's start and size
    from transport.handlers.exposition import CONTENT_TYPE, render  # noqa: PLC0415

    peers, http = request.app[PEERS], request.app[HTTP_STATS]
    policy = request.app[POLICY]
    excluded = sum(policy.exclusions.counts().values()) - http.excluded_before
    body = await render(
        peers,
        request.app[ASK],
        http,
        request.app[STREAMS],
        clients=request.app[CLIENT_FIGURES],
        connections=request.app[CONNECTIONS],
        excluded={"sense": excluded},
        redactions=policy.redactor.counts(),
        features=request.app[SERVED],
    )
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})


async def get_openapi(request: web.Request) -> web.Response:
    """``GET /openapi.json``: the OpenAPI 3.1 description of this API (:mod:`transport.openapi`)."""
    return raw_json_response(request.app[OPENAPI]())


async def post_fault(request: web.Request) -> web.Response:
    """``POST /debug/fault``: make an actor crash on its next message or hang for N seconds.

    Only with ``RELAY_FAULTS=1``. Answers before the fault fires. A capture whose source is
    not configured does not run: a drill on it is a 400 that says so, and nothing changes.
    """
    fault = await read_body(request, CONFIG_BODY_LIMIT, Fault)
    seconds = 0.0 if fault.seconds is UNSET else fault.seconds
    peers, kind = request.app[PEERS], str(fault.kind)
    if fault.actor == "llm_worker":  # a process, drilled from here: the caller may be busy
        chat = peers.local_models.current()
        if chat is None:
            msg = "llm_worker runs with AGENT_API=local, once a tick has called the model"
            raise BadRequest(msg)
        chat.drill(kind, seconds)
        log.warning("debug.fault", actor="http", target=fault.actor, kind=kind, seconds=seconds)
        return json_response(Done(ok=True))
    if fault.actor == "stt_worker":  # the transcriber's process: the transcriber drills it
        if not peers.audio_config.local:
            raise BadRequest("stt_worker runs with STT_API=local only; this relay's is not")
        kind = f"worker_{kind}"
    target = peers.actors.get("stt" if fault.actor == "stt_worker" else fault.actor)
    if target is None:
        raise BadRequest(_not_running(fault.actor, request.app[SERVED]))
    target.tell(RelayActor.inject_fault, kind, seconds)
    log.warning("debug.fault", actor="http", target=fault.actor, kind=fault.kind, seconds=seconds)
    return json_response(Done(ok=True))


def _not_running(actor: str, features: tuple[Feature, ...]) -> str:
    """Why a drill's ``actor`` is not there: an actor that runs only when its setting is set
    (a capture of a source that is not configured), or one this relay does not start."""
    settings = {name: setting for feature in features for name, setting in feature.set_by}
    setting = settings.get(actor)
    why = f"its source is not configured ({setting} is empty)" if setting else "it is not started"
    return f"actor {actor} is not running in this relay: {why}"
