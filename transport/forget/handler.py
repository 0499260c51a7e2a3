"""``POST /privacy/forget`` and ``GET /export``: a time range forgotten, or taken away.

A forget tells each actor that keeps what the user saw or heard to forget what arrived in
the range (each deletes its own rows and drops its own memory), and answers their counts
added up, once every file is rid of the bytes. An export reads the files itself
(:mod:`transport.forget.export`) and streams them.
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any, cast

import structlog
from aiohttp import web

from actors.agent.digest_store import DigestStore
from actors.agent.situation_writer import SituationWriter
from actors.agent.ticker import Ticker
from actors.audio.transcriber import Transcriber
from actors.common.forgetting import NO_END, Forgotten, Span
from actors.core.bodies import convert
from actors.core.error_text import safe_text
from actors.core.errors import ActorUnavailable
from actors.ingest.feed_buffer import FeedBuffer
from actors.ingest.sense_buffer import SenseBuffer
from actors.kernel.base import ChildHandle
from transport.forget.answers import FORGET_BODY_LIMIT, NDJSON, ForgetAnswer
from transport.forget.export import export_lines, next_chunk
from transport.shell.guard import json_response
from transport.shell.inputs import int_param, read_body
from transport.shell.state import ASK, PEERS

log = structlog.get_logger("relay")


async def post_forget(request: web.Request) -> web.Response:
    """``POST /privacy/forget {since, until}``: forget what arrived in the range.

    The feed and sense buffers, the digest store (its entries, their search rows, a pending
    escalation made from the range), the transcriber's filters and the SITUATION.md writer
    each forget their own part; the answer comes once each has, with the counts by kind.
    Counters and cost totals stay. A 503 (an actor down) may leave some parts forgotten and
    others not: the same request again finishes the work.
    """
    span = await read_body(request, FORGET_BODY_LIMIT, Span)
    peers, ask = request.app[PEERS], request.app[ASK]
    reach_ms = (await ask(peers.ticker, Ticker.config)).max_age_ms
    parts = await asyncio.gather(
        ask(peers.feed, FeedBuffer.forget, span),
        ask(peers.sense, SenseBuffer.forget, span),
        ask(peers.digest, DigestStore.forget, span, reach_ms),
        ask(peers.audio.stt, Transcriber.forget, span),
    )
    forgotten = sum(parts, Forgotten())
    writer = peers.actors.get("situation")
    if writer is not None:  # after the digest store: a situation it posted is written first
        situation = cast(ChildHandle[SituationWriter], writer)
        forgotten += await ask(situation, SituationWriter.forget, span, reach_ms)
    counts: dict[str, Any] = {f: getattr(forgotten, f) for f in forgotten.__struct_fields__}
    log.info("privacy.forgotten", actor="http", since=span.since, until=span.until, **counts)
    return json_response(
        ForgetAnswer(ok=True, since=span.since, until=span.until, forgotten=forgotten)
    )


def _span_of(request: web.Request) -> Span:
    """The query's ``since`` (0 by default) and ``until`` (no end by default): whole
    numbers, ``since <= until``."""
    since = int_param(request, "since", 0)
    until = int_param(request, "until", NO_END)
    return convert({"since": since, "until": until}, Span)


async def get_export(request: web.Request) -> web.StreamResponse:
    """``GET /export?since=&until=``: what arrived in the range, as NDJSON, in time order.

    Streamed a chunk at a time, each read in a worker thread: however long the range, the
    answer holds a page of each kind in memory, never the whole.
    """
    span = _span_of(request)
    storage = request.app[PEERS].storage
    name = f"sinain-relay-{span.since}-{span.until}.ndjson"
    response = web.StreamResponse(
        headers={
            "Content-Type": NDJSON,
            "Content-Disposition": f'attachment; filename="{name}"',
            "Cache-Control": "no-store",
        }
    )
    lines = export_lines(storage, span)
    try:
        first = await asyncio.to_thread(next_chunk, lines)
    except sqlite3.Error as exc:  # a file moved or unreadable: a 503, the server lives on
        log.warning("export.unreadable", actor="http", error=safe_text(str(exc)))
        raise ActorUnavailable("the stored data could not be read") from exc
    await response.prepare(request)
    chunk = first if request.method != "HEAD" else b""
    while chunk:
        await response.write(chunk)
        chunk = await asyncio.to_thread(next_chunk, lines)
    await response.write_eof()
    return response
