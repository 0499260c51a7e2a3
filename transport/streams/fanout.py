"""The transport's fan-out of what actors publish, to streams, overlay sockets and long-polls.

The feed buffer and the digest store publish a snapshot after each commit
(:mod:`actors.kernel.published`). A :class:`Hub` per source listens to that cell and does almost
nothing on the publisher's thread, which is inside ingestion's commit: unless a stream or a
long-poll is waiting it returns at once, and otherwise it schedules one wake-up on the
transport's event loop, into which later publishes coalesce. On the loop the hub reads the
newest snapshot and queues, for each subscriber, the items it has not had yet. No actor
waits for a client: a client that does not keep up is dropped, and its backlog with it.

Framing. Each subscriber says how an event is framed for it (:class:`Framing`): an SSE
stream gets ``id:``/``event:``/``data:`` blocks (:mod:`transport.streams.sse`), the overlay's
WebSocket its own JSON messages (:mod:`transport.overlay.socket`). A frame is made once per
event and framing, whatever the number of subscribers that get it.

Completeness. Ids only grow and a snapshot holds committed items only, so a subscriber's
*cursor* (the highest id queued for it) says exactly what it has had. A stream subscribes
and reads the ring in one step of the loop: every item up to that ring is the replay's, every
later one reaches the queue, with no gap and no duplicate between them. If more than a ring's
worth is committed between two wake-ups, the hub reads the missing items from the owning
actor's table before it queues the newer ones; what is gone from there too is announced with
a ``gap`` event.

Everything in the hubs (:mod:`transport.streams.hub`) but
:meth:`~transport.streams.hub.Hub._published` runs on the transport's event loop; their
clients are :mod:`transport.streams.subscriber`'s, their bounds
:mod:`transport.streams.limits`'. Here: the two hubs of a transport, the stream slots they
share with the health stream and the long-polls, the long-polls.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from aiohttp import web

from actors.core.errors import RelayError
from actors.core.records import FeedSnapshot
from transport.streams.answers import StreamCounts
from transport.streams.hub import Hub
from transport.streams.limits import StreamLimits
from transport.streams.subscriber import Event, Framing, Subscriber

T = TypeVar("T")
S = TypeVar("S")
"""The snapshot the agent's hub reads (the digest store's: see
:data:`transport.shell.state.STREAMS`)."""

OVERLAY_SLOTS = 1
"""Overlay sockets admitted even when the streams have taken every slot
(``RELAY_MAX_STREAMS``): whatever holds the streams, the HUD still connects."""
RETRY_AFTER_S = 5
"""The ``Retry-After`` of a 503 for a stream refused because all slots are taken."""
LONG_POLL_MAX_S = 60.0
"""The longest ``wait`` a long-poll (``GET /agent/digest``, ``/escalation/pending``) may ask
for."""

OVERLAY = "overlay"
"""The framing name of the overlay's sockets on the feed hub (:mod:`transport.overlay.socket`): its
clients and drops are counted apart from the SSE streams'."""


class StreamRefused(RelayError):
    """No stream or long-poll now: every slot is taken or the relay is stopping (HTTP 503 +
    Retry-After)."""

    def __init__(self, message: str, retry_after_s: int = RETRY_AFTER_S) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class Streams(Generic[S]):
    """The feed and agent hubs of one transport incarnation, and the slots they share; ``S``:
    the snapshot the agent's hub reads."""

    def __init__(
        self,
        feed: Hub[FeedSnapshot],
        agent: Hub[S],
        max_streams: int,
        limits: StreamLimits,
    ) -> None:
        self.feed = feed
        self.agent = agent
        self.max_streams = max_streams
        self.limits = limits
        self.closing = False
        self._stopping = asyncio.Event()
        self.health_open = 0
        """Health streams open: they hold slots that no hub feeds."""
        self.long_polls = 0
        """Long-polls waiting (``GET /agent/digest`` and ``/escalation/pending`` with
        ``wait``): they hold slots too."""

    def subscribe(
        self, hub: Hub[Any], request: web.Request, framing: Framing | None = None
    ) -> tuple[Subscriber, Sequence[Event]]:
        """Admit ``request``'s stream (or overlay socket) on ``hub`` (see :meth:`Hub.subscribe`).

        Streams, overlay sockets and waiting long-polls share :attr:`max_streams` slots;
        beyond them, an overlay socket is still admitted while fewer than
        :data:`OVERLAY_SLOTS` are open, so that streams cannot lock the HUD out.

        Raises:
            StreamRefused: every slot is taken, or the relay is stopping.
        """
        overlay = (
            framing is not None
            and framing.name == OVERLAY
            and self.feed.clients[OVERLAY] < OVERLAY_SLOTS
        )
        self._check_slot(overlay=overlay)
        return hub.subscribe(functools.partial(abort, request), request.remote or "", framing)

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one of the shared slots for a stream no hub feeds (the health stream).

        Raises:
            StreamRefused: every slot is taken, or the relay is stopping.
        """
        self._check_slot()
        self.health_open += 1
        try:
            yield
        finally:
            self.health_open -= 1

    def _check_slot(self, *, overlay: bool = False) -> None:
        """Refuse one more stream or long-poll when the slots are taken (but for the overlay's
        own) or the relay is stopping."""
        if self.closing:
            msg = "the relay is stopping; reconnect to its next start"
            raise StreamRefused(msg)
        taken = self.feed.open + self.agent.open + self.health_open + self.long_polls
        if taken >= self.max_streams and not overlay:
            msg = (
                f"too many streams and long-polls ({taken} open, at most {self.max_streams}, "
                "RELAY_MAX_STREAMS); retry later"
            )
            raise StreamRefused(msg)

    async def agent_until(self, check: Callable[[S], T | None], wait_s: float) -> T | None:
        """What ``check`` finds in the digest store's newest snapshot once it finds something
        (read again at each publish), or ``None`` after ``wait_s`` or at shutdown.

        A long-poll that finds something at once answers without a slot; one that waits
        holds one of the slots the streams share for as long as it waits.

        Raises:
            StreamRefused: it would wait, and every slot is taken (or the relay is stopping).
        """
        found = check(self.agent.value)
        if found is not None or self.closing:
            return found
        self._check_slot()
        self.long_polls += 1
        try:
            return await self._wait_for(check, wait_s)
        finally:
            self.long_polls -= 1

    async def _wait_for(self, check: Callable[[S], T | None], wait_s: float) -> T | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while True:
            waiter = self.agent.waiter()  # first: a publish after the read below resolves it
            try:
                found = check(self.agent.value)
                remaining = deadline - loop.time()
                if found is not None or remaining <= 0 or self.closing:
                    return found
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter, remaining)
            finally:
                self.agent.forget(waiter)

    def clients(self) -> dict[str, tuple[int, int]]:
        """Open clients and clients dropped, by stream: ``feed``, ``agent`` and ``overlay``."""
        return {
            "feed": (self.feed.clients[self.feed.kind], self.feed.drops[self.feed.kind]),
            "agent": (self.agent.clients[self.agent.kind], self.agent.drops[self.agent.kind]),
            OVERLAY: (self.feed.clients[OVERLAY], self.feed.drops[OVERLAY]),
        }

    def health(self) -> StreamCounts:
        """``/health.streams``: clients open per stream and clients dropped."""
        clients = self.clients()
        counts = {name: count for name, (count, _) in clients.items()}
        dropped = sum(count for _, count in clients.values())
        return StreamCounts(
            **counts, health=self.health_open, long_polls=self.long_polls, dropped=dropped
        )

    async def on_startup(self, _app: web.Application) -> None:
        """Listen to both cells from the transport's loop."""
        loop = asyncio.get_running_loop()
        self.feed.attach(loop)
        self.agent.attach(loop)

    async def rest(self, seconds: float) -> None:
        """Wait ``seconds``, or only until the relay begins to stop (a stream that looks
        again after a pause then ends at once rather than at its next look)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)

    async def on_shutdown(self, _app: web.Application) -> None:
        """End every stream and long-poll, so the server does not wait for them."""
        self.closing = True
        self._stopping.set()
        self.feed.close_all()
        self.agent.close_all()

    async def on_cleanup(self, _app: web.Application) -> None:
        """Stop listening: a restarted transport listens anew, with hubs of its own."""
        self.feed.detach()
        self.agent.detach()


def abort(request: web.Request) -> None:
    """Close the connection now, discarding what it has buffered."""
    transport = request.transport
    if transport is not None:
        transport.abort()
