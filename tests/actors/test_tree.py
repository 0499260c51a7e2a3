"""The supervision tree in process: a start that fails says why, a data directory or a port in
use, crashes logged, and the root's escalation."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import pykka
import pytest

from actors.core.error_text import safe_text
from actors.ingest.feed_buffer import FeedBuffer
from actors.kernel import scrubber
from actors.kernel.base import ChildHandle, RelayActor, Reporter
from actors.kernel.clock import FakeClock
from actors.kernel.data_dir import DataDirInUse
from actors.kernel.errors import ActorUnavailable
from actors.kernel.start_watch import watching_start
from actors.subtrees import Wiring
from actors.tree import Relay, StartFailed, start_relay
from tests.support.actor_calls import restarted
from tests.support.observe import LogSink, wait_until
from tests.support.relay import relay_settings


def test_in_process_a_second_start_on_the_directory_is_refused_until_the_first_stops(
    make_relay: Callable[..., Relay], tmp_path: Path, logs: LogSink
) -> None:
    data = (tmp_path / "data").resolve()
    settings = replace(relay_settings(), data_dir=str(data))
    first = make_relay(settings)

    with pytest.raises(DataDirInUse) as refused:
        make_relay(settings)

    assert str(refused.value) == (
        f"data directory {data} is in use by another relay (pid {os.getpid()})"
    )
    assert not logs.named("storage.unusable_serving_from_memory")
    assert first.handles["feed"].ask(FeedBuffer.append, "kept", "normal").result(timeout=5).id == 1
    assert first.stop()
    again = make_relay(settings)
    assert again.storage.epoch == first.storage.epoch
    assert again.handles["feed"].ask(FeedBuffer.append, "next", "normal").result(timeout=5).id == 2


def test_in_process_a_port_in_use_raises_its_cause_and_logs_no_error(
    make_relay: Callable[..., Relay], logs: LogSink, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(RuntimeError) as failed:
            make_relay(replace(relay_settings(), port=port))
    assert str(failed.value) == f"port {port} on 127.0.0.1 is in use"
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    loud = [e for e in logs.events if e["level"] in ("error", "critical")]
    assert loud == []


def report_a_crash(message: str) -> None:
    """What Pykka logs for an actor that raised: an error with the exception."""
    try:
        raise ValueError(message)
    except ValueError:
        logging.getLogger("pykka").exception("Unhandled exception in Feed")


def pykka_records(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [
        (r.levelno, str(r.exc_info[1]) if r.exc_info else "")
        for r in caplog.records
        if r.name == "pykka"
    ]


def test_a_crash_while_the_tree_starts_is_logged_as_an_error_when_the_start_succeeds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with watching_start() as watch:
        report_a_crash("recovered")
        assert pykka_records(caplog) == []  # held until the start ends
    assert pykka_records(caplog) == [(logging.ERROR, "recovered")]
    assert watch.held == []


@pytest.mark.parametrize(("level", "expected"), [(logging.INFO, []), (logging.DEBUG, ["x"])])
def test_the_reports_of_a_failed_start_are_debug_lines(
    caplog: pytest.LogCaptureFixture, level: int, expected: list[str]
) -> None:
    caplog.set_level(level)

    def failed_start() -> None:
        with watching_start() as watch:
            report_a_crash("x")
            raise StartFailed(watch.cause(pykka.Timeout()))

    with pytest.raises(StartFailed, match=r"^ValueError: x$"):
        failed_start()
    assert pykka_records(caplog) == [(logging.DEBUG, m) for m in expected]


def test_the_cause_of_a_failed_start_is_the_first_error_in_words() -> None:
    with watching_start() as watch:
        report_a_crash("first")
        assert watch.cause(pykka.ActorDeadError()) == "ValueError: first"
        watch.held.clear()
        assert "did not answer within" in watch.cause(pykka.Timeout())


def test_a_crash_after_the_start_still_logs_its_traceback(
    make_relay: Callable[..., Relay], caplog: pytest.LogCaptureFixture
) -> None:
    relay = make_relay()
    feed = relay.handles["feed"]
    feed.tell(RelayActor.inject_fault, "crash")
    wait_until(partial(restarted, feed, 1), what="the feed's restart")
    crashes = [r for r in caplog.records if r.name == "pykka" and r.levelno == logging.ERROR]
    assert crashes and crashes[0].exc_info is not None


def test_the_root_escalates_when_a_child_keeps_crashing_and_not_on_a_normal_stop(
    make_relay: Any,
) -> None:
    from actors.kernel.base import ChildExited  # noqa: PLC0415

    escalations: list[ChildExited] = []
    relay = make_relay(on_escalate=escalations.append)
    feed = relay.handles["feed"]
    for n in range(1, 11):  # the root allows 10 restarts in 30 s
        feed.tell(RelayActor.inject_fault, "crash")
        wait_until(partial(restarted, feed, n), what=f"restart {n}")
    assert escalations == []

    feed.tell(RelayActor.inject_fault, "crash")

    wait_until(lambda: escalations, what="the escalation")
    assert "intensity" in escalations[0].reason
    wait_until(lambda: not relay.root.is_alive(), what="the root to stop")
    assert not relay.handles["http"].alive


def test_a_normal_stop_does_not_escalate(make_relay: Any) -> None:
    escalations: list[Any] = []
    relay = make_relay(on_escalate=escalations.append)
    assert relay.stop()
    assert escalations == []


def test_a_hang_drill_ends_when_the_relay_stops(make_relay: Any, logs: LogSink) -> None:
    relay = make_relay()
    for name in ("feed", "http"):  # an actor's thread, and the transport's event loop
        relay.handles[name].tell(RelayActor.inject_fault, "hang", 600)
    wait_until(lambda: len(logs.named("actor.fault_injected")) == 2, what="both drills")
    assert relay.stop()
    assert not logs.named("supervisor.child_abandoned")
    assert not logs.named("http.cleanup_failed")


START_ORDER = (
    "root",
    "privacy",
    "feed",
    "sense",
    "digest",
    "agent",
    "context",
    "llm",
    "ticker",
    "audio",
    "stt",
    "http",
)
"""Each actor as its start begins (a supervisor's children start within its own start)."""


def test_the_subtrees_start_in_order_and_stop_in_reverse(
    make_relay: Callable[..., Relay], monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[str] = []
    stopped: list[str] = []
    on_start, on_stop = RelayActor.on_start, RelayActor.on_stop

    def record_start(self: RelayActor) -> None:
        started.append(self.name)
        on_start(self)

    def record_stop(self: RelayActor) -> None:
        on_stop(self)
        stopped.append(self.name)

    monkeypatch.setattr(RelayActor, "on_start", record_start)
    monkeypatch.setattr(RelayActor, "on_stop", record_stop)
    relay = make_relay()
    assert started == [*START_ORDER]
    assert relay.stop()
    assert stopped == started[::-1]


class Refuses(RelayActor):
    """A frontend's actor that fails its start, as a server whose bind fails does."""

    name = "http"

    def started(self) -> None:
        msg = "the frontend cannot serve"
        raise RuntimeError(msg)


@dataclass
class RefusingFrontend:
    """A frontend whose check passes and whose actor then fails its start."""

    def check(self) -> None:
        pass

    def starter(self, wiring: Wiring) -> Callable[[Reporter], pykka.ActorRef[Any]]:
        return lambda report: Refuses.start(report=report)

    def address(self, handle: ChildHandle[Any], timeout_s: float) -> tuple[str, int]:
        raise AssertionError(handle, timeout_s)


def test_a_subtree_that_fails_its_start_stops_the_others_and_frees_the_directory(
    make_relay: Callable[..., Relay], clock: FakeClock, tmp_path: Path
) -> None:
    settings = replace(relay_settings(), data_dir=str(tmp_path / "data"))
    with pytest.raises(StartFailed, match=r"^the frontend cannot serve$"):
        start_relay(settings, clock, frontend=RefusingFrontend())
    wait_until(lambda: not pykka.ActorRegistry.get_all(), what="every started actor to stop")
    again = make_relay(settings)  # the data directory is free again
    assert again.handles["feed"].ask(FeedBuffer.append, "a", "normal").result(timeout=5).id == 1


@pytest.mark.usefixtures("no_scrubber")
def test_the_relay_hands_the_kernel_its_scrubber_before_anything_starts(
    make_relay: Callable[..., Relay],
) -> None:
    make_relay()
    assert scrubber._scrubber is safe_text


def test_the_tree_is_drawn_from_what_its_supervisors_run(
    make_relay: Callable[..., Relay],
) -> None:
    relay = make_relay()  # no SITUATION.md file, no audio source: those actors do not run
    assert relay.tree().picture() == (
        "root (Supervisor)\n"
        "├── privacy  PrivacyStore\n"
        "├── feed  FeedBuffer\n"
        "├── sense  SenseBuffer\n"
        "├── digest  DigestStore\n"
        "├── agent  Supervisor\n"
        "│   ├── context  ContextBuilder\n"
        "│   ├── llm  LLMCaller\n"
        "│   └── ticker  Ticker\n"
        "├── audio  Supervisor\n"
        "│   └── stt  Transcriber\n"
        "└── http  HttpTransport"
    )
    relay.stop()
    with pytest.raises(ActorUnavailable):
        relay.tree()
