"""The overlay's ``status``: whether transcripts and screen events arrive, from what the
buffers publish and the relay's clock."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable

from actors.core.exclusion import PrivacyState
from actors.core.records import FeedSnapshot, SenseSnapshot
from actors.core.window import extract_audio
from actors.kernel.clock import Cancel, Clock
from actors.kernel.published import Published
from transport.overlay.messages import Status, status_at
from transport.streams.wakeup import LoopWakeup


class Presence(LoopWakeup):
    """The overlay's ``status``: whether transcripts and screen events arrive.

    Listens to the feed and sense cells while an overlay is connected, as a hub does: on the
    publisher's thread it only schedules one wake-up on the loop. The end of a quiet spell is a
    timer on the relay's clock. Everything but :meth:`_published` and :meth:`_timer_fired`
    runs on the transport's event loop.
    """

    def __init__(
        self,
        feed: Published[FeedSnapshot],
        sense: Published[SenseSnapshot],
        clock: Clock,
        quiet_spell_s: float,
        *,
        muted: Callable[[], bool] = lambda: False,
        privacy: Published[PrivacyState] | None = None,
    ) -> None:
        """``muted``: whether the overlay stopped audio capture (``toggle_audio``): the
        ``audio`` status is then ``muted`` whatever arrives. ``privacy``: the controls whose
        pause the status says (``paused``), followed as the buffers are."""
        self._muted = muted
        self._privacy = privacy
        self._feed = feed
        self._sense = sense
        self._clock = clock
        self._quiet_ms = round(quiet_spell_s * 1000)
        self.status = Status("muted", "off")
        self._on_change: Callable[[Status], None] = _nothing
        self._heard: int | None = None
        """When the newest transcript seen arrived (the relay's clock, epoch ms)."""
        self._cursor = 0
        """The highest feed id looked at."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._unsubscribe: tuple[Callable[[], None], ...] = ()
        self._listening = False
        self._scheduled = False
        self._timer: Cancel | None = None
        """The pending end of a quiet spell, if any."""
        self._timers = 0
        """Timers scheduled so far: which one fired, so that a late one changes nothing."""

    def attach(self, loop: asyncio.AbstractEventLoop, on_change: Callable[[Status], None]) -> None:
        """Listen to both cells from ``loop``; ``on_change`` gets each new status."""
        self.detach()
        self._loop = loop
        self._on_change = on_change
        self._unsubscribe = (
            self._feed.subscribe(self._published),
            self._sense.subscribe(self._published),
        )
        if self._privacy is not None:
            self._unsubscribe += (self._privacy.subscribe(self._published),)

    def detach(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = ()
        self._cancel_timer()

    def listen(self, on: bool) -> None:
        """Follow the cells (an overlay is connected) or not (none is)."""
        self._listening = on
        if on:
            self.update()
        else:
            self._cancel_timer()

    def _wake(self) -> None:
        self._scheduled = False
        if self._listening:
            self.update()

    def update(self) -> None:
        """Read both cells and the clock; tell ``on_change`` if the status changed."""
        now = self._clock.now_ms()
        feed = self._feed.value
        for item in feed.after(self._cursor):
            if extract_audio(item) is not None:
                self._heard = item.ts
        if feed.items:
            self._cursor = feed.items[-1].id
        events = self._sense.value.events
        seen = events[-1].received_at if events else None
        status = status_at(self._heard, seen, now, self._quiet_ms)
        paused = self._privacy is not None and self._privacy.value.paused_at(now)
        if self._muted() or paused:
            status = Status("muted", status.screen, paused)
        ends = [t + self._quiet_ms for t in (self._heard, seen) if t is not None]
        ends = [end for end in ends if end > now]
        if ends and self._timer is None:
            self._timers += 1
            fired = functools.partial(self._timer_fired, self._timers)
            self._timer = self._clock.call_later((min(ends) - now) / 1000, fired)
        if status != self.status:
            self.status = status
            self._on_change(status)

    def _timer_fired(self, number: int) -> None:
        """A quiet spell may have ended; on the clock's thread: hand it to the loop."""
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed: the transport is gone
                loop.call_soon_threadsafe(self._spell_ended, number)

    def _spell_ended(self, number: int) -> None:
        if number != self._timers:  # cancelled, and another one scheduled since
            return
        self._timer = None
        if self._listening:
            self.update()

    def _cancel_timer(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer()


def _nothing(_status: Status) -> None:
    pass
