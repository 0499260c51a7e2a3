"""The ingest feature's fields of ``GET /health``: ``messages`` and ``senseEvents``, the
items each buffer holds, asked of the buffer once the request arrived (``null``, and named,
when it does not answer in time)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from actors.core.errors import ActorUnavailable
from actors.ingest.feed_buffer import FeedBuffer
from actors.ingest.sense_buffer import SenseBuffer
from transport.host.feature import Reading

if TYPE_CHECKING:
    from transport.shell.bridge import Asker
    from transport.shell.state import Peers


async def read_messages(peers: Peers, ask: Asker, *, private: bool) -> Reading:  # noqa: ARG001
    """``messages``: the feed items stored."""
    try:
        return Reading(await ask(peers.feed, FeedBuffer.count))
    except ActorUnavailable as unanswered:
        return Reading(None, (str(unanswered),))


async def read_sense_events(peers: Peers, ask: Asker, *, private: bool) -> Reading:  # noqa: ARG001
    """``senseEvents``: the screen events stored."""
    try:
        return Reading(await ask(peers.sense, SenseBuffer.count))
    except ActorUnavailable as unanswered:
        return Reading(None, (str(unanswered),))
