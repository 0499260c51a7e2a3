"""What the Ticker shares and keeps across incarnations: its configuration cell and the doorbell.

:class:`ConfigCell` holds the agent configuration and the Ticker's memory where a restarted
Ticker finds them; :class:`News` rings the Ticker (a kernel doorbell) when a buffer publishes
a client's item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from actors.agent.core.change import Gist
from actors.agent.core.ticks import Marks, TickDone
from actors.core.records import FeedSnapshot, SenseSnapshot
from actors.core.shapes import TickNote
from actors.kernel.base import ChildHandle
from actors.kernel.clock import Clock
from actors.kernel.doorbell import Doorbell
from actors.kernel.published import Published
from config.agent.settings import AgentSettings

TICKS_KEPT = 200
"""Ticks the Ticker remembers for the console: some minutes of a busy day."""


class ConfigCell:
    """The agent configuration and the Ticker's memory, kept where a new Ticker incarnation
    finds them.

    Only the Ticker writes it, so runtime changes made with ``POST /agent/config``, and the
    marks and fingerprint of the last tick, survive a crash of the Ticker. Each attribute is
    assigned one immutable value at a time, so readers need no lock.
    """

    def __init__(self, config: AgentSettings) -> None:
        self.value = config
        self.marks: Marks | None = None
        """The activity marks of the last tick that did not fail."""
        self.fingerprint: str | None = None
        """The window fingerprint of the last successful LLM call."""
        self.gist: Gist | None = None
        """What the window of the last successful LLM call held."""
        self.ticks: tuple[TickNote, ...] = ()
        """The newest :data:`TICKS_KEPT` ticks, oldest first."""

    def note(self, done: TickDone, now_ms: int) -> None:
        """Keep how a tick ended, the oldest kept dropped past :data:`TICKS_KEPT`."""
        number = self.ticks[-1].id + 1 if self.ticks else 1
        self.ticks = (*self.ticks[-(TICKS_KEPT - 1) :], tick_note(number, done, now_ms))

    def ticks_after(self, after: int) -> tuple[TickNote, ...]:
        """The kept ticks with an id above ``after``, oldest first."""
        return tuple(note for note in self.ticks if note.id > after)


def tick_note(number: int, done: TickDone, now_ms: int) -> TickNote:
    """What a tick's end says to a person: its outcome, why it stopped short, what it cost;
    ``number`` counts the ticks kept since the relay started (a restarted Ticker keeps on)."""
    detail = done.detail
    reason = detail.get("hudWithheld") or detail.get("waiting") or detail.get("reason")
    if done.outcome in ("idle", "empty", "unchanged"):
        reason = reason or done.outcome
    return TickNote(
        id=number,
        ts=now_ms,
        outcome=done.outcome,
        reason=str(reason) if reason else None,
        model=_text(detail.get("model")),
        latency_ms=_whole(detail.get("latencyMs")),
        tokens_in=_whole(detail.get("tokensIn")),
        tokens_out=_whole(detail.get("tokensOut")),
        error=_text(detail.get("error")),
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class NewActivity:
    """News -> Ticker: a client's item arrived that no tick has started on."""


@dataclass(frozen=True, slots=True)
class Arrivals:
    """What arrived since the last tick started, on the clock's monotonic seconds."""

    first_at: float
    """When the first item that no tick has started on arrived."""
    last_at: float
    """When the newest item arrived."""
    gap_s: float
    """How long nothing had arrived before :attr:`first_at` (a quiet spell, when long)."""


def _later(waiting: Arrivals, came: Arrivals) -> Arrivals:
    """More arrivals before a tick took them: the first stays, the newest is ``came``'s."""
    return Arrivals(waiting.first_at, came.last_at, waiting.gap_s)


class News:
    """The doorbell between the buffers' published rings and the Ticker.

    Subscribed once to both cells, it notes when a client's item arrived (an activity counter
    moved; the agent's own hud line does not move it) and posts the :class:`Arrivals` on a
    :class:`~actors.kernel.doorbell.Doorbell`, which rings the Ticker (through its stable
    handle, so it serves every incarnation) only for the first news after a tick took the
    last: under a flood of posts the Ticker gets one message per tick, not one per commit.
    The Ticker reads :attr:`waiting` when it plans, and :meth:`take` when a tick starts.
    """

    def __init__(
        self,
        feed: Published[FeedSnapshot],
        sense: Published[SenseSnapshot],
        ticker: ChildHandle[Any],
        clock: Clock,
    ) -> None:
        self._clock = clock
        self._bell: Doorbell[Arrivals] = Doorbell(ticker, NewActivity(), merge=_later)
        self._activity = [feed.value.activity, sense.value.activity]
        self._last_at = 0.0
        feed.subscribe(lambda snapshot: self._published(0, snapshot.activity))
        sense.subscribe(lambda snapshot: self._published(1, snapshot.activity))

    def _published(self, source: int, activity: int) -> None:
        """On the publishing buffer's thread, after each commit."""
        if activity == self._activity[source]:
            return
        self._activity[source] = activity
        now = self._clock.monotonic()
        previous, self._last_at = self._last_at, now
        self._bell.post(Arrivals(now, now, now - previous if previous else float("inf")))

    @property
    def waiting(self) -> Arrivals | None:
        """What arrived that no tick has started on yet, if anything."""
        return self._bell.waiting

    def take(self) -> Arrivals | None:
        """A tick starts: what arrived so far is its to cover. Anything published after this
        rings again (a publish sets the cell before it calls its listeners, and the tick
        reads the cells after this)."""
        return self._bell.take()

    def put_back(self, arrivals: Arrivals) -> None:
        """A tick that could not start leaves what it took still to cover."""
        self._bell.put_back(arrivals)
