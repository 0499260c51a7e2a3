"""The agent's endpoints: the digest (and its long-poll), entries, context, configuration,
and the Server-Sent Event streams."""

from __future__ import annotations

import structlog
from aiohttp import web
from msgspec import UNSET

from actors.agent.context_builder import ContextBuilder
from actors.agent.core.config_update import AgentConfigUpdate
from actors.agent.core.entries import AgentRecord, AgentSnapshot
from actors.agent.digest_store import DigestStore
from actors.agent.ticker import Ticker
from actors.core.bodies import CONFIG_BODY_LIMIT
from actors.core.errors import BadRequest
from actors.kernel.search_index import match_expression
from transport.agent.answers import config_answer
from transport.shell.answers import ContextAnswer, DigestAnswer, HistoryAnswer, LastAnswer
from transport.shell.auth import Forbidden
from transport.shell.follow import follow
from transport.shell.guard import json_response
from transport.shell.inputs import int_param, optional_int, read_body, wait_param
from transport.shell.state import ASK, PEERS, POLICY, STREAMS

log = structlog.get_logger("relay")


HISTORY_DEFAULT = 10


HISTORY_MAX = 50


RANGE_DEFAULT = 50


RANGE_MAX = 500


async def get_digest(request: web.Request) -> web.Response:
    """``GET /agent/digest``: the latest digest, or null before the first.

    With ``wait`` (seconds, above 0 and at most 60) it is a long-poll: the answer comes as
    soon as the digest's id is above ``after`` (default 0), or with the current digest (maybe
    null) once ``wait`` has passed. It reads what the digest store last committed.
    """
    if not request.query.get("wait"):
        digest = await request.app[ASK](request.app[PEERS].digest, DigestStore.latest_digest)
        return json_response(DigestAnswer(ok=True, digest=digest))
    wait_s = wait_param(request)
    after = int_param(request, "after", 0)

    def newer(snapshot: AgentSnapshot) -> AgentRecord | None:
        latest = snapshot.latest
        return latest if latest is not None and latest.id > after else None

    streams = request.app[STREAMS]
    latest = await streams.agent_until(newer, wait_s)
    if latest is None:
        latest = streams.agent.value.latest
    return json_response(DigestAnswer(ok=True, digest=latest.digest_shape() if latest else None))


async def get_agent_stream(request: web.Request) -> web.StreamResponse:
    """``GET /agent/stream``: Server-Sent Events, one ``agent`` event per agent entry."""
    return await follow(request, request.app[STREAMS].agent)


async def get_last(request: web.Request) -> web.Response:
    """``GET /agent/last``: the newest agent entry, or null."""
    result = await request.app[ASK](request.app[PEERS].digest, DigestStore.last)
    return json_response(LastAnswer(ok=True, result=result))


async def get_history(request: web.Request) -> web.Response:
    """``GET /agent/history``: the newest entries, or a time range page by page, or a search.

    Without ``since``/``until``/``before``/``q``: newest first, ``limit`` 10 by default
    and 50 at most. With any: entries with ``since <= ts < until`` (epoch ms) from the
    whole retention, newest first, ``limit`` 50 by default and 500 at most; ``next`` is the
    ``before`` cursor of the next page, or null on the last. With ``q``, only the entries whose
    digest or hud has every word of it, each matched as a prefix
    (:func:`~actors.kernel.search_index.match_expression`).
    """
    peers = request.app[PEERS]
    ranged = any(k in request.query for k in ("since", "until", "before", "q"))
    limit = int_param(request, "limit", RANGE_DEFAULT if ranged else HISTORY_DEFAULT)
    if limit < 1:
        msg = f"limit must be at least 1, got {limit}"
        raise BadRequest(msg)
    if not ranged:
        results = await request.app[ASK](peers.digest, DigestStore.history, min(limit, HISTORY_MAX))
        return json_response(HistoryAnswer(ok=True, results=results, epoch=peers.storage.epoch))
    since = optional_int(request, "since")
    until = optional_int(request, "until")
    before = optional_int(request, "before")
    if since is not None and until is not None and until < since:
        msg = "until must not be before since"
        raise BadRequest(msg)
    limit = min(limit, RANGE_MAX)
    if "q" in request.query:
        match = match_expression(request.query["q"])
        results, cursor = await request.app[ASK](
            peers.digest, DigestStore.search, match, since, until, before, limit
        )
    else:
        results, cursor = await request.app[ASK](
            peers.digest, DigestStore.history_range, since, until, before, limit
        )
    return json_response(
        HistoryAnswer(ok=True, results=results, epoch=peers.storage.epoch, next=cursor)
    )


async def get_context(request: web.Request) -> web.Response:
    """``GET /agent/context``: the context window as the next tick would see it, as agents
    may see it (the privacy matrix's ``AGENT_GATEWAY`` column)."""
    peers = request.app[PEERS]
    config = await request.app[ASK](peers.ticker, Ticker.config)
    window = await request.app[ASK](peers.context, ContextBuilder.window, config)
    return json_response(ContextAnswer(ok=True, context=window.shape()))


async def get_config(request: web.Request) -> web.Response:
    """``GET /agent/config``: the runtime configuration; ``hasApiKey``, never the key."""
    config = await request.app[ASK](request.app[PEERS].ticker, Ticker.config)
    return json_response(config_answer(config))


async def post_config(request: web.Request) -> web.Response:
    """``POST /agent/config``: change fields at runtime; a bad field changes nothing.

    The body is decoded first: a malformed one is a 400 whatever it holds. The guard has
    checked the token. ``openrouterApiKey`` is refused (403) while no token is
    set: on a relay anyone on this machine (or a web page, were its origin allowed) can
    call, the key would be theirs to swap, pointing the user's context at their account.
    """
    peers = request.app[PEERS]
    update = await read_body(request, CONFIG_BODY_LIMIT, AgentConfigUpdate)
    if update.openrouter_api_key is not UNSET and not request.app[POLICY].token:
        msg = (
            "openrouterApiKey can be changed over HTTP only when the relay has a token: set "
            "RELAY_TOKEN (and send Authorization: Bearer <token>), or set OPENROUTER_API_KEY "
            "in the relay's environment"
        )
        raise Forbidden(msg)
    config = await request.app[ASK](peers.ticker, Ticker.update_config, update)
    return json_response(config_answer(config, update.clamped()))
