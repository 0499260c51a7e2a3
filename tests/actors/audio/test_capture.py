"""The capture actor: a real process (``tests/audio/pcm_program.py``) per source, its PCM into
a detector (a test double cutting on energy), its utterances handed on; restarts with backoff
on the injected clock, the failed state, pause, resume, switch, and no process left behind."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
import wave
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from actors.audio.capture import REFRESH_S, Capture
from actors.audio.core.capture_records import CaptureSettings, CaptureStatus, not_started
from actors.audio.core.sources import SourceError
from actors.audio.core.utterance import Utterance
from actors.kernel.base import ChildHandle
from actors.kernel.clock import FakeClock
from actors.kernel.processes import alive
from actors.kernel.published import Published
from tests.audio.energy_detector import EnergyDetector
from tests.audio.pcm_program import command as program
from tests.audio.signals import scene
from tests.support.actor_calls import asked
from tests.support.harness import ROOT
from tests.support.observe import LogSink, wait_until

FAST = CaptureSettings(backoff_s=1.0, max_backoff_s=4.0, stop_grace_s=0.5, file_speed=4.0)
SCENE = "speech:800,silence:600"


class Started:
    """A capture started in a test, with what it handed on."""

    def __init__(self, handle: ChildHandle[Capture], heard: list[Utterance]) -> None:
        self.handle = handle
        self.heard = heard

    def status(self) -> CaptureStatus:
        return asked(self.handle, Capture.snapshot)

    def wait(self, what: str, predicate: Callable[[CaptureStatus], bool]) -> CaptureStatus:
        def met() -> CaptureStatus | None:
            status = self.status()
            return status if predicate(status) else None

        result: CaptureStatus = wait_until(met, 10, what)
        return result


@pytest.fixture
def capture(clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Started]]:
    """Start a capture of a value on the fake clock; it is stopped after the test."""
    monkeypatch.chdir(ROOT)  # ``-m tests.audio.pcm_program`` is found from the top
    refs = []

    def start(
        value: str,
        settings: CaptureSettings = FAST,
        alt: str = "",
        published: Published[CaptureStatus] | None = None,
    ) -> Started:
        heard: list[Utterance] = []
        ref = Capture.start(
            source="system",
            value=value,
            detector=EnergyDetector,
            on_utterance=heard.append,
            clock=clock,
            settings=settings,
            alt=alt,
            published=published,
        )
        refs.append(ref)
        handle: ChildHandle[Capture] = ChildHandle("capture")
        handle.bind(ref)
        return Started(handle, heard)

    yield start
    for ref in refs:
        if ref.is_alive():
            ref.stop(timeout=10)


def warnings(logs: LogSink) -> list[str]:
    return [e["event"] for e in logs.events if e["level"] in ("warning", "error", "critical")]


def test_the_programs_pcm_reaches_the_detector_and_utterances_are_handed_on(
    capture: Callable[..., Started],
) -> None:
    started = capture(program("--scene", SCENE, "--repeat", "2"))
    wait_until(lambda: len(started.heard) >= 2, 10, "two utterances")
    status = started.wait("the scene played", lambda s: s.captured_s >= 2.8)
    stream = scene(*[("speech", 800), ("silence", 600)]) * 2
    for utterance in started.heard[:2]:
        assert utterance.source == "system"
        assert 700 <= utterance.duration_ms <= 1200
        assert utterance.pcm in stream  # the bytes the program wrote, whole and in order
    assert status.kind == "command"
    assert status.pid is not None and alive(status.pid)
    assert status.utterances == len(started.heard)
    assert status.state == "running"
    assert 0.0 < status.speech_share < 1.0


def test_an_exit_is_restarted_after_a_doubling_backoff_keeping_its_code_and_stderr(
    capture: Callable[..., Started], clock: FakeClock, logs: LogSink
) -> None:
    started = capture(program("--stderr", "device busy", "--exit-after", "0.1", "--code", "3"))
    first = started.wait("the first exit", lambda s: s.state == "backoff")
    assert (first.last_exit, first.last_stderr, first.restarts) == (3, "device busy", 0)
    clock.advance(0.99)
    assert started.status().restarts == 0
    clock.advance(0.01)
    started.wait("the second exit", lambda s: s.restarts == 1 and s.state == "backoff")
    clock.advance(1.99)
    assert started.status().restarts == 1
    clock.advance(0.01)
    started.wait("the third exit", lambda s: s.restarts == 2 and s.state == "backoff")
    exits = logs.named("capture.exited")
    assert [e["restart_in_s"] for e in exits] == [1.0, 2.0, 4.0]
    assert {(e["level"], e["exit"], e["stderr"]) for e in exits} == {("warning", 3, "device busy")}


def test_a_crash_is_restarted_and_its_signal_kept(
    capture: Callable[..., Started], clock: FakeClock
) -> None:
    started = capture(program("--crash-after", "0.05"))
    crashed = started.wait("the crash", lambda s: s.state == "backoff")
    assert crashed.last_exit == -9
    clock.advance(1.0)
    started.wait("the restart", lambda s: s.restarts == 1 and s.last_exit == -9)


@pytest.mark.parametrize(
    ("value", "stderr"),
    [
        ("command:/nonexistent/capture-tool --rate 16000", "not found on PATH"),
        (program("--stderr", "no such device", "--exit-after", "0", "--code", "1"), "no such"),
    ],
    ids=["missing program", "missing device"],
)
def test_a_source_that_never_gives_audio_fails_with_one_log_line(
    capture: Callable[..., Started], clock: FakeClock, logs: LogSink, value: str, stderr: str
) -> None:
    started = capture(value, CaptureSettings(backoff_s=0.5, attempts=3))
    for restarts in (1, 2):
        started.wait(f"try {restarts}", lambda s: s.state == "backoff")
        clock.advance(30)
        started.wait(f"try {restarts}", lambda s, n=restarts: s.restarts == n)  # type: ignore[misc]
    failed = started.wait("failed", lambda s: s.state == "failed")
    clock.advance(600)
    assert started.status().restarts == failed.restarts == 2
    assert stderr in failed.last_stderr
    assert warnings(logs) == ["capture.failed"]
    (line,) = logs.named("capture.failed")
    assert line["attempts"] == 3
    assert stderr in line["stderr"]


def test_a_process_that_stalls_is_ended_even_ignoring_sigterm_and_restarted(
    capture: Callable[..., Started], clock: FakeClock
) -> None:
    started = capture(
        program("--hang", "--ignore-term", "--stderr", "ready"),
        CaptureSettings(stall_s=5, stop_grace_s=0.3),
    )
    pid = started.wait("the process", lambda s: s.last_stderr == "ready").pid
    assert pid is not None
    clock.advance(4.9)
    assert started.status().state == "starting"
    clock.advance(0.1)
    ended = started.wait("the stall's end", lambda s: s.state == "backoff")
    assert ended.last_exit == -9  # SIGTERM ignored, SIGKILL after the grace
    assert not alive(pid)


def test_a_program_left_holding_the_pipe_by_an_exited_one_is_ended_with_it(
    capture: Callable[..., Started], clock: FakeClock
) -> None:
    inner = program("--hang", "--stderr", "ready").removeprefix("command:")
    started = capture(
        "command:sh -c " + shlex.quote(f"{inner} & exit 3"), CaptureSettings(stall_s=5)
    )
    started.wait("the left program", lambda s: s.last_stderr == "ready")
    clock.advance(5)
    ended = started.wait("the end", lambda s: s.state == "backoff")
    assert ended.last_exit == 3


def test_pause_ends_the_process_and_resume_starts_another(
    capture: Callable[..., Started],
) -> None:
    started = capture(program("--scene", SCENE, "--repeat", "100"))
    pid = started.wait("running", lambda s: s.state == "running").pid
    assert pid is not None
    paused = asked(started.handle, Capture.pause)
    assert (paused.state, paused.pid) == ("paused", None)
    assert not alive(pid)
    heard = len(started.heard)
    time.sleep(0.2)
    assert len(started.heard) == heard
    resumed = asked(started.handle, Capture.resume)
    assert resumed.state == "starting"
    again = started.wait("running again", lambda s: s.state == "running")
    assert again.pid not in (None, pid)
    assert again.restarts == 0


def test_switch_swaps_the_source_and_back_and_a_bad_value_changes_nothing(
    capture: Callable[..., Started],
) -> None:
    started = capture(program("--stderr", "first"))
    first = started.wait("first", lambda s: s.state == "running" and s.last_stderr == "first")
    other = asked(started.handle, Capture.switch, program("--stderr", "second"))
    assert first.pid is not None and not alive(first.pid)
    second = started.wait("second", lambda s: s.state == "running" and s.last_stderr == "second")
    assert other.pid == second.pid != first.pid
    with pytest.raises(SourceError, match=r"^AUDIO_SOURCE must be one of"):
        asked(started.handle, Capture.switch, "bogus")
    assert started.status().pid == second.pid
    asked(started.handle, Capture.switch, program("--stderr", "first"))
    started.wait("first again", lambda s: s.state == "running" and s.last_stderr == "first")
    paused = asked(started.handle, Capture.pause)
    still = asked(started.handle, Capture.switch, program("--stderr", "third"))
    assert (still.state, still.pid) == ("paused", None) == (paused.state, paused.pid)


def test_a_busy_actor_does_not_hold_up_the_audio(capture: Callable[..., Started]) -> None:
    started = capture(program("--scene", SCENE, "--repeat", "100"))
    wait_until(lambda: started.heard, 10, "a first utterance")
    started.handle.tell(Capture.inject_fault, "hang", 1.0)
    heard = len(started.heard)
    wait_until(lambda: len(started.heard) >= heard + 2, 0.9, "utterances while the actor hangs")


def test_stop_leaves_no_process_even_one_ignoring_sigterm(
    capture: Callable[..., Started],
) -> None:
    started = capture(program("--ignore-term"))
    pid = started.wait("running", lambda s: s.state == "running").pid
    assert pid is not None
    assert started.handle.ref is not None
    started.handle.ref.stop(timeout=10)
    assert not alive(pid)


PARENT = """
import sys, threading
from actors.audio.capture import Capture
from actors.kernel.clock import SystemClock
from tests.audio.energy_detector import EnergyDetector
ref = Capture.start(source="mic", value=sys.argv[1], detector=EnergyDetector,
                    on_utterance=lambda u: None, clock=SystemClock())
while (pid := ref.proxy().snapshot().get(timeout=5).pid) is None:
    threading.Event().wait(0.01)
print(f"pid={pid}", flush=True)
threading.Event().wait(60)
"""


def test_the_process_dies_with_its_owner_even_after_kill_9() -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", PARENT, program("--hang", "--ignore-term")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert owner.stdout is not None
        lines = iter(owner.stdout.readline, "")
        line = wait_until(lambda: next(line for line in lines if line.startswith("pid=")), 20)
        pid = int(line.removeprefix("pid="))
        assert alive(pid)
        owner.kill()
        owner.wait(timeout=5)
        wait_until(lambda: not alive(pid), 5, f"process {pid} to die with its owner")
    finally:
        owner.kill()
        owner.wait(timeout=5)


def write_wav(path: Path, rate: int = 16_000) -> bytes:
    pcm = scene(("speech", 800), ("silence", 600), ("speech", 800), ("silence", 600))
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm)
    return pcm


@pytest.mark.slow
def test_a_16k_wav_replays_at_its_speed_without_ffmpeg(
    capture: Callable[..., Started], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no program at all
    write_wav(tmp_path / "talk.wav")
    began = time.monotonic()
    started = capture(f"file:{tmp_path / 'talk.wav'}")
    ended = started.wait("the file's end", lambda s: s.state == "stopped")
    took = time.monotonic() - began
    assert took >= 2.8 / FAST.file_speed * 0.95  # paced, not read at once
    assert (ended.captured_s, ended.utterances, ended.pid, ended.last_exit) == (2.8, 2, None, 0)
    assert len(started.heard) == 2
    asked(started.handle, Capture.resume)
    started.wait("a second replay", lambda s: s.state == "stopped" and s.utterances == 4)


def test_another_file_goes_through_ffmpeg(
    capture: Callable[..., Started], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    write_wav(tmp_path / "cd.wav", rate=44_100)
    started = capture(f"file:{tmp_path / 'cd.wav'}", CaptureSettings(attempts=1))
    failed = started.wait("failed", lambda s: s.state == "failed")
    assert failed.last_stderr == "FileNotFoundError: ffmpeg: not found on PATH or not executable"


def test_the_status_is_published_on_each_change_and_kept_up_to_date(
    capture: Callable[..., Started], clock: FakeClock
) -> None:
    cell: Published[CaptureStatus] = Published(not_started("system"))
    started = capture(program("--scene", SCENE, "--repeat", "50"), published=cell)
    wait_until(lambda: cell.value.state == "running", 10, "running published")
    captured = cell.value.captured_s

    def refreshed() -> bool:  # no ask meanwhile: only the refresh timer publishes
        clock.advance(REFRESH_S)
        return cell.value.captured_s > captured + 0.5

    wait_until(refreshed, 10, "the counters refreshed on the timer")
    asked(started.handle, Capture.pause)
    assert cell.value.state == "paused"


def test_swap_captures_the_alternative_and_back(capture: Callable[..., Started]) -> None:
    first, other = program("--scene", SCENE, "--repeat", "50"), program("--stderr", "alt")
    started = capture(first, alt=other)
    started.wait("running", lambda s: s.state == "running")
    swapped = asked(started.handle, Capture.swap)
    assert swapped.alt
    started.wait("the alternative's stderr", lambda s: s.last_stderr == "alt")
    back = asked(started.handle, Capture.swap)
    assert not back.alt
    started.wait("running again", lambda s: s.state == "running" and not s.alt)


def test_swap_without_an_alternative_changes_nothing(capture: Callable[..., Started]) -> None:
    started = capture(program("--scene", SCENE, "--repeat", "50"))
    started.wait("running", lambda s: s.state == "running")
    pid = started.status().pid
    assert not asked(started.handle, Capture.swap).alt
    assert started.status().pid == pid


def test_a_restarted_capture_counts_on_from_its_published_status(
    capture: Callable[..., Started],
) -> None:
    """The counters only grow within a process: a new incarnation of a source's capture
    starts from what the last one published."""
    cell: Published[CaptureStatus] = Published(not_started("system"))
    value = program("--scene", SCENE, "--repeat", "50")
    first = capture(value, published=cell)
    first.wait("an utterance", lambda s: s.utterances >= 1)
    assert first.handle.ref is not None
    first.handle.ref.stop(timeout=10)
    last = cell.value
    assert last.state == "stopped"
    again = capture(value, published=cell).status()
    assert again.utterances >= last.utterances >= 1
    assert again.captured_s >= last.captured_s > 0
    assert again.restarts >= last.restarts
    assert again.speech_share == pytest.approx(last.speech_share, abs=0.01)


def test_a_capture_program_gets_none_of_the_relays_secrets(
    capture: Callable[..., Started], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-secret")
    monkeypatch.setenv("STT_API_KEY", "stt-secret")
    monkeypatch.setenv("RELAY_TOKEN", "token-secret")
    monkeypatch.setenv("LANG", "C.UTF-8")
    shown = 'printf "llm=%s stt=%s token=%s lang=%s" "$OPENROUTER_API_KEY" "$STT_API_KEY"'
    shown += ' "$RELAY_TOKEN" "$LANG" >&2; exit 3'
    started = capture("command:sh -c " + shlex.quote(shown))
    status = started.wait("the program's line", lambda s: s.last_exit == 3)
    assert status.last_stderr == "llm= stt= token= lang=C.UTF-8"
