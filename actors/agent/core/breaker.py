"""The circuit breaker of the LLM path: when to stop calling a failing LLM, and for how long."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

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
