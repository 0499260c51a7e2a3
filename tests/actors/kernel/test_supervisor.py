"""The supervisor: start order, death watch, restarts, backoff, intensity, shutdown."""

from __future__ import annotations

import concurrent.futures
import threading
import time
from functools import partial
from typing import Any

import pykka
import pytest

from actors.core.errors import ActorUnavailable
from actors.kernel.base import Call, ChildHandle, RelayActor, Reporter
from actors.kernel.clock import FakeClock
from actors.kernel.supervisor import Backoff, ChildSpec, Intensity, Supervisor
from config.common.secrets import remember_secret
from tests.support.observe import LogSink, wait_until
from tests.support.redaction_samples import SK, assert_nowhere


class Worker(RelayActor):
    """A child that records its start and can fail its start on demand."""

    name = "worker"

    def __init__(
        self,
        *,
        starts: list[str],
        label: str,
        fail_starts: list[int] | None = None,
        report: Reporter | None = None,
    ) -> None:
        super().__init__(report=report)
        self._starts = starts
        self._label = label
        self._fail_starts = fail_starts

    def started(self) -> None:
        if self._fail_starts and self._fail_starts[0] > 0:
            self._fail_starts[0] -= 1
            msg = "cannot start"
            raise RuntimeError(msg)
        self._starts.append(self._label)

    def block(self, release: threading.Event) -> None:
        release.wait(30)

    def pause(self, seconds: float) -> None:
        time.sleep(seconds)

    def mark(self, label: str) -> str:
        self._starts.append(label)
        return label

    def fail_with(self, text: str) -> None:
        raise RuntimeError(text)


def spec(name: str, starts: list[str], **kwargs: Any) -> ChildSpec:
    fail_starts = kwargs.pop("fail_starts", None)
    return ChildSpec(
        name,
        lambda report: Worker.start(
            starts=starts, label=name, fail_starts=fail_starts, report=report
        ),
        ChildHandle(name),
        **kwargs,
    )


def poll(clock: FakeClock) -> None:
    """One supervisor poll: move the clock to it, then wait until it has re-armed."""
    clock.advance(1.0)
    wait_until(lambda: clock.pending() >= 1, what="the poll to run and re-arm")


def restarted(child: ChildSpec, count: int) -> bool:
    return child.handle.restarts == count


def start_sup(children: list[ChildSpec], clock: FakeClock, **kwargs: Any) -> pykka.ActorRef[Any]:
    ref = Supervisor.start(name="test", children=children, clock=clock, **kwargs)
    ref.proxy().ping().get(timeout=5)
    return ref


def test_children_start_in_order_each_alive_before_the_next(clock: FakeClock) -> None:
    starts: list[str] = []
    children = [spec("a", starts), spec("b", starts), spec("c", starts)]
    start_sup(children, clock)
    assert starts == ["a", "b", "c"]
    assert all(c.handle.alive and c.handle.state == "running" for c in children)


def test_child_failing_its_first_start_fails_the_supervisor_start(clock: FakeClock) -> None:
    starts: list[str] = []
    ref = Supervisor.start(
        name="test", children=[spec("a", starts), spec("b", starts, fail_starts=[1])], clock=clock
    )
    with pytest.raises(pykka.ActorDeadError):
        ref.proxy().ping().get(timeout=5)
    wait_until(lambda: not ref.is_alive(), what="supervisor to die")


def supervisor_handle(ref: pykka.ActorRef[Any]) -> ChildHandle[Supervisor]:
    handle: ChildHandle[Supervisor] = ChildHandle("test")
    handle.bind(ref)
    return handle


def test_children_added_later_start_after_the_first_and_stop_before_them(
    clock: FakeClock,
) -> None:
    starts: list[str] = []
    sup = supervisor_handle(start_sup([spec("a", starts)], clock))
    b, c = spec("b", starts), spec("c", starts)
    sup.ask(Supervisor.start_child, b).result(timeout=5)
    sup.ask(Supervisor.start_child, c).result(timeout=5)
    assert starts == ["a", "b", "c"]
    assert b.handle.alive and str(c.handle.state) == "running"

    b.handle.tell(RelayActor.inject_fault, "crash")  # an added child is supervised
    wait_until(partial(restarted, b, 1), what="the added child's restart")

    sup.ask(Supervisor.stop_child, "c").result(timeout=5)
    sup.ask(Supervisor.stop_child, "c").result(timeout=5)  # gone already: nothing to do
    assert not c.handle.alive and c.handle.state == "stopped"
    assert b.handle.alive


def test_a_child_that_fails_its_added_start_is_an_error_to_the_caller_and_not_kept(
    clock: FakeClock,
) -> None:
    starts: list[str] = []
    sup = supervisor_handle(start_sup([spec("a", starts)], clock))
    bad = spec("b", starts, fail_starts=[1])
    with pytest.raises(RuntimeError, match="child b failed to start"):
        sup.ask(Supervisor.start_child, bad).result(timeout=5)
    assert bad.handle.state == "stopped"
    sup.ask(Supervisor.start_child, spec("b", starts)).result(timeout=5)  # the name is free
    assert starts == ["a", "b"]
    with pytest.raises(ValueError, match="cannot add child a"):
        sup.ask(Supervisor.start_child, spec("a", starts)).result(timeout=5)


def test_crash_in_told_message_restarts_child_and_handle_follows(
    clock: FakeClock, logs: LogSink
) -> None:
    starts: list[str] = []
    child = spec("a", starts)
    start_sup([child], clock)
    old_ref = child.handle.ref
    assert old_ref is not None

    child.handle.tell(RelayActor.inject_fault, "crash")

    wait_until(lambda: child.handle.restarts == 1, what="restart")
    assert child.handle.ref is not old_ref
    assert child.handle.ref is not None
    assert child.handle.ref.actor_urn != old_ref.actor_urn
    assert not old_ref.is_alive()
    assert child.handle.ask(RelayActor.ping).result(timeout=5) == "pong"
    assert child.handle.last_restart_ms == clock.now_ms()
    assert starts == ["a", "a"]
    died = logs.named("supervisor.child_died")
    assert died and died[0]["child"] == "a" and "injected crash" in died[0]["reason"]
    assert logs.named("supervisor.child_restarted")


def test_a_child_that_dies_quoting_a_secret_is_logged_without_it(
    clock: FakeClock, logs: LogSink
) -> None:
    placeholder = "kernel-test-placeholder-9q"
    remember_secret(placeholder)
    child = spec("a", [])
    start_sup([child], clock)

    child.handle.tell(Worker.fail_with, f"refused {placeholder}, then {SK}")

    wait_until(lambda: child.handle.restarts == 1, what="restart")
    reason = logs.named("supervisor.child_died")[0]["reason"]
    assert reason.startswith("RuntimeError: refused [redacted:api-key], then [redacted:api-key]")
    assert_nowhere(placeholder, str(logs.events))
    assert_nowhere(SK, str(logs.events))


def test_failure_in_on_start_of_a_restart_is_noticed_and_retried(clock: FakeClock) -> None:
    starts: list[str] = []
    fail_starts = [0]
    child = spec("a", starts, fail_starts=fail_starts)
    start_sup([child], clock)
    fail_starts[0] = 2  # the next two incarnations fail in on_start

    child.handle.tell(RelayActor.inject_fault, "crash")

    # the supervisor counts a restart once its start returned, after the child's on_start ran
    wait_until(lambda: child.handle.alive and child.handle.restarts == 3, what="third restart")
    assert starts == ["a", "a"]  # the first incarnation's, and the third restart's


def test_an_error_in_an_asked_call_goes_to_the_caller_and_the_actor_lives(
    clock: FakeClock,
) -> None:
    child = spec("a", [])
    start_sup([child], clock)
    with pytest.raises(ValueError, match="unknown fault kind"):
        child.handle.ask(RelayActor.inject_fault, "melt").result(timeout=5)
    reply = child.handle.ask(RelayActor.inject_fault, "crash")
    with pytest.raises(Exception, match="injected crash"):
        reply.result(timeout=5)
    assert child.handle.alive
    assert child.handle.restarts == 0


def test_cancelled_reply_skips_the_work_and_does_not_kill_the_actor(clock: FakeClock) -> None:
    child = spec("a", [])
    start_sup([child], clock)
    reply: concurrent.futures.Future[Any] = concurrent.futures.Future()
    reply.cancel()
    child.handle.send(Call("inject_fault", ("crash",), {}, reply))
    assert child.handle.ask(RelayActor.ping).result(timeout=5) == "pong"
    assert child.handle.restarts == 0


def test_temporary_child_is_not_restarted(clock: FakeClock) -> None:
    child = spec("a", [], restart="temporary")
    start_sup([child], clock)
    child.handle.tell(RelayActor.inject_fault, "crash")
    wait_until(lambda: child.handle.state == "stopped", what="child marked stopped")
    clock.advance(5)
    assert not child.handle.alive
    assert child.handle.restarts == 0
    with pytest.raises(ActorUnavailable):
        child.handle.send("anything")


def test_poll_finds_a_child_that_died_without_reporting(clock: FakeClock) -> None:
    starts: list[str] = []
    # This child is given no way to report: only the poll can notice its death.
    child = ChildSpec("a", lambda _report: Worker.start(starts=starts, label="a"), ChildHandle("a"))
    start_sup([child], clock, poll_interval_s=1.0)
    child.handle.tell(RelayActor.inject_fault, "crash")
    wait_until(lambda: not child.handle.alive, what="the crash")
    assert child.handle.restarts == 0

    clock.advance(1.0)

    wait_until(lambda: child.handle.restarts == 1 and child.handle.alive, what="poll restart")
    assert starts == ["a", "a"]


class SlowToClean(Worker):
    """A child whose clean-up waits for ``release``: it holds what it took (a port, a file)
    until then."""

    def __init__(self, *, release: threading.Event, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._release = release

    def stopped(self) -> None:
        self._starts.append("cleaning")
        self._release.wait(30)
        self._starts.append("cleaned")


def test_a_crashed_child_still_cleaning_up_is_not_restarted_by_the_poll_meanwhile(
    clock: FakeClock,
) -> None:
    """Pykka marks a crashed actor dead before its clean-up runs: a poll then must not start
    the next incarnation beside the old one (which may still hold its port), nor count the
    crash twice; the restart comes once the old one let go."""
    starts: list[str] = []
    release = threading.Event()
    child = ChildSpec(
        "a",
        lambda report: SlowToClean.start(starts=starts, label="a", release=release, report=report),
        ChildHandle("a"),
    )
    start_sup([child], clock, poll_interval_s=1.0)
    child.handle.tell(RelayActor.inject_fault, "crash")
    wait_until(lambda: "cleaning" in starts and not child.handle.alive, what="the crash")
    try:
        poll(clock)
        assert starts == ["a", "cleaning"] and child.handle.restarts == 0
    finally:
        release.set()
    wait_until(lambda: child.handle.restarts == 1 and child.handle.alive, what="the restart")
    assert starts == ["a", "cleaning", "cleaned", "a"]


@pytest.mark.parametrize(
    ("restart", "how", "restarted"),
    [
        ("permanent", "normal", True),
        ("permanent", "crash", True),
        ("transient", "normal", False),
        ("transient", "crash", True),
        ("temporary", "normal", False),
        ("temporary", "crash", False),
    ],
)
def test_restart_types_by_exit_kind(
    clock: FakeClock, restart: str, how: str, restarted: bool
) -> None:
    child = spec("a", [], restart=restart)
    start_sup([child], clock, poll_interval_s=1.0)
    assert child.handle.ref is not None
    if how == "normal":
        child.handle.ref.stop(block=True, timeout=5)
    else:
        child.handle.tell(RelayActor.inject_fault, "crash")
    if restarted:
        wait_until(lambda: child.handle.restarts == 1 and child.handle.alive, what="restart")
    else:
        wait_until(lambda: child.handle.state == "stopped", what="child left stopped")
        clock.advance(3)  # polls see it dead and still leave it
        assert child.handle.restarts == 0
        assert not child.handle.alive


def test_backoff_delays_repeated_restarts_and_resets_after_a_healthy_run(
    clock: FakeClock,
) -> None:
    child = spec("a", [], backoff=Backoff(min_s=2.0, max_s=8.0, reset_after_s=60.0))
    start_sup([child], clock, intensity=Intensity(max_restarts=100, period_s=1))

    child.handle.tell(RelayActor.inject_fault, "crash")
    wait_until(lambda: child.handle.restarts == 1, what="first, immediate restart")

    child.handle.tell(RelayActor.inject_fault, "crash")
    wait_until(lambda: child.handle.state == "backoff", what="backoff")
    clock.advance(1.9)
    assert child.handle.restarts == 1
    clock.advance(0.2)
    wait_until(lambda: child.handle.restarts == 2, what="restart after 2 s")

    child.handle.tell(RelayActor.inject_fault, "crash")
    wait_until(lambda: child.handle.state == "backoff", what="backoff")
    clock.advance(3.9)
    assert child.handle.restarts == 2
    clock.advance(0.2)
    wait_until(lambda: child.handle.restarts == 3, what="restart after 4 s")

    clock.advance(60)  # a healthy minute resets the run
    child.handle.tell(RelayActor.inject_fault, "crash")
    wait_until(lambda: child.handle.restarts == 4, what="immediate restart after reset")


def test_backoff_delay_grows_exponentially_with_capped_jitter() -> None:
    backoff = Backoff(min_s=0.5, max_s=4.0, random_factor=0.2)
    assert [backoff.delay(n, rng=lambda: 0.0) for n in range(1, 7)] == [0, 0.5, 1, 2, 4, 4]
    assert backoff.delay(3, rng=lambda: 1.0) == pytest.approx(1.2)


def test_more_restarts_than_the_intensity_allows_escalates_to_the_parent(
    clock: FakeClock, logs: LogSink
) -> None:
    escalations: list[Any] = []
    child = spec("a", [])
    ref = start_sup(
        [child],
        clock,
        intensity=Intensity(max_restarts=2, period_s=30),
        report=escalations.append,
    )
    for expected in (1, 2):
        child.handle.tell(RelayActor.inject_fault, "crash")
        wait_until(partial(restarted, child, expected), what=f"restart {expected}")
    child.handle.tell(RelayActor.inject_fault, "crash")

    wait_until(lambda: escalations, what="escalation")
    assert "intensity" in escalations[0].reason
    wait_until(lambda: not ref.is_alive(), what="supervisor stopped")
    assert not child.handle.alive
    assert logs.named("supervisor.escalate")


def test_restarts_spread_over_longer_than_the_period_do_not_escalate(clock: FakeClock) -> None:
    child = spec("a", [])
    ref = start_sup([child], clock, intensity=Intensity(max_restarts=2, period_s=10))
    for n in range(1, 6):
        child.handle.tell(RelayActor.inject_fault, "crash")
        wait_until(partial(restarted, child, n), what=f"restart {n}")
        clock.advance(6)
    assert ref.is_alive()


def test_stop_abandons_a_hung_child_after_its_shutdown_timeout(
    clock: FakeClock, logs: LogSink
) -> None:
    starts: list[str] = []
    hung = spec("hung", starts, shutdown_timeout_s=0.2)
    other = spec("other", starts)
    ref = start_sup([other, hung], clock)
    release = threading.Event()
    hung.handle.tell(Worker.block, release)

    assert ref.stop(block=True, timeout=10)

    assert not other.handle.alive
    abandoned = logs.named("supervisor.child_abandoned")
    assert [e["child"] for e in abandoned] == ["hung"]
    release.set()


def test_stop_is_in_reverse_start_order(clock: FakeClock) -> None:
    stopped: list[str] = []

    class Recorder(RelayActor):
        def __init__(self, *, label: str, report: Reporter | None = None) -> None:
            super().__init__(report=report)
            self._label = label

        def stopped(self) -> None:
            stopped.append(self._label)

    def starter(label: str) -> Any:
        return lambda report: Recorder.start(label=label, report=report)

    children = [ChildSpec(n, starter(n), ChildHandle(n)) for n in ("a", "b", "c")]
    ref = start_sup(children, clock)
    ref.stop(block=True, timeout=10)
    assert stopped == ["c", "b", "a"]


def test_a_hung_child_is_abandoned_and_replaced(clock: FakeClock, logs: LogSink) -> None:
    starts: list[str] = []
    child = spec("a", starts, ping_timeout_s=2.0)
    start_sup([child], clock, poll_interval_s=1.0)
    old = child.handle.ref
    assert old is not None
    release = threading.Event()
    child.handle.tell(Worker.block, release)
    queued = old.proxy().mark("late")  # waits behind the hang

    for _ in range(3):  # ping sent at 1 s; unanswered for 1 s, then 2 s: not yet too long
        poll(clock)
        assert child.handle.restarts == 0
    poll(clock)  # 3 s > 2 s

    wait_until(lambda: child.handle.restarts == 1 and child.handle.alive, what="replacement")
    assert child.handle.ref is not old
    assert not old.is_alive()
    assert logs.named("supervisor.child_abandoned")[0]["reason"] == "hung"
    release.set()
    with pytest.raises(pykka.ActorDeadError):
        queued.get(timeout=5)  # the abandoned incarnation handled nothing more
    assert starts == ["a", "a"]


def test_a_child_busy_for_a_moment_when_time_jumps_past_its_ping_deadline_is_not_hung(
    clock: FakeClock,
) -> None:
    # As after a pause of the whole process (Ctrl-Z, a debugger, a suspended VM), or in a
    # test whose clock runs ahead: the ping looks old only because nobody ran meanwhile.
    child = spec("a", [], ping_timeout_s=2.0)
    start_sup([child], clock, poll_interval_s=1.0)
    child.handle.tell(Worker.pause, 0.1)  # the ping the next poll sends waits behind this
    for _ in range(4):  # sent at 1 s, then unanswered for 3 s of the clock in a few ms
        poll(clock)
    assert child.handle.ask(Worker.mark, "after").result(timeout=5) == "after"
    assert child.handle.restarts == 0


def test_a_child_that_answers_its_pings_is_left_alone(clock: FakeClock) -> None:
    child = spec("a", [], ping_timeout_s=0.5)
    start_sup([child], clock, poll_interval_s=1.0)
    for _ in range(10):
        poll(clock)
    assert child.handle.restarts == 0


def test_calls_queued_behind_a_crash_fail_at_once_instead_of_timing_out(
    clock: FakeClock,
) -> None:
    child = spec("a", [])
    start_sup([child], clock)
    release = threading.Event()
    child.handle.tell(Worker.block, release)
    child.handle.tell(RelayActor.inject_fault, "crash")
    queued = [child.handle.ask(RelayActor.ping) for _ in range(3)]
    release.set()
    for reply in queued:
        with pytest.raises(ActorUnavailable, match="stopped before answering"):
            reply.result(timeout=2)
    wait_until(lambda: child.handle.restarts == 1, what="restart")
    assert child.handle.ask(RelayActor.ping).result(timeout=5) == "pong"


def test_calls_queued_behind_a_stop_fail_at_once(clock: FakeClock) -> None:
    child = spec("a", [])
    start_sup([child], clock)
    release = threading.Event()
    child.handle.tell(Worker.block, release)
    ref = child.handle.ref
    assert ref is not None
    stopping = threading.Thread(target=ref.stop)
    stopping.start()
    wait_until(lambda: ref.actor_inbox.qsize() >= 1, what="the stop to be queued")  # type: ignore[attr-defined]
    late = child.handle.ask(RelayActor.ping)
    release.set()
    stopping.join(5)
    with pytest.raises(ActorUnavailable):
        late.result(timeout=2)
