"""The transport's fan-out of what actors publish, to streams, overlay sockets and long-polls.

The feed buffer and the digest store publish a snapshot after each commit
(:mod:`actors.kernel.published`). A :class:`Hub` per source listens to that cell and does almost
nothing on the publisher's thread, which is inside ingestion's commit: unless a stream or a
long-poll is waiting it returns at once, and otherwise it schedules one wake-up on the
transport's event loop, into which later publishes coalesce. On the loop the hub reads the
newest snapshot and queues, for each subscriber, the items it has not had yet. No actor
waits for a client: a client that does not keep up is dropped, and its backlog with it.

Framing. Each subscriber says how an event is framed for it (:class:`Framing`): an SSE
stream gets ``id:``/``event:``/``data:`` blocks (:mod:`transport.sse`), the overlay's
WebSocket its own JSON messages (:mod:`transport.overlay`). A frame is made once per event and
framing, whatever the number of subscribers that get it.

Completeness. Ids only grow and a snapshot holds committed items only, so a subscriber's
*cursor* (the highest id queued for it) says exactly what it has had. A stream subscribes
and reads the ring in one step of the loop: every item up to that ring is the replay's, every
later one reaches the queue, with no gap and no duplicate between them. If more than a ring's
worth is committed between two wake-ups, the hub reads the missing items from the owning
actor's table before it queues the newer ones; what is gone from there too is announced with
a ``gap`` event.

Everything here but :meth:`Hub._published` runs on the transport's event loop.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import functools
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import structlog
from aiohttp import web

from actors.core.entries import AgentEntry, AgentSnapshot
from actors.core.error_text import safe_error_text
from actors.core.errors import RelayError
from actors.core.records import FeedSnapshot
from actors.core.shapes import encode
from actors.kernel.published import Published
from transport.answers import StreamCounts, StreamGap

KEEPALIVE_S = 15.0
"""A stream that has sent nothing for this long sends a comment line (``: keepalive``), so
that proxies and load balancers do not close it as idle."""
CLIENT_CHECK_S = 1.0
"""How often an idle stream looks whether its client is still connected. aiohttp does not
tell the handler of a body-less request that its client left, so a gone client holds its
slot for up to this long."""
WRITE_TIMEOUT_S = 5.0
"""A write that a client has not taken within this long (it stopped reading and the socket's
buffers are full) drops the client."""
MAX_BACKLOG = 1000
"""Events queued for one client and not yet written; one more drops it. A client that keeps
up has a few at most: the queue is emptied into the socket at every wake-up."""
MAX_BACKLOG_BYTES = 4 * 1024 * 1024
"""Bytes queued for one client and not yet written; more drops it (16 feed items of the
largest size, 256 KiB, or thousands of usual ones)."""
REPLAY_MAX = 1000
"""Events a reconnecting client is sent at most; older ones are announced by a ``gap``."""
REPLAY_MAX_BYTES = 4 * 1024 * 1024
"""Bytes of replayed events at most; the newest are kept."""
OVERLAY_SLOTS = 1
"""Overlay sockets admitted even when the streams have taken every slot
(``RELAY_MAX_STREAMS``): whatever holds the streams, the HUD still connects."""
RETRY_AFTER_S = 5
"""The ``Retry-After`` of a 503 for a stream refused because all slots are taken."""
LONG_POLL_MAX_S = 60.0
"""The longest ``wait`` a ``GET /agent/digest`` long-poll may ask for."""

DROPPED = "dropped"
SHUTDOWN = "shutdown"
OVERLAY = "overlay"
"""The framing name of the overlay's sockets on the feed hub (:mod:`transport.overlay`): its
clients and drops are counted apart from the SSE streams'."""

log = structlog.get_logger("relay")


class StreamRefused(RelayError):
    """No stream now: every slot is taken or the relay is stopping (HTTP 503 + Retry-After)."""

    def __init__(self, message: str, retry_after_s: int = RETRY_AFTER_S) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """The bounds above, fixed for one transport incarnation (tests lower them)."""

    keepalive_s: float
    client_check_s: float
    write_timeout_s: float
    max_backlog: int
    max_backlog_bytes: int
    replay_max: int
    replay_max_bytes: int

    @classmethod
    def current(cls) -> StreamLimits:
        """The module's constants as they are now."""
        return cls(
            keepalive_s=KEEPALIVE_S,
            client_check_s=CLIENT_CHECK_S,
            write_timeout_s=WRITE_TIMEOUT_S,
            max_backlog=MAX_BACKLOG,
            max_backlog_bytes=MAX_BACKLOG_BYTES,
            replay_max=REPLAY_MAX,
            replay_max_bytes=REPLAY_MAX_BYTES,
        )


class Event(Protocol):
    """What a stream sends: a feed item or an agent entry."""

    @property
    def id(self) -> int: ...

    @property
    def json(self) -> bytes: ...


S = TypeVar("S")
ReadStored = Callable[[int, int], Awaitable[Sequence[Event]]]
"""``(after, limit)``: up to ``limit`` stored events with an id above ``after``, oldest first
(an actor's table, asked through the bridge)."""


def _event_id(event: Event) -> int:
    return event.id


def gap_frame(after: int, oldest: int) -> bytes:
    """The ``gap`` event: what came after ``after`` and before ``oldest`` is gone."""
    return b"event: gap\ndata: " + encode(StreamGap(after=after, oldest=oldest)) + b"\n\n"


@dataclass(frozen=True, slots=True, eq=False)
class Framing:
    """How one kind of subscriber is sent events: the frame of an event, and of a gap.

    Compared by identity: each framing is made once (a hub's SSE framing, the overlay's), and
    the hub caches frames per framing during a fan-out.
    """

    name: str
    """The subscribers' label in ``/health.streams`` and ``relay_stream_clients``."""
    event: Callable[[Event], bytes]
    gap: Callable[[int, int], bytes] | None = None
    """The frame announcing that items after the first id and before the second are gone;
    ``None``: such a client is told nothing of it."""


class Subscriber:
    """One client of a hub: its cursor, its framing and the frames queued for it."""

    __slots__ = (
        "_abort",
        "_bytes",
        "_frames",
        "_ready",
        "closed",
        "cursor",
        "framing",
        "peer",
        "writing",
    )

    def __init__(self, cursor: int, abort: Callable[[], None], peer: str, framing: Framing) -> None:
        self.cursor = cursor
        """The highest id queued (or replayed) for this client."""
        self.closed: str | None = None
        """Why the stream ends (:data:`DROPPED`, :data:`SHUTDOWN`); ``None`` while it runs."""
        self.writing = False
        """Whether the handler is inside a write to the client."""
        self.peer = peer
        self.framing = framing
        self._frames: list[bytes] = []
        self._bytes = 0
        self._ready = asyncio.Event()
        self._abort = abort

    def put(self, frame: bytes) -> None:
        """Queue one frame for the handler to write."""
        self._frames.append(frame)
        self._bytes += len(frame)
        self._ready.set()

    @property
    def backlog(self) -> tuple[int, int]:
        """Frames and bytes queued and not yet taken by the handler."""
        return len(self._frames), self._bytes

    def take(self) -> list[bytes]:
        """Every queued frame, oldest first; the queue is empty afterwards."""
        frames, self._frames, self._bytes = self._frames, [], 0
        self._ready.clear()
        return frames

    async def wait(self, timeout_s: float | None) -> None:
        """Until a frame is queued, the stream is closed, or ``timeout_s`` passed (``None``:
        no timeout)."""
        if timeout_s is None:
            await self._ready.wait()
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                await self._ready.wait()

    def close(self, reason: str, *, abort: bool) -> None:
        """End the stream; ``abort`` also drops the connection and what it has buffered."""
        self.closed = reason
        self._ready.set()
        if abort:
            self._abort()


class Hub(Generic[S]):
    """The fan-out of one published cell to its streams and long-poll waiters."""

    def __init__(
        self,
        kind: str,
        view: Published[S],
        items: Callable[[S], Sequence[Event]],
        read_stored: ReadStored,
        limits: StreamLimits,
    ) -> None:
        self.kind = kind
        """``feed`` or ``agent``: the streams' ``event:`` name."""
        self._kind = kind.encode()
        self._view = view
        self._items = items
        self._read_stored = read_stored
        self._limits = limits
        self._loop: asyncio.AbstractEventLoop | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._subscribers: set[Subscriber] = set()
        self._waiters: set[asyncio.Future[None]] = set()
        self._listening = False
        """Whether a stream or a waiter listens; read on the publisher's thread."""
        self._scheduled = False
        """Whether a wake-up is already scheduled on the loop; set on the publisher's thread."""
        self._filling: asyncio.Task[None] | None = None
        self.sse = Framing(kind, self.frame, gap_frame)
        """The framing of this hub's Server-Sent Event streams."""
        self.clients: Counter[str] = Counter()
        """Clients being served (from admission to the handler's end), by framing name."""
        self.drops: Counter[str] = Counter()
        """Clients dropped for not keeping up, by framing name."""

    @property
    def open(self) -> int:
        """Clients being served, every framing together (they share the stream slots)."""
        return sum(self.clients.values())

    @property
    def dropped(self) -> int:
        """Clients dropped for not keeping up, every framing together."""
        return sum(self.drops.values())

    @property
    def value(self) -> S:
        """The newest snapshot of the cell."""
        return self._view.value

    # -- lifecycle (the app's startup, shutdown and cleanup) -----------------------------------

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Listen to the cell, waking up on ``loop``."""
        self.detach()
        self._loop = loop
        self._unsubscribe = self._view.subscribe(self._published)

    def detach(self) -> None:
        """Stop listening to the cell (a new transport incarnation attaches its own hub)."""
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()

    def close_all(self) -> None:
        """End every stream and answer every waiter now (the transport is stopping)."""
        if self._filling is not None:
            self._filling.cancel()
            self._filling = None
        subscribers, self._subscribers = self._subscribers, set()
        for sub in subscribers:
            # A client in the middle of a write is behind: drop it rather than wait for it.
            sub.close(SHUTDOWN, abort=sub.writing)
        self._answer_waiters()
        self._listening = False

    # -- the publisher's side ------------------------------------------------------------------

    def _published(self, _snapshot: S) -> None:
        """The cell's listener, on the publisher's thread inside its commit: keep it cheap."""
        loop = self._loop
        if loop is None or loop.is_closed():  # the transport died without its cleanup
            self.detach()
            return
        if not self._listening or self._scheduled:
            return
        self._scheduled = True
        try:
            loop.call_soon_threadsafe(self._wake)
        except RuntimeError:  # the loop closed since the check above
            self.detach()

    # -- the loop's side -----------------------------------------------------------------------

    def _wake(self) -> None:
        # Clear the flag before reading the cell: a publish after this line schedules a new
        # wake-up, and one before it is in the snapshot read below.
        self._scheduled = False
        self._answer_waiters()
        self._update_listening()
        if self._filling is None:  # else the fill delivers the rest when it is done
            self._deliver(fill=True)

    def _answer_waiters(self) -> None:
        waiters, self._waiters = self._waiters, set()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _update_listening(self) -> None:
        self._listening = bool(self._subscribers or self._waiters)

    def _deliver(self, *, fill: bool) -> None:
        """Queue what the newest snapshot holds beyond each subscriber's cursor.

        With ``fill``, items that left the ring before the hub saw them are read from the
        table first; without it (the last fill found nothing), they become a ``gap``.
        """
        if not self._subscribers:
            return
        items = self._items(self._view.value)
        if not items:
            return
        low = min(sub.cursor for sub in self._subscribers)
        if low >= items[-1].id:
            return
        first = items[0].id
        if fill and low + 1 < first:
            assert self._loop is not None, "attached before any subscriber"
            self._filling = self._loop.create_task(self._fill(low, first))
            return
        self._fan_out(items)

    async def _fill(self, low: int, first: int) -> None:
        """Read the items between ``low`` and the ring's ``first`` from the table, queue them,
        then what the ring holds now."""
        limit = min(first - low - 1, max(1, self._limits.max_backlog // 2))
        try:
            stored = await self._read_stored(low, limit)
        except Exception as exc:  # keeps the fan-out going: the subscribers get a gap instead
            log.warning(
                "stream.fill_failed", actor="http", stream=self.kind, error=safe_error_text(exc)
            )
            stored = ()
        finally:
            self._filling = None
        older = [event for event in stored if low < event.id < first]
        if older:
            self._fan_out(older)
        self._deliver(fill=bool(older))  # another fill only while fills make progress

    def _fan_out(self, items: Sequence[Event]) -> None:
        cache: dict[Framing, dict[int, bytes]] = {}
        limits = self._limits
        for sub in list(self._subscribers):
            framing = sub.framing
            frames = cache.get(framing)
            if frames is None:
                frames = cache[framing] = {}
            start = bisect.bisect_right(items, sub.cursor, key=_event_id)
            for event in items[start:]:
                if event.id > sub.cursor + 1 and framing.gap is not None:
                    sub.put(framing.gap(sub.cursor, event.id))
                frame = frames.get(event.id)
                if frame is None:
                    frame = frames[event.id] = framing.event(event)
                sub.put(frame)
                sub.cursor = event.id
            count, size = sub.backlog
            if count > limits.max_backlog or size > limits.max_backlog_bytes:
                self.drop(sub, "backlog")

    def frame(self, event: Event) -> bytes:
        """The SSE frame of one event: ``id``, ``event`` and its JSON on one ``data`` line."""
        return b"id: %d\nevent: %s\ndata: %s\n\n" % (event.id, self._kind, event.json)

    # -- streams -------------------------------------------------------------------------------

    def subscribe(
        self, abort: Callable[[], None], peer: str, framing: Framing | None = None
    ) -> tuple[Subscriber, Sequence[Event]]:
        """A new subscriber, live from the newest item, and the ring it starts after.

        ``framing``: how its events are framed; by default as Server-Sent Events
        (:attr:`sse`). The caller must :meth:`release` it when its stream ends.
        """
        # Listening first: a publish after the read below wakes the hub, and one before it is
        # in the ring that the replay is made of.
        self._listening = True
        items = self._items(self._view.value)
        framing = framing or self.sse
        sub = Subscriber(items[-1].id if items else 0, abort, peer, framing)
        self._subscribers.add(sub)
        self.clients[framing.name] += 1
        return sub, items

    def release(self, sub: Subscriber) -> None:
        """The stream of ``sub`` ended: free its slot."""
        self._subscribers.discard(sub)
        self.clients[sub.framing.name] -= 1
        self._update_listening()

    def drop(self, sub: Subscriber, reason: str) -> None:
        """Drop a client that does not keep up: its stream ends and its connection closes."""
        if sub.closed is not None:
            return
        self._subscribers.discard(sub)
        self._update_listening()
        self.drops[sub.framing.name] += 1
        count, size = sub.backlog
        log.warning(
            "stream.dropped_slow",
            actor="http",
            stream=sub.framing.name,
            reason=reason,
            backlog=count,
            backlog_bytes=size,
            peer=sub.peer,
        )
        sub.close(DROPPED, abort=True)

    async def replay(self, resume: int, ring: Sequence[Event]) -> list[bytes]:
        """The frames of what came after ``resume`` up to ``ring`` (the subscriber's start).

        At most :data:`REPLAY_MAX` events and :data:`REPLAY_MAX_BYTES` bytes, the newest;
        older ones from the table. A ``gap`` event comes first when some are gone. A
        ``resume`` above the newest id (a cursor from an earlier epoch) replays nothing.
        """
        newest = ring[-1].id if ring else 0
        if resume >= newest:
            return []
        limits = self._limits
        start = max(resume, newest - limits.replay_max)
        first = ring[0].id
        older: list[Event] = []
        if start + 1 < first:
            try:
                stored = await self._read_stored(start, min(first - start - 1, limits.replay_max))
            except Exception as exc:  # keeps the stream: the client gets a gap instead
                log.warning(
                    "stream.replay_failed",
                    actor="http",
                    stream=self.kind,
                    error=safe_error_text(exc),
                )
                stored = ()
            older = [event for event in stored if start < event.id < first]
        events = [*older, *ring[bisect.bisect_right(ring, start, key=_event_id) :]]
        frames = [self.frame(event) for event in events]
        size, keep = 0, len(frames)
        while keep > 0 and size + len(frames[keep - 1]) <= limits.replay_max_bytes:
            keep -= 1
            size += len(frames[keep])
        keep = min(keep, len(frames) - 1)  # the newest is sent whatever its size
        events, frames = events[keep:], frames[keep:]
        if events[0].id > resume + 1:
            frames.insert(0, gap_frame(resume, events[0].id))
        return frames

    # -- long-polls ----------------------------------------------------------------------------

    def waiter(self) -> asyncio.Future[None]:
        """A future resolved at the next publish; :meth:`forget` it when done."""
        assert self._loop is not None, "attached at the app's startup"
        waiter: asyncio.Future[None] = self._loop.create_future()
        self._waiters.add(waiter)
        self._listening = True
        return waiter

    def forget(self, waiter: asyncio.Future[None]) -> None:
        """The long-poll that asked for ``waiter`` is done."""
        self._waiters.discard(waiter)
        self._update_listening()


class Streams:
    """The feed and agent hubs of one transport incarnation, and the slots they share."""

    def __init__(
        self,
        feed: Hub[FeedSnapshot],
        agent: Hub[AgentSnapshot],
        max_streams: int,
        limits: StreamLimits,
    ) -> None:
        self.feed = feed
        self.agent = agent
        self.max_streams = max_streams
        self.limits = limits
        self.closing = False

    def subscribe(
        self, hub: Hub[Any], request: web.Request, framing: Framing | None = None
    ) -> tuple[Subscriber, Sequence[Event]]:
        """Admit ``request``'s stream (or overlay socket) on ``hub`` (see :meth:`Hub.subscribe`).

        Streams and overlay sockets share :attr:`max_streams` slots; beyond them, an overlay
        socket is still admitted while fewer than :data:`OVERLAY_SLOTS` are open, so that
        streams cannot lock the HUD out.

        Raises:
            StreamRefused: every slot is taken, or the relay is stopping.
        """
        if self.closing:
            msg = "the relay is stopping; reconnect to its next start"
            raise StreamRefused(msg)
        taken = self.feed.open + self.agent.open
        if taken >= self.max_streams and not (
            framing is not None
            and framing.name == OVERLAY
            and self.feed.clients[OVERLAY] < OVERLAY_SLOTS
        ):
            msg = f"too many streams ({taken} open, at most {self.max_streams}); retry later"
            raise StreamRefused(msg)
        return hub.subscribe(functools.partial(abort, request), request.remote or "", framing)

    async def newer_entry(self, after: int, wait_s: float) -> AgentEntry | None:
        """The newest agent entry once its id is above ``after``, or after ``wait_s``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while True:
            waiter = self.agent.waiter()  # first: a publish after the read below resolves it
            try:
                latest = self.agent.value.latest
                remaining = deadline - loop.time()
                if (latest is not None and latest.id > after) or remaining <= 0 or self.closing:
                    return latest
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
        return StreamCounts(**counts, dropped=sum(dropped for _, dropped in clients.values()))

    async def on_startup(self, _app: web.Application) -> None:
        """Listen to both cells from the transport's loop."""
        loop = asyncio.get_running_loop()
        self.feed.attach(loop)
        self.agent.attach(loop)

    async def on_shutdown(self, _app: web.Application) -> None:
        """End every stream and long-poll, so the server does not wait for them."""
        self.closing = True
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
