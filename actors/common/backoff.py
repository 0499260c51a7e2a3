"""The one backoff: how long to wait before the next try after ``step`` failures in a row.

Every retry and restart of the relay waits by it: the supervisor's restart of a child, the LLM
caller's retry of a model, a capture's restart of its program, the circuit breaker's cooling-off.
Each caller keeps its own numbers (first delay, growth, cap, jitter); the formula is this one.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable


def backoff(
    step: int,
    *,
    base: float,
    factor: float = 2.0,
    cap: float = math.inf,
    jitter: float = 0.0,
    rng: Callable[[], float] = random.random,
) -> float:
    """``min(base * factor**step, cap)``, stretched by up to ``jitter`` of itself at random.

    ``step`` counts from 0 (the first wait is ``base``). The random part is
    ``1 + rng() * jitter`` (``rng`` returns a number in ``[0, 1)``), so many processes that
    failed together do not try again in step; ``rng`` is not called without jitter. A step so
    large that the growth overflows waits ``cap``.
    """
    try:
        grown = base * factor**step
    except OverflowError:
        grown = math.inf if base else 0.0
    delay = min(grown, cap)
    return delay * (1 + rng() * jitter) if jitter else delay
