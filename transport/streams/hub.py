"""A hub: the fan-out of one published cell to its streams and long-poll waiters.

How the hubs fit together, and why a client is sent every item once, in order:
:mod:`transport.streams.fanout`. Everything here but :meth:`Hub._published` runs on the transport's
event loop.
"""

from __future__ import annotations

import asyncio
import bisect
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

import structlog

from actors.core.error_text import safe_error_text
from actors.kernel.published import Published
from transport.streams.limits import StreamLimits
from transport.streams.subscriber import DROPPED, SHUTDOWN, Event, Framing, Subscriber, gap_frame
from transport.streams.wakeup import LoopWakeup

log = structlog.get_logger("relay")


S = TypeVar("S")
ReadStored = Callable[[int, int], Awaitable[Sequence[Event]]]
"""``(after, limit)``: up to ``limit`` stored events with an id above ``after``, oldest first
(an actor's table, asked through the bridge)."""


def _event_id(event: Event) -> int:
    return event.id


class Hub(LoopWakeup, Generic[S]):
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

    # -- the loop's side (the publisher's side is LoopWakeup._published) ---------------------

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

        At most :data:`~transport.streams.limits.REPLAY_MAX` events and
        :data:`~transport.streams.limits.REPLAY_MAX_BYTES` bytes, the newest; older ones from
        the table. A ``gap`` event comes first when some are gone. A ``resume`` above the
        newest id (a cursor from an earlier epoch) replays nothing.
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
