"""Ticker: the agent's clock, and the owner of the agent's runtime configuration.

Every ``intervalMs`` it starts a tick unless one is still in flight (a tick is skipped,
never queued). It remembers the activity marks of the last tick that did not fail, so a
failed tick is tried again at the next interval even when nothing new arrived.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pykka

from actors.base import ChildHandle, RelayActor, Reporter
from actors.clock import Cancel, Clock
from actors.ticks import Marks, TickDone, TickRequest
from config.settings import AgentConfig

LOST_TICK_GRACE_S = 5.0
"""A tick still in flight this long after its budget is given up as lost."""
BREAKER_THRESHOLD = 3
"""Consecutive failed ticks that open the circuit."""
COOL_OFF_MIN_S = 30.0
"""The first cooling-off period; it doubles each time a probe fails."""
COOL_OFF_MAX_S = 600.0
COOL_OFF_JITTER = 0.2
"""Up to this fraction is added at random, so many relays do not probe in step."""


@dataclass(slots=True)
class Breaker:
    """The circuit breaker of the LLM path (owned by the Ticker).

    After :data:`BREAKER_THRESHOLD` failed ticks in a row the circuit opens: no LLM calls for a
    cooling-off period, then one probe tick. A failed probe opens it again for twice as long
    (capped); a success closes it and resets the period.
    """

    consecutive_failures: int = 0
    open_until: float | None = None
    cool_off_s: float = 0.0
    skipped: int = 0

    def is_open(self, now: float) -> bool:
        """Whether ticks must not call the LLM now."""
        return self.open_until is not None and now < self.open_until

    def failure(self, now: float, rng: Callable[[], float] = random.random) -> bool:
        """Count a failed tick; True if that opened the circuit."""
        self.consecutive_failures += 1
        if self.consecutive_failures < BREAKER_THRESHOLD:
            return False
        was_probing = self.open_until is not None
        base = min(self.cool_off_s * 2, COOL_OFF_MAX_S) if was_probing else COOL_OFF_MIN_S
        self.cool_off_s = base
        self.open_until = now + base * (1 + rng() * COOL_OFF_JITTER)
        return True

    def success(self) -> bool:
        """Count a successful tick; True if that closed an open (probing) circuit."""
        closed = self.open_until is not None
        self.consecutive_failures = 0
        self.open_until = None
        self.cool_off_s = 0.0
        return closed

    def state(self, now: float) -> str:
        """``open``, ``degraded`` (failing, not yet open) or ``ok``."""
        if self.is_open(now):
            return "open"
        return "degraded" if self.consecutive_failures else "ok"


class ConfigCell:
    """The agent configuration, kept where a new Ticker incarnation finds it.

    Only the Ticker writes it (on every change), so runtime changes made with
    ``POST /agent/config`` survive a crash of the Ticker. Assigning one immutable
    :class:`AgentConfig` is atomic, so readers need no lock.
    """

    def __init__(self, config: AgentConfig) -> None:
        self.value = config


@dataclass(frozen=True, slots=True)
class _Fire:
    """The interval timer went off."""

    generation: int


class Ticker(RelayActor):
    """Starts ticks on the interval and keeps one in flight at most."""

    name = "ticker"

    def __init__(
        self,
        *,
        clock: Clock,
        config: ConfigCell,
        context: ChildHandle,
        report: Reporter | None = None,
    ) -> None:
        super().__init__(report=report)
        self._clock = clock
        self._cell = config
        self._config = config.value
        self._context = context
        self._timer: Cancel | None = None
        self._generation = 0
        self._next_tick_id = 1
        self._in_flight: int | None = None
        self._in_flight_since = 0.0
        self._marks: Marks | None = None
        self._busy_skips = 0
        self._breaker = Breaker()

    # -- lifecycle ---------------------------------------------------------------------------

    def started(self) -> None:
        """Arm the interval timer and say whether the agent will call the LLM."""
        self._arm()
        if not self._config.enabled:
            self._log.info("agent.off", reason="AGENT_ENABLED is false")
        elif not self._config.api_key:
            self._log.warning(
                "agent.off", reason="no OPENROUTER_API_KEY; set it or POST /agent/config"
            )
        else:
            self._log.info(
                "agent.on",
                model=self._config.model,
                interval_ms=self._config.interval_ms,
                base_url=self._config.base_url,
            )

    def stopped(self) -> None:
        """Disarm the timer."""
        if self._timer is not None:
            self._timer()
            self._timer = None

    def _arm(self) -> None:
        if self._timer is not None:
            self._timer()
        self._generation += 1
        generation = self._generation
        ref = self.actor_ref

        def fire() -> None:
            # a dead incarnation's timer does nothing: its successor has its own
            with contextlib.suppress(pykka.ActorDeadError):
                ref.tell(_Fire(generation))

        self._timer = self._clock.call_later(self._config.interval_ms / 1000, fire)

    def on_receive(self, message: Any) -> Any:
        """The interval timer: tick and re-arm."""
        if isinstance(message, _Fire):
            if message.generation == self._generation:
                self._arm()
                self.tick()
            return None
        return super().on_receive(message)

    # -- ticks -------------------------------------------------------------------------------

    def tick(self) -> str:
        """Start a tick now: ``started``, or why not (``inactive``, ``open``, ``busy``,
        ``unavailable``)."""
        config = self._config
        if not config.active:
            return "inactive"
        now = self._clock.monotonic()
        if self._breaker.is_open(now):
            self._breaker.skipped += 1
            return "open"
        if self._in_flight is not None:
            lost_after = config.tick_budget_ms / 1000 + LOST_TICK_GRACE_S
            if now - self._in_flight_since < lost_after:
                self._busy_skips += 1
                self._log.debug("tick.skipped_busy", in_flight=self._in_flight)
                return "busy"
            self._log.warning(
                "tick.lost", tick_id=self._in_flight, after_s=round(now - self._in_flight_since, 1)
            )
        tick_id = self._next_tick_id
        self._next_tick_id += 1
        if not self._tell_peer(
            self._context, "run_tick", TickRequest(tick_id, config, self._marks)
        ):
            self._in_flight = None
            return "unavailable"
        self._in_flight = tick_id
        self._in_flight_since = now
        return "started"

    def tick_done(self, done: TickDone) -> None:
        """A tick ended: free the slot, remember the marks, write the tick's one log line."""
        if done.tick_id == self._in_flight:
            self._in_flight = None
        if done.outcome != "failed" and done.marks is not None:
            self._marks = done.marks
        now = self._clock.monotonic()
        if done.outcome == "ok" and self._breaker.success():
            self._log.info("agent.circuit_closed", tick_id=done.tick_id)
        elif done.outcome == "failed" and self._breaker.failure(now):
            self._log.warning(
                "agent.circuit_open",
                tick_id=done.tick_id,
                consecutive_failures=self._breaker.consecutive_failures,
                cool_off_s=round(self._breaker.open_until - now, 1)
                if self._breaker.open_until is not None
                else None,
            )
        if done.outcome == "ok":
            self._log.info("tick", tick_id=done.tick_id, outcome=done.outcome, **done.detail)
        elif done.outcome == "failed":
            self._log.warning("tick", tick_id=done.tick_id, outcome=done.outcome, **done.detail)
        elif self._config.log_verbose:
            self._log.info("tick", tick_id=done.tick_id, outcome=done.outcome)
        else:
            self._log.debug("tick", tick_id=done.tick_id, outcome=done.outcome)

    # -- configuration -----------------------------------------------------------------------

    def config(self) -> AgentConfig:
        """The current runtime configuration."""
        return self._config

    def update_config(self, changes: dict[str, Any]) -> AgentConfig:
        """Apply a ``POST /agent/config`` body (all fields or none); re-arm on a new interval.

        Raises:
            ConfigError: a field is unknown or invalid; nothing changed.
        """
        old = self._config
        new = old.updated(changes)
        self._config = new
        self._cell.value = new
        if new.interval_ms != old.interval_ms:
            self._arm()
        changed = sorted(k for k in changes if k != "openrouterApiKey")
        self._log.info(
            "agent.config_changed",
            fields=changed,
            key_changed="openrouterApiKey" in changes,
            active=new.active,
        )
        return new

    def status(self) -> dict[str, Any]:
        """What ``/health.agent`` shows of the ticker: the LLM path's state and the breaker."""
        now = self._clock.monotonic()
        breaker = self._breaker
        state = breaker.state(now) if self._config.active else "disabled"
        open_for = breaker.open_until - now if breaker.is_open(now) and breaker.open_until else 0
        return {
            "state": state,
            "consecutiveFailures": breaker.consecutive_failures,
            "circuitOpenForMs": round(open_for * 1000),
            "circuitSkips": breaker.skipped,
            "inFlight": self._in_flight is not None,
            "busySkips": self._busy_skips,
        }
