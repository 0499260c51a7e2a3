"""Time for actors and supervisors: an injected clock and a scheduler of delayed calls.

Actors never read the system clock or sleep; they ask a :class:`Clock` and schedule a
message with a :class:`Scheduler`. Tests pass a :class:`FakeClock`, whose ``advance`` runs
what has come due, so no test waits for real time and freezegun stays away from Pykka.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from typing import Protocol

import structlog

log = structlog.get_logger("clock")


class Cancel(Protocol):
    """Cancels a scheduled call that has not run yet."""

    def __call__(self) -> None: ...


class Clock(Protocol):
    """Monotonic seconds for deadlines, wall-clock milliseconds for timestamps, and timers."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back."""
        ...

    def now_ms(self) -> int:
        """Wall-clock time in epoch milliseconds (what the API's ``ts`` fields carry)."""
        ...

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> Cancel:
        """Run ``callback`` (briefly: it should only send a message) after ``delay_s``."""
        ...


class _Timers:
    """A heap of (deadline, seq, callback, cancelled flag)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Callable[[], None], list[bool]]] = []
        self._seq = itertools.count()

    def push(self, deadline: float, callback: Callable[[], None]) -> Cancel:
        flag = [False]
        heapq.heappush(self._heap, (deadline, next(self._seq), callback, flag))

        def cancel() -> None:
            flag[0] = True

        return cancel

    def next_deadline(self) -> float | None:
        while self._heap and self._heap[0][3][0]:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now: float) -> list[Callable[[], None]]:
        due = []
        while self._heap and self._heap[0][0] <= now:
            _, _, callback, flag = heapq.heappop(self._heap)
            if not flag[0]:
                due.append(callback)
        return due


def _run(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:  # keeps the timer thread alive for every other timer
        log.exception("timer.callback_failed")


class SystemClock:
    """The real clock, with one daemon thread that runs timers."""

    def __init__(self) -> None:
        self._timers = _Timers()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def monotonic(self) -> float:
        """``time.monotonic()``."""
        return time.monotonic()

    def now_ms(self) -> int:
        """``time.time()`` in milliseconds."""
        return int(time.time() * 1000)

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> Cancel:
        """Schedule ``callback`` on the timer thread."""
        with self._cond:
            cancel = self._timers.push(time.monotonic() + max(delay_s, 0.0), callback)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="relay-timers", daemon=True)
                self._thread.start()
            self._cond.notify()
        return cancel

    def _loop(self) -> None:
        while True:
            with self._cond:
                deadline = self._timers.next_deadline()
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is None or wait > 0:
                    self._cond.wait(timeout=wait)
                    continue
                due = self._timers.pop_due(time.monotonic())
            for callback in due:
                _run(callback)


class FakeClock:
    """A clock that moves only when a test calls :meth:`advance`.

    ``advance`` runs the timers that come due, in the calling thread, in deadline order.
    """

    def __init__(self, start_ms: int = 1_769_901_200_000) -> None:
        self._lock = threading.Lock()
        self._mono = 1_000.0
        self._wall_ms = start_ms
        self._timers = _Timers()

    def monotonic(self) -> float:
        """Fake monotonic seconds."""
        with self._lock:
            return self._mono

    def now_ms(self) -> int:
        """Fake wall-clock milliseconds."""
        with self._lock:
            return self._wall_ms

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> Cancel:
        """Schedule ``callback`` at fake time now + ``delay_s``."""
        with self._lock:
            return self._timers.push(self._mono + max(delay_s, 0.0), callback)

    def advance(self, seconds: float) -> None:
        """Move time forward, running every timer that comes due on the way."""
        with self._lock:
            target = self._mono + seconds
        while True:
            with self._lock:
                deadline = self._timers.next_deadline()
                if deadline is None or deadline > target:
                    self._wall_ms += round((target - self._mono) * 1000)
                    self._mono = target
                    return
                self._wall_ms += round((deadline - self._mono) * 1000)
                self._mono = max(self._mono, deadline)
                due = self._timers.pop_due(self._mono)
            for callback in due:
                _run(callback)

    def pending(self) -> int:
        """How many timers are scheduled and not cancelled."""
        with self._lock:
            return sum(1 for entry in self._timers._heap if not entry[3][0])
