"""The contract of :mod:`actors.kernel.pykka_compat` with the installed Pykka.

:class:`~actors.kernel.pykka_compat.HookedActor` overrides a private method of Pykka's and
reads its inbox's envelopes. Should a release rename or change either, these tests fail
first, each naming the part and what changed, rather than a durable actor holding SQLite's
write lock from its successor, or a call waiting its whole timeout. The first tests look at
the names; the rest run real actors through a stop, a crash, an ended loop and a full inbox.
"""

from __future__ import annotations

import inspect
import queue
import threading
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any

import pykka
import pytest
from packaging.specifiers import SpecifierSet
from pykka.messages import ProxyCall

from actors.kernel.pykka_compat import SUPPORTED, HookedActor
from actors.kernel.supervisor import abandon
from tests.support.pins import pinned

PYKKA = version("pykka")
WAIT_S = 5.0
"""The bound of every wait here."""
CHANGED = "pykka {version} changed {name}, which actors/kernel/pykka_compat.py relies on"


def changed(name: str) -> str:
    return CHANGED.format(version=PYKKA, name=name)


@dataclass
class Record:
    """What a :class:`Probe` saw: each step with the thread it ran on, in order."""

    seen: list[tuple[str, str]] = field(default_factory=list)
    taken: list[Any] = field(default_factory=list)
    ended: threading.Event = field(default_factory=threading.Event)
    entered: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def steps(self) -> list[str]:
        return [step for step, _ in self.seen]


class Probe(HookedActor):
    """Records on which thread, and in which order, its hooks run."""

    def __init__(self, record: Record) -> None:
        super().__init__()
        self.record = record

    def _saw(self, step: str) -> None:
        self.record.seen.append((step, threading.current_thread().name))

    def on_stop(self) -> None:
        self._saw("on_stop")

    def on_failure(self, *_: Any) -> None:
        self._saw("on_failure")

    def loop_ended(self) -> None:
        self._saw("loop_ended")
        self.record.ended.set()

    def crash(self) -> None:
        msg = "told to crash"
        raise RuntimeError(msg)

    def hold(self, take: bool = False) -> None:
        """Wait for ``release`` (as a hung call would), the inbox filling meanwhile; then take
        the strings queued, if asked to."""
        self.record.entered.set()
        assert self.record.release.wait(WAIT_S)
        if take:
            self.record.taken = self._take_queued(lambda message: isinstance(message, str))

    def on_receive(self, message: Any) -> Any:
        self._saw(f"received {message}")
        return message


def call(method: str, **kwargs: Any) -> ProxyCall:
    return ProxyCall(attr_path=(method,), args=(), kwargs=kwargs)


def holding(record: Record, *, take: bool = False) -> pykka.ActorRef[Probe]:
    """A started probe, in its :meth:`Probe.hold` call."""
    ref = Probe.start(record)
    ref.tell(call("hold", take=take))
    assert record.entered.wait(WAIT_S)
    return ref


# -- the names ---------------------------------------------------------------------------------


def test_pyproject_pins_pykka_to_the_versions_the_module_was_checked_against() -> None:
    pin = pinned("pykka")
    assert pin == SpecifierSet(SUPPORTED)
    assert PYKKA in pin, (
        f"pykka {PYKKA} is installed; actors/kernel/pykka_compat.py was checked "
        f"against {SUPPORTED} only: run these tests on it, then widen the pin"
    )


def test_the_loop_ends_with_a_private_teardown_taking_no_argument() -> None:
    teardown = getattr(pykka.ThreadingActor, "_actor_loop_teardown", None)
    assert callable(teardown), changed("Actor._actor_loop_teardown")
    assert list(inspect.signature(teardown).parameters) == ["self"], changed(
        "Actor._actor_loop_teardown's parameters"
    )


def test_the_inbox_is_a_queue() -> None:
    ref = Probe.start(Record())
    assert isinstance(ref.actor_inbox, queue.Queue), changed("ThreadingActor.actor_inbox")
    ref.stop(timeout=WAIT_S)


# -- the behaviour, on real actors -------------------------------------------------------------


def test_loop_ended_runs_last_on_the_actor_s_thread_after_a_stop() -> None:
    record = Record()
    Probe.start(record).stop(timeout=WAIT_S)
    assert record.ended.wait(WAIT_S), changed("when the teardown runs")
    assert record.steps() == ["on_stop", "loop_ended"], changed("the order of the last steps")
    assert threading.current_thread().name not in {thread for _, thread in record.seen}


def test_loop_ended_runs_after_a_crash() -> None:
    record = Record()
    Probe.start(record).tell(call("crash"))
    assert record.ended.wait(WAIT_S), changed("the teardown after a crash")
    assert record.steps() == ["on_failure", "loop_ended"]


def test_a_loop_told_to_end_mid_call_handles_nothing_more_and_ends_with_the_hook() -> None:
    record = Record()
    ref = holding(record)
    ref.tell("never handled")
    asked = ref.ask("never answered", block=False)
    abandon(ref)  # the supervisor ends a hung actor's loop: actor_stopped set
    record.release.set()
    assert record.ended.wait(WAIT_S), changed("the loop's check of actor_stopped")
    assert record.steps() == ["loop_ended"]
    with pytest.raises(pykka.ActorDeadError):  # Pykka's own teardown still answers asks
        asked.get(timeout=WAIT_S)


def test_take_queued_takes_what_it_wants_in_order_and_leaves_the_rest_queued() -> None:
    record = Record()
    ref = holding(record, take=True)
    for message in ("a", 1, "b", 2):
        ref.tell(message)
    record.release.set()
    ref.stop(timeout=WAIT_S)
    assert record.taken == ["a", "b"], changed("the inbox's envelopes")
    assert record.steps() == ["received 1", "received 2", "on_stop", "loop_ended"]
