"""The escalation slot Sinain's agents poll: ``GET /escalation/pending`` (and its long-poll),
``POST /escalation/respond``.

Both answer 200 with ``ok`` saying how it went, as sinain-core does: Sinain's agents read the
body, never the status. A body that is not an answer at all is a 4xx, as everywhere.
"""

from __future__ import annotations

import structlog
from aiohttp import web

from actors.agent.digest_store import DigestStore
from actors.agent.ticker import Ticker
from actors.core.bodies import convert
from actors.core.control_bodies import ESCALATION_BODY_LIMIT, EscalationReply
from actors.core.errors import ActorUnavailable, BadRequest
from actors.escalation.decision import reply_text
from actors.ingest.feed_buffer import FeedBuffer
from transport.escalation.answers import PendingAnswer, RespondAnswer, escalation_config
from transport.shell.guard import json_response
from transport.shell.inputs import read_json, wait_param
from transport.shell.state import ASK, PEERS, STREAMS

log = structlog.get_logger("relay")

MISSING = "missing id or response"


async def get_pending(request: web.Request) -> web.Response:
    """``GET /escalation/pending``: the escalation waiting for an answer, or null.

    Reading does not consume it. With ``wait`` (seconds, above 0 and at most 60) it is a
    long-poll, as ``/agent/digest``'s: the answer comes once one is pending, or (null) once
    ``wait`` has passed. It reads what the digest store last committed.
    """
    streams = request.app[STREAMS]
    if request.query.get("wait"):
        pending = await streams.agent_until(lambda s: s.escalation, wait_param(request))
    else:
        pending = streams.agent.value.escalation
    config = await request.app[ASK](request.app[PEERS].ticker, Ticker.config)
    return json_response(
        PendingAnswer(ok=True, escalation=pending, config=escalation_config(config))
    )


async def post_respond(request: web.Request) -> web.Response:
    """``POST /escalation/respond {id, response}``: the agent's answer, onto the feed.

    The pending id clears the slot; a replaced id within its grace is taken and leaves the
    slot; any other is refused (``ok`` false, a 200). A taken answer is on the feed
    (``[🤖] ...``, the agent channel, priority high) before this answers.

    The slot lets the answer go only once the feed has stored it: when the feed cannot (a
    503, which means nothing was stored), the escalation stays pending and the agent may
    send its answer again. Should the digest store then not answer, the answer is on the
    feed all the same (``ok`` true): the slot keeps the escalation until it is answered
    again or replaced, and a warning says so.
    """
    body = await read_json(request, ESCALATION_BODY_LIMIT)
    if isinstance(body, dict) and any(
        value is None or value == "" or (isinstance(value, str) and value.isspace())
        for value in (body.get("id"), body.get("response"))
    ):
        raise BadRequest(MISSING)
    reply = convert(body, EscalationReply)
    peers, ask = request.app[PEERS], request.app[ASK]
    judged = await ask(peers.digest, DigestStore.respond_escalation, reply.id, take=False)
    _, coding, error = judged
    if error:
        return json_response(RespondAnswer(ok=False, error=error))
    await ask(peers.feed, FeedBuffer.push_reply, reply_text(reply.response, coding=coding))
    try:
        await ask(peers.digest, DigestStore.respond_escalation, reply.id, take=True)
    except ActorUnavailable as exc:  # on the feed already: sending it again would repeat it
        log.warning("escalation.answer_untaken", actor="http", id=reply.id, error=str(exc))
    return json_response(RespondAnswer(ok=True))
