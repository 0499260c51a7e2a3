"""The digest store's outbox to the SITUATION.md writer: the newest situation, one at a time.

The digest store posts what each committed tick gives the file; the writer takes it. The
outbox keeps only the newest situation not yet taken, and rings the writer only when it was
empty: while the writer is busy (a slow disk) or hung, newer ticks replace what waits instead
of queueing behind it, so the writer's mailbox holds one message at most and the file, once
the disk answers again, shows the newest tick. The outbox outlives the writer's
incarnations: a situation posted while the writer restarts waits here, and the new
incarnation takes it when it starts.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from actors.core.errors import ActorUnavailable
from actors.core.situation import Situation
from actors.kernel.base import ChildHandle

if TYPE_CHECKING:
    from actors.situation_writer import SituationWriter


@dataclass(frozen=True, slots=True)
class WritePending:
    """Outbox -> SituationWriter: a situation waits in the outbox."""


class SituationOutbox:
    """The newest situation for the writer; posted from the digest store's thread, taken on
    the writer's (a lock keeps each change of the two fields whole)."""

    def __init__(self, writer: ChildHandle[SituationWriter]) -> None:
        self._writer = writer
        self._lock = threading.Lock()
        self._pending: Situation | None = None
        self._rung = False
        """A ring reached the writer and it has not taken since."""

    def post(self, situation: Situation) -> None:
        """Leave ``situation`` for the writer in place of any older one, and ring it unless
        a ring is already on its way. A ring that finds no writer (it restarts) is not
        counted: the new incarnation looks when it starts, and the next post rings again."""
        with self._lock:
            self._pending = situation
            ring, self._rung = not self._rung, True
        if not ring:
            return
        try:
            self._writer.send(WritePending())
        except ActorUnavailable:
            with self._lock:
                self._rung = False

    def take(self) -> Situation | None:
        """The situation waiting, now the writer's; ``None`` if there is none."""
        with self._lock:
            situation, self._pending = self._pending, None
            self._rung = False
        return situation

    @property
    def waiting(self) -> bool:
        """Whether a situation waits (a writer that starts takes it)."""
        return self._pending is not None
