"""``POST``/``GET /feed`` and ``/sense``: what clients post, and the rings as last committed."""

from __future__ import annotations

import asyncio
import sqlite3

import structlog
from aiohttp import web

from actors.core.bodies import FEED_BODY_LIMIT, SENSE_BODY_LIMIT, FeedInput, sense_input
from actors.core.error_text import safe_text
from actors.core.errors import ActorUnavailable
from actors.core.exclusion import PrivacyState
from actors.core.records import SenseRecord
from actors.core.shapes import encode
from actors.ingest.sense_buffer import stored_json
from actors.kernel.storage import Store
from transport.shell.answers import Accepted, Dropped, FeedList, SenseList, encoded
from transport.shell.follow import follow
from transport.shell.guard import json_response, raw_json_response
from transport.shell.inputs import int_param, read_body, read_json
from transport.shell.state import (
    FEED_ANSWERS,
    FEED_POSTS,
    PEERS,
    POLICY,
    REQUEST_ID,
    SENSE_ANSWERS,
    SENSE_POSTS,
    STREAMS,
)

log = structlog.get_logger("relay")


async def post_feed(request: web.Request) -> web.Response:
    """``POST /feed``: store a message; answers ``{ok, id}``, or ``{ok, dropped: "paused"}``
    while the privacy controls pause capture (nothing is stored)."""
    message = (await read_body(request, FEED_BODY_LIMIT, FeedInput)).record()
    if _paused(request, request.app[PEERS].privacy.value):
        return _paused_answer(request)
    item = await request.app[FEED_POSTS].submit(message)
    return json_response(Accepted(ok=True, id=item.id))


async def get_feed(request: web.Request) -> web.Response:
    """``GET /feed?after=N``: messages with an id above N, oldest first."""
    after = int_param(request, "after", 0)
    peers = request.app[PEERS]
    snapshot = peers.feed_view.value

    def build() -> bytes:
        items = encoded(item.json for item in snapshot.after(after))
        return encode(FeedList(messages=items, epoch=peers.storage.epoch))

    return raw_json_response(request.app[FEED_ANSWERS].get(snapshot, after, build))


async def post_sense(request: web.Request) -> web.Response:
    """``POST /sense``: store a screen event; answers ``{ok, id}``.

    While the privacy controls pause capture, and for an event of an excluded app or window
    (their ``excludeApps``, ``excludeTitles``), the event is dropped here, before any actor
    sees it, and answered ``{ok, dropped: "paused"}`` or ``{ok, dropped: "excluded"}``,
    without an id. Both are read from the controls' published state, without a message.
    """
    # Parsed once, into the payload kept as sent; sense_input checks it as a SenseInput.
    event = sense_input(await read_json(request, SENSE_BODY_LIMIT))
    privacy = request.app[PEERS].privacy.value
    if _paused(request, privacy):
        return _paused_answer(request)
    reason = request.app[POLICY].exclusions.check(event, privacy.rule)
    if reason is not None:  # the title is not logged: it may be what is private
        log.debug("sense.excluded", actor="http", reason=reason, request_id=request.get(REQUEST_ID))
        return json_response(Dropped(ok=True, dropped="excluded"))
    stored = await request.app[SENSE_POSTS].submit(event)
    return json_response(Accepted(ok=True, id=stored.id))


def _paused(request: web.Request, privacy: PrivacyState) -> bool:
    """Whether ``privacy`` (the controls as last published) pauses capture now."""
    return privacy.paused and privacy.paused_at(request.app[PEERS].clock.now_ms())


def _paused_answer(request: web.Request) -> web.Response:
    log.debug("ingest.paused", actor="http", request_id=request.get(REQUEST_ID))
    return json_response(Dropped(ok=True, dropped="paused"))


async def get_sense(request: web.Request) -> web.Response:
    """``GET /sense?after=N&meta_only=true``: events above N; meta_only drops image data.

    The ring holds the image data of its newest few events only: the others' JSON is read
    from the ``sense`` table, in a worker thread, without asking the sense buffer.
    """
    after = int_param(request, "after", 0)
    meta_only = request.query.get("meta_only", "").lower() in ("true", "1")
    peers = request.app[PEERS]
    snapshot = peers.sense_view.value
    answers, query = request.app[SENSE_ANSWERS], (after, meta_only)
    body = answers.cached(snapshot, query)
    if body is None:
        events = snapshot.after(after)
        bodies, whole = await _sense_bodies(events, meta_only, peers.storage.stores["sense"])
        body = encode(SenseList(events=encoded(bodies), epoch=peers.storage.epoch))
        if whole:
            answers.keep(snapshot, query, body)
    return raw_json_response(body)


async def _sense_bodies(
    events: tuple[SenseRecord, ...], meta_only: bool, store: Store
) -> tuple[list[bytes], bool]:
    """Each event's JSON as served, and whether the answer holds every event.

    The rows of a ring's events are pruned only once a newer ring without them is committed;
    an answer built from an older snapshot may then find some gone. It leaves out every
    event up to the newest whose row is gone: the ring less its oldest events, which the
    table no longer holds.
    """
    if meta_only:
        return [e.json_meta_only for e in events], True
    spilled = [e.id for e in events if e.spilled]
    if not spilled:
        return [e.json for e in events], True
    try:
        rows = await asyncio.to_thread(stored_json, store, spilled)
    except sqlite3.Error as exc:  # the file moved or is unreadable: a 503, the server lives on
        log.warning("sense.rows_unreadable", actor="http", error=safe_text(str(exc)))
        raise ActorUnavailable("the sense events' image data could not be read") from exc
    gone = max((i for i in spilled if i not in rows), default=0)
    return [rows[e.id] if e.spilled else e.json for e in events if e.id > gone], not gone


async def get_feed_stream(request: web.Request) -> web.StreamResponse:
    """``GET /feed/stream``: Server-Sent Events, one ``feed`` event per feed item."""
    return await follow(request, request.app[STREAMS].feed)
