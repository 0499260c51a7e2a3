"""The circuit breaker: when to stop calling a failing service, and for how long (the LLM
path's and the speech service's)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from actors.common.backoff import backoff

BREAKER_THRESHOLD = 3
"""Consecutive failures (failed ticks, failed utterances) that open the circuit."""
COOL_OFF_MIN_S = 30.0
"""The first cooling-off period; it doubles each time a probe fails."""
COOL_OFF_MAX_S = 600.0
COOL_OFF_JITTER = 0.2
"""Up to this fraction is added at random, so many relays do not probe in step."""


@dataclass(slots=True)
class Breaker:
    """The circuit breaker of a service's calls (the Ticker owns the LLM path's, the
    Transcriber the speech service's).

    After :data:`BREAKER_THRESHOLD` failures in a row the circuit opens: no calls for a
    cooling-off period, then one probe. A failed probe opens it again for twice as long
    (capped); a success closes it and resets the period.
    """

    consecutive_failures: int = 0
    open_until: float | None = None
    opens: int = 0
    """Times the circuit opened since it was last closed (the backoff's step)."""

    def is_open(self, now: float) -> bool:
        """Whether no call may be made now."""
        return self.open_until is not None and now < self.open_until

    def failure(self, now: float, rng: Callable[[], float] = random.random) -> bool:
        """Count a failure; True if that opened the circuit."""
        self.consecutive_failures += 1
        if self.consecutive_failures < BREAKER_THRESHOLD:
            return False
        cool_off = backoff(
            self.opens, base=COOL_OFF_MIN_S, cap=COOL_OFF_MAX_S, jitter=COOL_OFF_JITTER, rng=rng
        )
        self.opens += 1
        self.open_until = now + cool_off
        return True

    def success(self) -> bool:
        """Count a success; True if that closed an open (probing) circuit."""
        closed = self.open_until is not None
        self.consecutive_failures = 0
        self.open_until = None
        self.opens = 0
        return closed

    def state(self, now: float) -> str:
        """``open``, ``degraded`` (failing, not yet open) or ``ok``."""
        if self.is_open(now):
            return "open"
        return "degraded" if self.consecutive_failures else "ok"
