"""What the Ticker shares and keeps across incarnations: its configuration cell and the doorbell.

:class:`ConfigCell` holds the agent configuration and the Ticker's memory where a restarted
Ticker finds them; :class:`News` rings the Ticker when a buffer publishes a client's item.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from actors.core.change import Gist
from actors.core.errors import ActorUnavailable
from actors.core.records import FeedSnapshot, SenseSnapshot
from actors.core.ticks import Marks
from actors.kernel.base import ChildHandle
from actors.kernel.clock import Clock
from actors.kernel.published import Published
from config.settings import AgentConfig

if TYPE_CHECKING:
    from actors.ticker import Ticker


class ConfigCell:
    """The agent configuration and the Ticker's memory, kept where a new Ticker incarnation
    finds them.

    Only the Ticker writes it, so runtime changes made with ``POST /agent/config``, and the
    marks and fingerprint of the last tick, survive a crash of the Ticker. Each attribute is
    assigned one immutable value at a time, so readers need no lock.
    """

    def __init__(self, config: AgentConfig) -> None:
        self.value = config
        self.marks: Marks | None = None
        """The activity marks of the last tick that did not fail."""
        self.fingerprint: str | None = None
        """The window fingerprint of the last successful LLM call."""
        self.gist: Gist | None = None
        """What the window of the last successful LLM call held."""


@dataclass(frozen=True, slots=True)
class NewActivity:
    """News -> Ticker: a buffer published; its activity counter may have moved."""


class News:
    """The doorbell between the buffers' published rings and the Ticker.

    Subscribed once to both cells, it notes when a client's item arrived (an activity counter
    moved; the agent's own hud line does not move it) and rings the Ticker (through its
    stable handle, so it serves every incarnation) only for the first news after a tick
    started: under a flood of posts the Ticker gets one message per tick, not one per commit,
    and a buffer's commit pays a comparison, a clock read and two assignments. The Ticker
    reads :attr:`pending` and :attr:`last_at` when it plans, and :meth:`take` when a tick
    starts.
    """

    def __init__(
        self,
        feed: Published[FeedSnapshot],
        sense: Published[SenseSnapshot],
        ticker: ChildHandle[Ticker],
        clock: Clock,
    ) -> None:
        self._ticker = ticker
        self._clock = clock
        self._activity = [feed.value.activity, sense.value.activity]
        self.pending = False
        """Something arrived that no tick has started on yet."""
        self.last_at = 0.0
        """When the newest item arrived (the clock's monotonic seconds)."""
        self.first_at = 0.0
        """When the first item that no tick has started on arrived."""
        self.gap_s = float("inf")
        """How long nothing had arrived before :attr:`first_at` (a quiet spell, when long)."""
        feed.subscribe(lambda snapshot: self._published(0, snapshot.activity))
        sense.subscribe(lambda snapshot: self._published(1, snapshot.activity))

    def _published(self, source: int, activity: int) -> None:
        """On the publishing buffer's thread, after each commit."""
        if activity == self._activity[source]:
            return
        self._activity[source] = activity
        now = self._clock.monotonic()
        previous, self.last_at = self.last_at, now
        if self.pending:
            return
        self.first_at = now
        self.gap_s = now - previous if previous else float("inf")
        self.pending = True
        with contextlib.suppress(ActorUnavailable):  # a restarting Ticker looks when it starts
            self._ticker.send(NewActivity())

    def take(self) -> None:
        """A tick starts: what arrived so far is its to cover. Anything published after this
        rings again (a publish sets the cell before it calls its listeners, and the tick
        reads the cells after this)."""
        self.pending = False
