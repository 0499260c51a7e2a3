"""``POST``/``GET /feed`` and ``/sense``: what clients post, and the rings as last committed."""

from __future__ import annotations

import structlog
from aiohttp import web

from actors.core.bodies import FEED_BODY_LIMIT, SENSE_BODY_LIMIT, FeedInput, sense_input
from actors.core.shapes import encode
from transport.answers import Accepted, Dropped, FeedList, SenseList, encoded
from transport.guard import json_response, raw_json_response
from transport.inputs import int_param, read_body, read_json
from transport.state import (
    FEED_ANSWERS,
    FEED_POSTS,
    PEERS,
    POLICY,
    REQUEST_ID,
    SENSE_ANSWERS,
    SENSE_POSTS,
)

log = structlog.get_logger("relay")


async def post_feed(request: web.Request) -> web.Response:
    """``POST /feed``: store a message; answers ``{ok, id}``."""
    message = (await read_body(request, FEED_BODY_LIMIT, FeedInput)).record()
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

    An event of an excluded app or window (``RELAY_EXCLUDE_APPS``/``_TITLES``) is dropped
    here, before any actor sees it, and answered ``{ok, dropped: "excluded"}``, without an id.
    """
    # Parsed once, into the payload kept as sent; sense_input checks it as a SenseInput.
    event = sense_input(await read_json(request, SENSE_BODY_LIMIT))
    reason = request.app[POLICY].exclusions.check(event)
    if reason is not None:  # the title is not logged: it may be what is private
        log.debug("sense.excluded", actor="http", reason=reason, request_id=request.get(REQUEST_ID))
        return json_response(Dropped(ok=True, dropped="excluded"))
    stored = await request.app[SENSE_POSTS].submit(event)
    return json_response(Accepted(ok=True, id=stored.id))


async def get_sense(request: web.Request) -> web.Response:
    """``GET /sense?after=N&meta_only=true``: events above N; meta_only drops image data."""
    after = int_param(request, "after", 0)
    meta_only = request.query.get("meta_only", "").lower() in ("true", "1")
    peers = request.app[PEERS]
    snapshot = peers.sense_view.value

    def build() -> bytes:
        events = snapshot.after(after)
        bodies = encoded(e.json_meta_only if meta_only else e.json for e in events)
        return encode(SenseList(events=bodies, epoch=peers.storage.epoch))

    return raw_json_response(request.app[SENSE_ANSWERS].get(snapshot, (after, meta_only), build))
