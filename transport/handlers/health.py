"""``GET /health``: counts, agent figures and every actor's state."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import structlog
from aiohttp import web
from msgspec import UNSET

from actors.agent.digest_store import DigestStore
from actors.agent.ticker import Ticker
from actors.core.errors import (
    ActorUnavailable,
)
from actors.ingest.feed_buffer import FeedBuffer
from actors.ingest.sense_buffer import SenseBuffer
from transport.agent.local import local_health, local_stats
from transport.answers import ActorState, Storage
from transport.guard import json_response
from transport.handlers.health_answers import AgentHealth, Health
from transport.host.feature import SERVED
from transport.state import ACCESS, ASK, CLIENT_FIGURES, PEERS, STREAMS

log = structlog.get_logger("relay")


async def get_health(request: web.Request) -> web.Response:
    """``GET /health``: counts, agent stats, the audio path and every actor's state; 503 if
    an actor is stuck.

    Each figure is asked of the actor that owns it, after the request arrived, and nothing
    is cached: a ``/health`` asked after a write's answer shows that write. An actor that
    does not answer within the actor timeout makes the answer a 503 naming it.

    Each feature's section is its own (its :class:`~transport.host.feature.Feature`'s
    ``health``). The audio section is read from what the audio actors last published
    (:func:`~transport.audio.health.audio_health`), and never makes it a 503: a source that
    cannot be captured (a device unplugged, a program missing) or a speech service that fails
    leaves the relay serving everything else, and a monitor that restarts the relay on a 503
    would restart it in a loop without bringing the device back. ``audio.sources.*.state`` and
    ``audio.transcriber.state`` say it instead, and ``/metrics`` gives them as gauges to alert
    on.
    """
    body, status = await health_answer(request)
    return json_response(body, status)


async def health_answer(request: web.Request) -> tuple[Health, int]:
    """``/health``'s answer to ``request`` (what its caller may see) and its status."""
    peers, ask = request.app[PEERS], request.app[ASK]
    names = ("messages", "senseEvents", "agent", "config", "ticker")
    results = await asyncio.gather(
        ask(peers.feed, FeedBuffer.count),
        ask(peers.sense, SenseBuffer.count),
        ask(peers.digest, DigestStore.stats),
        ask(peers.ticker, Ticker.config),
        ask(peers.ticker, Ticker.status),
        return_exceptions=True,
    )
    answers = dict(zip(names, results, strict=True))
    errors = [str(v) for v in answers.values() if isinstance(v, BaseException)]
    for value in answers.values():
        if isinstance(value, BaseException) and not isinstance(value, ActorUnavailable):
            raise value
    agent: dict[str, Any] = {}
    config = answers["config"]
    if not isinstance(config, BaseException):
        agent.update(
            enabled=config.enabled,
            active=config.active,
            hasApiKey=bool(config.api_key),
            model=config.model,
            intervalMs=config.interval_ms,
            debounceMs=config.effective_debounce_ms,
            cooldownMs=config.cooldown_ms,
        )
    for part in (answers["agent"], answers["ticker"]):
        if isinstance(part, dict):
            agent.update(part)
    agent["responseFormats"] = peers.formats.value.to_json()
    if (local := local_stats(peers.local_models)) is not None:
        agent["local"] = local_health(local)
    authorized = request.app[ACCESS].authorized(request)
    if not authorized:
        for key in PRIVATE_HEALTH_FIELDS:
            if key in agent:
                agent[key] = None
    counts = [answers[name] for name in ("messages", "senseEvents")]
    sections = {
        section.name: (await section.read(peers, ask, private=authorized)).value
        for feature in request.app[SERVED]
        for section in feature.health
    }
    body = Health(
        ok=not errors,
        error="; ".join(errors) if errors else UNSET,
        epoch=peers.storage.epoch,
        messages=counts[0] if isinstance(counts[0], int) else None,
        sense_events=counts[1] if isinstance(counts[1], int) else None,
        agent=msgspec.convert(agent, AgentHealth),
        **sections,
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
        storage=msgspec.convert(peers.storage.to_json(), Storage),
        streams=request.app[STREAMS].health(),
        profiling=request.app[CLIENT_FIGURES].shape(extra=authorized),
    )
    return body, 200 if not errors else 503


PRIVATE_HEALTH_FIELDS = ("lastDigest", "lastError")
"""``/health.agent`` fields that say what the user did (the digest's first 200 characters,
an LLM error that may quote the prompt): ``null`` for callers without the token, since
``/health`` needs none; so is each client's ``profiling.*.extra`` (its counters, by name),
and so are ``audio.sources.*.lastStderr`` and ``audio.transcriber.lastError`` (a device's
name, a speech service's message)."""
