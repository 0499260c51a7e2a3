"""``GET /health``: every feature's section, the storage, the streams and every actor's
state."""

from __future__ import annotations

import asyncio

import msgspec
import structlog
from aiohttp import web
from msgspec import UNSET

from actors.core.shapes import Shape
from transport.host.feature import SERVED, Reading
from transport.shell.answers import ActorState, CheckState, Storage
from transport.shell.guard import json_response
from transport.shell.state import ACCESS, ASK, CLIENT_FIGURES, PEERS, STREAMS

log = structlog.get_logger("relay")


async def get_health(health: type[Shape], request: web.Request) -> web.Response:
    """``GET /health``: counts, agent stats, the audio path and every actor's state; 503 if
    an actor is stuck.

    Each feature's section is its own (its :class:`~transport.host.feature.Feature`'s
    ``health``), read for this request. Each figure is asked of the actor that owns it, after
    the request arrived, and nothing is cached: a ``/health`` asked after a write's answer
    shows that write. An actor that does not answer within the actor timeout makes the answer
    a 503 naming it.

    The audio section is read from what the audio actors last published
    (:func:`~transport.audio.health.audio_health`), and never makes it a 503: a source that
    cannot be captured (a device unplugged, a program missing) or a speech service that fails
    leaves the relay serving everything else, and a monitor that restarts the relay on a 503
    would restart it in a loop without bringing the device back. ``audio.sources.*.state`` and
    ``audio.transcriber.state`` say it instead, and ``/metrics`` gives them as gauges to alert
    on.
    """
    body, status = await health_answer(health, request)
    return json_response(body, status)


async def health_answer(health: type[Shape], request: web.Request) -> tuple[Shape, int]:
    """``/health``'s answer to ``request`` (what its caller may see) and its status:
    ``health`` is its struct (:func:`~transport.handlers.health_answers.health_shape`)."""
    peers, ask = request.app[PEERS], request.app[ASK]
    authorized = request.app[ACCESS].authorized(request)
    sections = [section for feature in request.app[SERVED] for section in feature.health]
    readings: list[Reading | BaseException] = await asyncio.gather(
        *(section.read(peers, ask, private=authorized) for section in sections),
        return_exceptions=True,
    )
    answered: list[Reading] = []
    for reading in readings:
        if isinstance(reading, BaseException):
            raise reading
        answered.append(reading)
    errors = [error for reading in answered for error in reading.unanswered]
    body = health(
        ok=not errors,
        error="; ".join(errors) if errors else UNSET,
        epoch=peers.storage.epoch,
        **{s.name: reading.value for s, reading in zip(sections, answered, strict=True)},
        actors={
            name: ActorState(
                alive=handle.alive,
                restarts=handle.restarts,
                last_restart=handle.last_restart_ms,
                state=handle.state,
                last_exit=handle.last_exit[0] if handle.last_exit else None,
                last_error=handle.last_exit[1] if handle.last_exit and authorized else None,
            )
            for name, handle in peers.actors.items()
        },
        checks=[
            CheckState(
                check.name,
                check.verdict,
                check.found if authorized else None,
                check.remedy if authorized else None,
            )
            for check in peers.checks.value
        ],
        storage=msgspec.convert(peers.storage.to_json(), Storage),
        streams=request.app[STREAMS].health(),
        profiling=request.app[CLIENT_FIGURES].shape(extra=authorized),
    )
    return body, 200 if not errors else 503
