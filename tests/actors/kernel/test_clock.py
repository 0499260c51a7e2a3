"""The injected clocks: FakeClock runs due timers in order; SystemClock runs them on time."""

from __future__ import annotations

import threading
import time

from freezegun import freeze_time

from actors.kernel.clock import FakeClock, SystemClock


def test_fake_clock_runs_due_timers_in_deadline_order_and_moves_wall_time() -> None:
    clock = FakeClock(start_ms=1_000)
    fired: list[tuple[str, int]] = []
    clock.call_later(2.0, lambda: fired.append(("b", clock.now_ms())))
    clock.call_later(1.0, lambda: fired.append(("a", clock.now_ms())))
    cancel = clock.call_later(1.5, lambda: fired.append(("cancelled", 0)))
    cancel()
    clock.advance(0.5)
    assert fired == []
    clock.advance(2.0)
    assert fired == [("a", 2_000), ("b", 3_000)]
    assert clock.now_ms() == 3_500
    assert clock.pending() == 0


def test_fake_clock_runs_timers_scheduled_by_timers_within_the_same_advance() -> None:
    clock = FakeClock()
    fired: list[float] = []

    def again() -> None:
        fired.append(clock.monotonic())
        if len(fired) < 3:
            clock.call_later(1.0, again)

    clock.call_later(1.0, again)
    clock.advance(10)
    assert [round(t - fired[0], 3) for t in fired] == [0.0, 1.0, 2.0]


def test_system_clock_fires_callbacks_and_honours_cancel() -> None:
    clock = SystemClock()
    fired = threading.Event()
    never = threading.Event()
    cancel = clock.call_later(0.01, never.set)
    cancel()
    clock.call_later(0.02, fired.set)
    assert fired.wait(5)
    assert not never.is_set()
    assert abs(clock.now_ms() / 1000 - time.time()) < 1


def test_system_clock_now_ms_is_epoch_milliseconds() -> None:
    # freezegun only here: a pure wall-clock read, no timers, no Pykka waits.
    with freeze_time("2026-02-01T00:00:00.250Z"):
        assert SystemClock().now_ms() == 1_769_904_000_250
