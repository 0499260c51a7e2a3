"""Ticker: the agent's schedule, and the owner of the agent's runtime configuration.

Ticks are driven by events. The buffers publish each commit; a :class:`News` doorbell
subscribed to both rings tells the Ticker when their activity counters move (the agent's own
hud line does not count). With ``economy`` on (the default) a tick then runs:

- ``debounceMs`` after the first item no tick has looked at yet, so while items keep coming
  a tick looks every ``debounceMs``; the first item after a quiet spell (nothing for
  ``intervalMs``) is looked at after :data:`FIRST_LOOK_S` (or the debounce, if shorter).
  Looking is cheap: the context builder calls the LLM only when the window changed
  meaningfully since the last call (:mod:`actors.agent.core.change`), and asks to be looked at
  again when a burst of switching may have settled or a small change gets an interval old;
- and the calls are budgeted as a fixed beat of ``intervalMs`` would make them: each slot of
  the beat in which anything arrived earns one, at most
  :data:`~actors.agent.call_budget.CALL_BANK` are kept, one is allowed ahead
  (:class:`~actors.agent.call_budget.CallBudget`). A meaningful change needs one call left, a
  small one two.

With ``economy`` off, a tick runs ``debounceMs`` after the *last* new item (a burst of events
makes one tick), at the latest ``intervalMs`` after the previous tick while anything is new
(at once after a longer quiet spell), and calls on every new window. Either way a tick runs:

- never sooner than ``cooldownMs`` after the start of the previous LLM call;
- never while the circuit is open (the probe waits for the end of the cooling-off);
- never while a tick is in flight: it runs when that one ends;
- never while capture is paused (``POST /privacy``): the schedule is planned again when the
  pause ends.

A failed tick is tried again ``intervalMs`` later even when nothing new arrived. With nothing
new and nothing to retry no timer is armed at all. The Ticker never blocks: a schedule is a
single timer from the injected clock, re-armed whenever the next due time changes.

Quiet spells. While the agent is on and nothing is new, no tick runs, yet a fixed beat of
``intervalMs`` would have run one tick per interval and skipped it as idle. The Ticker
reports a :class:`~actors.agent.core.events.QuietSpell` when such a spell begins and ends
(:meth:`Ticker._quiet`), and the digest store, which listens, counts one idle skip per
interval of it when its counters are read: no timer runs while idle. A spell begins when the
agent last looked at the window (the start of the last tick that found something to read); a
tick that found nothing new, or a window with no transcript and no screen event, does not
end it.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pykka

from actors.agent.call_budget import CallBudget
from actors.agent.config_notes import announce, tell_update, updated
from actors.agent.context_builder import ContextBuilder
from actors.agent.core.change import STALE_AFTER
from actors.agent.core.config_update import AgentConfigUpdate
from actors.agent.core.events import AgentEvent, QuietSpell, TickNotStarted
from actors.agent.core.ticks import TickDone, TickRequest
from actors.agent.ticker_cells import ConfigCell, NewActivity, News
from actors.common.breaker import Breaker
from actors.core.exclusion import PrivacyState
from actors.core.shapes import TickNote
from actors.kernel.base import ChildHandle, RelayActor, Reporter
from actors.kernel.clock import Cancel, Clock
from actors.kernel.listeners import Listeners
from actors.kernel.published import Published, tell_on_publish
from config.agent.settings import AgentSettings

LOST_TICK_GRACE_S = 5.0
"""A tick still in flight this long after its budget is given up as lost."""


@dataclass(frozen=True, slots=True)
class _Fire:
    """The schedule's timer went off."""

    generation: int


def _NO_TIMER() -> None:  # noqa: N802 - a constant that is called like a Cancel
    """What cancels a fire that was told at once: nothing (its generation goes stale)."""


FIRST_LOOK_S = 1.0
"""With economy on, how soon the first news after a quiet spell (nothing for an interval) is
looked at (the debounce, if shorter)."""

UNAVAILABLE_RETRY_S = 1.0
"""A tick that could not start (the context builder restarting) is tried again this soon."""


class Ticker(RelayActor):
    """Runs ticks on the schedule the module describes, one in flight at most."""

    name = "ticker"

    def __init__(
        self,
        *,
        clock: Clock,
        config: ConfigCell,
        context: ChildHandle[ContextBuilder],
        me: ChildHandle[Ticker],
        news: News | None = None,
        events: Listeners[AgentEvent] | None = None,
        privacy: Published[PrivacyState] | None = None,
        report: Reporter | None = None,
    ) -> None:
        super().__init__(report=report)
        self._clock = clock
        self._privacy = privacy
        self._unsubscribe: Callable[[], None] | None = None
        self._me = me
        """This Ticker's own stable address, where a tick's last step replies."""
        self._events = events
        self._cell = config
        self._config = config.value
        self._context = context
        self._news = news
        self._timer: Cancel | None = None
        self._timer_due: float | None = None
        self._generation = 0
        self._next_tick_id = 1
        self._in_flight: int | None = None
        self._in_flight_since = 0.0
        self._breaker = Breaker()
        self._last_tick_at = 0.0
        self._last_call_at: float | None = None
        """When the last tick that called the LLM started."""
        self._retry_at: float | None = None
        """When a failed tick is tried again, or None."""
        self._looked_at = 0.0
        """When the last tick that found something to read started (or this incarnation)."""
        self._quiet_told: tuple[float, float] | None = None
        """The quiet spell last reported (the digest store counts its idle skips)."""
        self._recheck_at: float | None = None
        """When a skipped or deferred change is looked at again, or None."""
        self._budget = CallBudget()
        """The calls a fixed beat would have made and this Ticker has not (economy on)."""

    # -- lifecycle ---------------------------------------------------------------------------

    def started(self) -> None:
        """Plan (the doorbell may hold news a crashed incarnation had not ticked on), and say
        whether the agent will call the LLM."""
        self._last_tick_at = self._looked_at = now = self._clock.monotonic()
        self._budget.new_beat(now)
        if self._privacy is not None:  # a pause, and its end, plan again
            self._unsubscribe = tell_on_publish(self._privacy, self.actor_ref, NewActivity())
        self._tell_quiet(self._quiet(), force=True)
        self._reschedule()
        announce(self._log, self._config)

    def stopped(self) -> None:
        """Disarm the timer."""
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._disarm()

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer()
        self._timer = None
        self._timer_due = None

    def on_receive(self, message: Any) -> Any:
        """The doorbell and the schedule's timer."""
        if isinstance(message, NewActivity):
            self._reschedule()
            return None
        if isinstance(message, _Fire):
            if message.generation == self._generation:
                self._timer = None
                self._timer_due = None
                self._on_due()
            return None
        return super().on_receive(message)

    # -- the schedule ------------------------------------------------------------------------

    def _due(self) -> float | None:
        """When the next tick should start, or None if nothing calls for one."""
        config = self._config
        if not config.active or self._paused():
            return None
        due: float | None = None
        news = self._news.waiting if self._news is not None else None
        if news is not None:
            self._budget.earn(news.last_at, config.interval_ms / 1000)
            debounce = config.effective_debounce_ms / 1000
            if not config.economy:
                due = min(news.last_at + debounce, self._last_tick_at + config.interval_ms / 1000)
            elif news.gap_s >= config.interval_ms / 1000:
                due = news.first_at + min(FIRST_LOOK_S, debounce)
            else:
                due = news.first_at + debounce
        for at in (self._retry_at, self._recheck_at):
            if at is not None:
                due = at if due is None else min(due, at)
        if due is None:
            return None
        if config.cooldown_ms and self._last_call_at is not None:
            due = max(due, self._last_call_at + config.cooldown_ms / 1000)
        if self._breaker.open_until is not None:
            due = max(due, self._breaker.open_until)
        if self._in_flight is not None:  # its end reschedules; this only catches a lost tick
            due = max(due, self._in_flight_since + self._lost_after_s())
        return due

    def _paused(self) -> bool:
        privacy = self._privacy
        return privacy is not None and privacy.value.paused_at(self._clock.now_ms())

    def _lost_after_s(self) -> float:
        budget_ms = self._config.tick_budget_ms(images=self._config.sends_images)
        return budget_ms / 1000 + LOST_TICK_GRACE_S

    def _reschedule(self) -> None:
        """Make sure the timer fires no later than :meth:`_due`.

        A timer that fires earlier is kept: when it fires, the Ticker plans again. So a stream
        of items, each pushing the debounce further, re-arms the timer once per debounce, not
        once per item. Every change of plan passes here, so it also reports when a quiet spell
        begins or ends.
        """
        quiet = self._quiet()
        if quiet != self._quiet_told:
            self._tell_quiet(quiet)
        due = self._due()
        if due is None or (
            self._timer is not None and self._timer_due is not None and self._timer_due <= due
        ):
            return
        self._disarm()
        self._generation += 1
        generation = self._generation
        ref = self.actor_ref

        def fire() -> None:
            # a dead incarnation's timer does nothing: its successor has its own
            with contextlib.suppress(pykka.ActorDeadError):
                ref.tell(_Fire(generation))

        self._timer_due = due
        delay = due - self._clock.monotonic()
        if delay <= 0:  # due already: no timer (a fake clock would wait for the next advance)
            fire()
            self._timer = _NO_TIMER
            return
        self._timer = self._clock.call_later(delay, fire)

    def _quiet(self) -> tuple[float, float] | None:
        """The quiet spell now, as ``(since, interval_s)``, or ``None``: the agent is on, and
        nothing is new, in flight or waiting to be tried again."""
        config = self._config
        if (
            not config.active
            or self._in_flight is not None
            or self._retry_at is not None
            or self._recheck_at is not None
            or (self._news is not None and self._news.waiting is not None)
        ):
            return None
        return self._looked_at, config.interval_ms / 1000

    def _tell_quiet(self, quiet: tuple[float, float] | None, *, force: bool = False) -> None:
        """Report the spell idle skips are counted in (``None``: none now).

        ``force``: tell it even when nothing seems to have changed (a new incarnation does
        not know what the last one told).
        """
        if self._events is None or (quiet == self._quiet_told and not force):
            return
        since, interval_s = quiet if quiet is not None else (None, 0.0)
        now = self._clock.monotonic()
        if self._events.send(QuietSpell(since, interval_s, now)):
            self._quiet_told = quiet

    def _on_due(self) -> None:
        due = self._due()
        if due is not None and due <= self._clock.monotonic():
            self.tick()
        self._reschedule()

    # -- ticks -------------------------------------------------------------------------------

    def _not_started(self, reason: Literal["busy", "circuit_open"]) -> None:
        """Report a due tick that did not start; the digest store keeps the count."""
        if self._events is not None:
            self._events.send(TickNotStarted(reason))

    def tick(self) -> str:
        """Start a tick now: ``started``, or why not (``inactive``, ``paused``, ``open``,
        ``busy``, ``unavailable``). The schedule calls it when a tick is due; tests and drills may
        call it at any time."""
        config = self._config
        if not config.active:
            return "inactive"
        if self._paused():
            return "paused"
        now = self._clock.monotonic()
        if self._breaker.is_open(now):
            self._not_started("circuit_open")
            return "open"
        if self._in_flight is not None:
            if now - self._in_flight_since < self._lost_after_s():
                self._not_started("busy")
                self._log.debug("tick.skipped_busy", in_flight=self._in_flight)
                return "busy"
            self._log.warning(
                "tick.lost", tick_id=self._in_flight, after_s=round(now - self._in_flight_since, 1)
            )
            self._in_flight = None
        tick_id = self._next_tick_id
        self._next_tick_id += 1
        taken = self._news.take() if self._news is not None else None
        if taken is not None:
            self._budget.earn(taken.last_at, config.interval_ms / 1000)
        stale_at = (
            self._last_call_at + STALE_AFTER * config.interval_ms / 1000
            if self._last_call_at is not None
            else now
        )
        request = TickRequest(
            tick_id,
            config,
            self._cell.marks,
            self._tick_done_reply,
            self._cell.fingerprint,
            last_gist=self._cell.gist,
            calls_left=self._budget.left if config.economy else math.inf,
            stale_in_s=max(0.0, stale_at - now),
        )
        if not self._tell_peer(self._context, ContextBuilder.run_tick, request):
            if taken is not None and self._news is not None:
                self._news.put_back(taken)  # still to cover
            self._retry_at = now + UNAVAILABLE_RETRY_S
            self._reschedule()
            return "unavailable"
        self._in_flight = tick_id
        self._in_flight_since = now
        self._last_tick_at = now
        self._retry_at = None
        self._recheck_at = None
        self._reschedule()
        return "started"

    def _tick_done_reply(self, done: TickDone) -> None:
        """A tick's ``reply_to``: runs on the thread of its last step, and tells this Ticker
        (whichever incarnation is running then) through its stable address."""
        self._me.tell(Ticker.tick_done, done)

    def tick_done(self, done: TickDone) -> None:
        """A tick ended: free the slot, remember its marks and fingerprint, count it for the
        breaker, write the tick's one log line, and schedule what comes next."""
        started_at = self._in_flight_since
        if done.tick_id == self._in_flight:
            self._in_flight = None
        if done.outcome != "failed" and done.marks is not None:
            self._cell.marks = done.marks
        if done.outcome == "ok" and done.fingerprint is not None:
            self._cell.fingerprint = done.fingerprint
        if done.outcome == "ok" and done.gist is not None:
            self._cell.gist = done.gist
        now = self._clock.monotonic()
        if done.outcome in ("ok", "failed"):
            self._last_call_at = started_at
            if self._config.economy:
                self._budget.left -= 1
        if done.outcome in ("minor", "deferred") and done.recheck_in_s is not None:
            self._recheck_at = now + done.recheck_in_s
        if done.outcome not in ("idle", "empty"):
            self._looked_at = started_at
        if done.outcome == "ok" and self._breaker.success():
            self._log.info("agent.circuit_closed", tick_id=done.tick_id)
        elif done.outcome == "failed":
            self._retry_at = now + self._config.interval_ms / 1000
            if self._breaker.failure(now):
                self._log.warning(
                    "agent.circuit_open",
                    tick_id=done.tick_id,
                    consecutive_failures=self._breaker.consecutive_failures,
                    cool_off_s=round(self._breaker.open_until - now, 1)
                    if self._breaker.open_until is not None
                    else None,
                )
        self._cell.note(done, self._clock.now_ms())
        log = self._log.info if done.outcome == "ok" or self._config.log_verbose else None
        log = self._log.warning if done.outcome == "failed" else log or self._log.debug
        log("tick", tick_id=done.tick_id, outcome=done.outcome, **done.detail)
        self._reschedule()

    def recent_ticks(self, after: int) -> tuple[TickNote, ...]:
        """How the kept ticks with an id above ``after`` ended, oldest first."""
        return self._cell.ticks_after(after)

    # -- configuration -----------------------------------------------------------------------

    def config(self) -> AgentSettings:
        """The current runtime configuration."""
        return self._config

    def update_config(self, update: AgentConfigUpdate) -> AgentSettings:
        """Apply a ``POST /agent/config`` body (decoded, so valid: all fields); reschedule.

        Raises:
            BadRequest: it names a file as the local model (only a known model's name may be
                given over HTTP); nothing changes.
        """
        new = updated(self._config, update)
        old = self._config
        if (new.active, new.interval_ms) != (old.active, old.interval_ms):
            now = self._clock.monotonic()  # a new beat: a new quiet spell, a new budget
            self._looked_at = now
            self._budget.new_beat(now)
        self._config = new
        self._cell.value = new
        self._reschedule()
        tell_update(self._log, update, new)
        return new

    def status(self) -> dict[str, Any]:
        """What ``/health.agent`` shows of the ticker: the LLM path's state, the breaker and
        the schedule."""
        now = self._clock.monotonic()
        breaker = self._breaker
        config = self._config
        state = breaker.state(now) if config.active else "no_key" if config.enabled else "disabled"
        open_for = breaker.open_until - now if breaker.is_open(now) and breaker.open_until else 0
        due = self._due()
        return {
            "state": state,
            "consecutiveFailures": breaker.consecutive_failures,
            "circuitOpenForMs": round(open_for * 1000),
            "inFlight": self._in_flight is not None,
            "pending": self._news is not None and self._news.waiting is not None,
            "nextTickInMs": max(0, round((due - now) * 1000)) if due is not None else None,
        }
