"""A doorbell: the newest news for one actor, and one ring until the actor takes it.

Whoever has news for an actor posts it here, from its own thread. The doorbell keeps only
the newest news not yet taken (``merge`` says how what waits and what came make the newest;
by default what came replaces what waits) and rings the actor (sends it ``ring``, a message
it handles in ``on_receive``) only when no ring is on its way: while the actor is busy or
hung, newer news replaces what waits instead of queueing behind it, so the actor's mailbox
holds one ring at most, and when it takes, it takes the newest.

The doorbell outlives the actor's incarnations (it rings through the stable handle): news
posted while the actor restarts waits here, and the new incarnation looks at :attr:`waiting`
when it starts. A ring that finds no incarnation is not counted, so the next post rings
again. Posting costs a lock, a comparison and, for the first news after a take, one message.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from actors.kernel.base import ChildHandle
from actors.kernel.errors import ActorUnavailable

T = TypeVar("T")


class Doorbell(Generic[T]):
    """The newest news for the actor behind ``actor``, posted from any thread, taken on the
    actor's (a lock keeps each change of the news and the ring whole)."""

    def __init__(
        self, actor: ChildHandle[Any], ring: object, merge: Callable[[T, T], T] | None = None
    ) -> None:
        self._actor = actor
        self._ring = ring
        self._merge = merge
        self._lock = threading.Lock()
        self._waiting: T | None = None
        self._rung = False
        """A ring reached the actor, or it knows what waits, and it has not taken since."""

    def post(self, news: T) -> None:
        """Leave ``news`` in place of (or merged with) what waits, and ring unless a ring is
        already on its way."""
        with self._lock:
            waiting = self._waiting
            self._waiting = (
                news if waiting is None or self._merge is None else self._merge(waiting, news)
            )
            ring, self._rung = not self._rung, True
        if not ring:
            return
        try:
            self._actor.send(self._ring)
        except ActorUnavailable:  # the new incarnation looks when it starts
            with self._lock:
                self._rung = False

    def take(self) -> T | None:
        """The news waiting, now the actor's; ``None`` if there is none. The next post rings."""
        with self._lock:
            news, self._waiting = self._waiting, None
            self._rung = False
        return news

    def put_back(self, news: T) -> None:
        """Leave news the actor took and could not act on waiting again, older than anything
        posted since. It rings nobody: the actor knows it waits."""
        with self._lock:
            waiting = self._waiting
            if waiting is None:
                self._waiting = news
            elif self._merge is not None:
                self._waiting = self._merge(news, waiting)
            self._rung = True

    @property
    def waiting(self) -> T | None:
        """The news waiting (not taken), if any."""
        return self._waiting
