"""RingBuffer: what the feed and sense buffers share.

Each owns a ring of the newest items, in memory and in its table; ids that only grow, across
restarts too; an activity counter of what clients posted; the snapshot it publishes after
each commit; and the redactor that clients' text passes before it is stored.
"""

from __future__ import annotations

from collections import deque
from typing import Any, ClassVar, Generic, TypeVar

from actors.core.redaction.redactor import Redactor
from actors.kernel.base import Reporter
from actors.kernel.clock import Clock
from actors.kernel.durable import DurableActor
from actors.kernel.published import Published
from actors.kernel.storage import Store
from config.privacy import STORED, Column

T = TypeVar("T")
S = TypeVar("S")


class RingBuffer(DurableActor, Generic[T, S]):
    """A ring of at most :attr:`ring_size` items, published as an ``S`` after each commit."""

    ring_size: ClassVar[int]
    empty: ClassVar[Any]
    """The snapshot of an empty ring (published until the first restore)."""

    def __init__(
        self,
        *,
        clock: Clock,
        store: Store,
        published: Published[S] | None = None,
        report: Reporter | None = None,
        redactor: Redactor | None = None,
        stored: Column = STORED,
    ) -> None:
        super().__init__(store=store, report=report)
        self._clock = clock
        self._redactor = redactor or Redactor()
        self._stored = stored
        """What is stored of each kind (the privacy matrix's ``LOCAL_BUFFER`` column)."""
        self._published: Published[S] = published or Published(self.empty)
        self._ring: deque[T] = deque(maxlen=self.ring_size)
        self._next_id = 1
        self._activity = 0
        self._kept_from = 1
        """Rows with a lower id have been pruned."""
