"""Fault drills on the audio path, in a whole relay: ``POST /debug/fault`` crashes or hangs the
transcriber (``stt``) and a capture (``capture_system``); a drill on a capture that is not
configured is a 400 naming it. After each fault the audio flows again, exactly one process
captures the source (no orphan of the dead incarnation, crashed or abandoned as hung), and a
dead transcriber leaves no thread behind."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace

import httpx
import pytest

from actors.audio.capture import Capture
from actors.kernel.clock import FakeClock
from actors.kernel.processes import alive
from actors.tree import Relay
from config.audio.settings import AudioConfig
from tests.audio.pcm_program import command
from tests.support.actor_calls import asked
from tests.support.chaos_audio import capture_processes
from tests.support.harness import ROOT
from tests.support.observe import wait_until
from tests.support.relay import assert_error, client_for, relay_settings
from transport.demo.fake_stt import FakeStt

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="counts processes in /proc")

PROGRAM = "tests.audio.pcm_program"
PING_DEADLINE_S = 10.0
"""The audio children's ping deadline (``actors.subtrees.PING_TIMEOUT_S``)."""


def program(speed: float = 20.0) -> str:
    return command("--scene", "speech:1200,silence:1500", "--repeat", "200", speed=speed)


@pytest.fixture
def fake_stt() -> Iterator[FakeStt]:
    with FakeStt() as stt:
        stt.text = "the first thing said"
        yield stt


@pytest.fixture
def drilled(
    make_relay: Callable[..., Relay], fake_stt: FakeStt, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Relay, httpx.Client]]:
    """A relay with fault drills, capturing system audio (the tests' PCM program) and
    transcribing it with the stand-in speech service."""
    monkeypatch.chdir(ROOT)  # ``-m tests.audio.pcm_program`` is found from the top
    audio = AudioConfig(
        source=program(),
        stt_api="chat",
        stt_base_url=fake_stt.base_url,
        stt_api_key="placeholder",
    )
    relay = make_relay(replace(relay_settings(), faults=True, audio=audio))
    with client_for(relay, timeout=10) as client:
        yield relay, client


def stored(client: httpx.Client, text: str) -> bool:
    """Whether the feed holds the transcript ``text`` (with the system audio's mark)."""
    return any(m["text"] == f"[🔊] {text}" for m in client.get("/feed").json()["messages"])


def hears(client: httpx.Client, stt: FakeStt, text: str) -> None:
    """The speech service answers ``text`` from now on; wait until the feed holds it."""
    stt.text = text
    wait_until(lambda: stored(client, text), 15, f"the transcript {text!r} in the feed")


def restarted(client: httpx.Client, actor: str, times: int) -> None:
    def shown() -> bool:
        state = client.get("/health").json()["actors"][actor]
        return bool(state["restarts"] == times and state["alive"])

    wait_until(shown, 10, f"{actor} restarted {times} times")


def capture_pid(relay: Relay, other_than: int | None = None) -> int:
    """The capture's running process (a new one, if ``other_than`` is given)."""

    def running() -> int | None:
        pid = asked(relay.handles["capture_system"], Capture.snapshot).pid
        return pid if pid is not None and pid != other_than and alive(pid) else None

    pid: int = wait_until(running, 10, "a running capture process")
    return pid


def only_capture(pid: int) -> None:
    """Wait until ``pid`` is the one process running the capture program (an orphan of a
    replaced capture would stay). A process in the middle of ``exec`` shows no command line for
    a moment, so one look may miss it."""
    wait_until(lambda: capture_processes(os.getpid(), PROGRAM) == [pid], 10, "one capture process")


def test_a_drill_on_a_capture_not_configured_is_a_400_naming_it(
    drilled: tuple[Relay, httpx.Client],
) -> None:
    relay, client = drilled
    answer = client.post("/debug/fault", json={"actor": "capture_mic", "kind": "crash"})
    assert_error(answer, 400, "capture_mic")
    assert "MIC_SOURCE is empty" in answer.json()["error"]
    assert all(h.restarts == 0 for h in relay.handles.values())
    assert client.get("/health").status_code == 200


def test_after_crash_drills_of_the_transcriber_and_the_capture_one_process_captures_and_transcripts_flow(  # noqa: E501
    drilled: tuple[Relay, httpx.Client], fake_stt: FakeStt
) -> None:
    relay, client = drilled
    hears(client, fake_stt, "the first thing said")
    assert client.post("/debug/fault", json={"actor": "stt", "kind": "crash"}).json() == {
        "ok": True
    }
    restarted(client, "stt", 1)
    hears(client, fake_stt, "said after the transcriber crashed")

    first = capture_pid(relay)
    assert client.post("/debug/fault", json={"actor": "capture_system", "kind": "crash"})
    restarted(client, "capture_system", 1)
    second = capture_pid(relay, other_than=first)
    assert not alive(first)
    only_capture(second)
    hears(client, fake_stt, "said after the capture crashed")


@pytest.mark.slow
def test_a_capture_hung_past_its_ping_deadline_is_replaced_by_exactly_one_process(
    drilled: tuple[Relay, httpx.Client], fake_stt: FakeStt, clock: FakeClock
) -> None:
    relay, client = drilled
    first = capture_pid(relay)
    answer = client.post(
        "/debug/fault", json={"actor": "capture_system", "kind": "hang", "seconds": 20}
    )
    assert answer.json() == {"ok": True}
    # the hang holds the mailbox, not the reader: utterances go on to the transcriber
    hears(client, fake_stt, "said while the capture actor hangs")
    handle = relay.handles["capture_system"]

    def replaced() -> bool:
        clock.advance(1.0)  # the audio supervisor polls, pings, and gives up on the hung one
        return handle.restarts == 1

    wait_until(replaced, 15, "the hung capture replaced")
    second = capture_pid(relay, other_than=first)
    only_capture(second)
    assert not alive(first)
    hears(client, fake_stt, "said after the hung capture was replaced")


def stt_threads() -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("stt-"))


@pytest.mark.slow
def test_a_dead_transcriber_leaves_no_thread_behind_crashed_or_hung(
    drilled: tuple[Relay, httpx.Client], fake_stt: FakeStt, clock: FakeClock
) -> None:
    relay, client = drilled
    hears(client, fake_stt, "before the transcriber dies")
    fake_stt.mode, fake_stt.delay_s = "slow", 3.0  # requests are in flight when it dies
    baseline = threading.active_count()
    handle = relay.handles["stt"]
    for crash in range(1, 4):
        in_flight = fake_stt.calls
        wait_until(lambda: fake_stt.calls > in_flight, 10, "a request in flight")  # noqa: B023
        assert client.post("/debug/fault", json={"actor": "stt", "kind": "crash"})
        restarted(client, "stt", crash)
    wait_until(
        lambda: threading.active_count() <= baseline, 10, "the crashed incarnations' threads gone"
    )
    assert client.post("/debug/fault", json={"actor": "stt", "kind": "hang", "seconds": 20})

    def replaced() -> bool:
        clock.advance(1.0)
        return handle.restarts == 4

    wait_until(replaced, 15, "the hung transcriber replaced")
    # the hung incarnation's own thread waits out its hang (Python cannot end it), but its
    # speech client and its delivery thread are gone
    wait_until(lambda: stt_threads().count("stt-loop") == 1, 10, "one speech client loop")
    fake_stt.mode = "ok"
    hears(client, fake_stt, "after the transcriber died four times")
    assert len([t for t in stt_threads() if t.startswith("stt-deliver")]) <= 1
