"""One client of a hub (:mod:`transport.streams.hub`): the events a stream sends, how they are
framed for it, its cursor and the frames queued for it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from actors.core.shapes import encode
from transport.streams.answers import StreamGap

DROPPED = "dropped"
SHUTDOWN = "shutdown"


class Event(Protocol):
    """What a stream sends: a feed item or an agent entry."""

    @property
    def id(self) -> int: ...

    @property
    def json(self) -> bytes: ...


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
