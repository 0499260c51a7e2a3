"""Helpers of the in-process micro-benchmarks (``bench_auth.py``, ``bench_metrics.py``)."""

from __future__ import annotations

import timeit
from collections.abc import Callable

from aiohttp import web


def best_us(call: Callable[[], object], number: int) -> float:
    """Microseconds per call of ``call``: the best of five runs of ``number`` calls."""
    return min(timeit.repeat(call, number=number, repeat=5)) / number * 1e6


def drive(handler: Callable[[web.Request], object], request: web.Request) -> None:
    """Run an aiohttp handler that never awaits to its end, without an event loop.

    Raises:
        AssertionError: the handler awaited something (it cannot be timed this way).
    """
    coroutine = handler(request)
    try:
        coroutine.send(None)  # type: ignore[attr-defined]
    except StopIteration:
        return
    msg = "the handler awaited something"
    raise AssertionError(msg)
