"""``GET``/``POST /privacy``: the privacy controls, read without a message and changed by
their owner (:class:`~actors.privacy.store.PrivacyStore`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from actors.core.control_bodies import PRIVACY_BODY_LIMIT, PrivacyUpdate
from actors.privacy.store import PrivacyStore
from transport.host.feature import Reading
from transport.privacy.answers import controls, health
from transport.shell.guard import json_response
from transport.shell.inputs import read_body
from transport.shell.state import ASK, PEERS

if TYPE_CHECKING:
    from transport.shell.bridge import Asker
    from transport.shell.state import Peers


async def get_privacy(request: web.Request) -> web.Response:
    """``GET /privacy``: the controls in force."""
    peers = request.app[PEERS]
    now = peers.clock.now_ms()
    return json_response(controls(peers.privacy.value, now, peers.matrix, peers.privacy_mode))


async def post_privacy(request: web.Request) -> web.Response:
    """``POST /privacy``: change any of the controls; a bad body changes nothing. Answered
    once the change is stored and in force: the next request sees it."""
    peers = request.app[PEERS]
    update = await read_body(request, PRIVACY_BODY_LIMIT, PrivacyUpdate)
    state = await request.app[ASK](peers.privacy_store, PrivacyStore.change, update)
    return json_response(controls(state, peers.clock.now_ms(), peers.matrix, peers.privacy_mode))


async def read_privacy(peers: Peers, ask: Asker, *, private: bool) -> Reading:  # noqa: ARG001
    """``privacy``: the controls, from what their owner last published."""
    return Reading(health(peers.privacy.value, peers.clock.now_ms(), private=private))
