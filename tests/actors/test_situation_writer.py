"""SITUATION.md on disk: the atomic write, and the writer in a whole relay with the fake LLM."""

from __future__ import annotations

import contextlib
import os
import resource
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from actors.agent.digest_store import DigestStore
from actors.agent.situation_writer import write_atomically
from actors.core.redaction.rules import marker
from actors.ingest.feed_buffer import FeedBuffer
from actors.ingest.sense_buffer import SenseBuffer
from actors.kernel.base import RelayActor
from actors.tree import Relay
from config.settings import Settings
from tests.support.actor_calls import asked, restarted, tick
from tests.support.observe import LogSink, wait_until
from tests.support.posts import sense
from tests.support.redaction_samples import SK
from tests.support.relay import client_for, relay_settings
from transport.agent.fake_llm import FakeLLM

# -- the atomic write ----------------------------------------------------------------------------


def test_a_write_replaces_the_file_whole_and_leaves_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "workspace" / "SITUATION.md"

    write_atomically(path, "# Situation\n\nfirst\n")
    write_atomically(path, "# Situation\n\nsecond\n")

    assert path.read_text(encoding="utf-8") == "# Situation\n\nsecond\n"
    assert [p.name for p in path.parent.iterdir()] == ["SITUATION.md"]
    assert path.stat().st_mode & 0o777 == 0o600  # what was on screen: the user's alone


@contextlib.contextmanager
def file_size_limit(size: int) -> Iterator[None]:
    """Writes that would grow a file beyond ``size`` bytes fail with ``EFBIG`` (as for root
    too, unlike permissions; Python ignores the ``SIGXFSZ`` that comes with them)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def test_a_write_that_fails_midway_keeps_the_old_file_and_removes_its_temporary(
    tmp_path: Path,
) -> None:
    path = tmp_path / "SITUATION.md"
    write_atomically(path, "old situation\n")

    with pytest.raises(OSError, match="too large"), file_size_limit(64):
        write_atomically(path, "new situation, longer than the limit allows\n" * 10)

    assert path.read_text(encoding="utf-8") == "old situation\n"
    assert [p.name for p in tmp_path.iterdir()] == ["SITUATION.md"]


def test_a_directory_at_the_path_fails_the_write_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "SITUATION.md"
    path.mkdir()
    (path / "kept").write_text("inside")

    with pytest.raises(IsADirectoryError):
        write_atomically(path, "# Situation\n")

    assert path.is_dir()
    assert (path / "kept").read_text() == "inside"
    assert [p.name for p in tmp_path.iterdir()] == ["SITUATION.md"]


# -- who else may replace the file ---------------------------------------------------------------


def test_a_situation_directory_others_can_write_is_warned_of_at_start(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, tmp_path: Path, logs: LogSink
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    os.chmod(workspace, 0o777)  # anyone may rename SITUATION.md away and put their own there

    make_relay(writing(fake_llm, workspace / "SITUATION.md"))

    (warning,) = logs.named("situation.file_replaceable_by_others")
    assert warning["level"] == "warning"
    assert warning["path"] == str(workspace / "SITUATION.md")
    assert warning["directory"] == str(workspace)
    assert warning["mode"] == "0777"
    assert warning["fix"] == f"chmod go-w {workspace}"


@pytest.mark.parametrize("mode", [0o1777, 0o755, 0o700])
def test_a_situation_directory_only_the_user_can_change_gives_no_warning(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, tmp_path: Path, logs: LogSink, mode: int
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    os.chmod(workspace, mode)  # with the sticky bit, only an entry's owner may replace it

    make_relay(writing(fake_llm, workspace / "SITUATION.md"))

    assert logs.named("situation.file")
    assert not logs.named("situation.file_replaceable_by_others")


# -- the writer in a relay -----------------------------------------------------------------------


def writing(fake_llm: FakeLLM, path: Path, **agent: Any) -> Settings:
    return replace(relay_settings(fake_llm, **agent), situation_file=str(path))


def show(relay: Relay, ocr: str, app: str = "code") -> None:
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr=ocr, app=app))


def written(path: Path, entry_id: int) -> str:
    """The file once it holds entry ``entry_id``."""
    header = f"> Tick #{entry_id} |"
    return str(
        wait_until(
            lambda: path.is_file() and header in (text := path.read_text()) and text,
            what=f"SITUATION.md with entry {entry_id}",
        )
    )


def test_the_file_is_written_after_a_tick_from_its_window_and_replaced_by_the_next(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, tmp_path: Path
) -> None:
    path = tmp_path / "workspace" / "SITUATION.md"
    relay = make_relay(writing(fake_llm, path))
    show(relay, f"OPENAI_API_KEY={SK}\nTraceback (most recent call last):", app="iterm2")
    show(relay, 'Traceback (most recent call last):\n  File "idle.py", line 3\nKeyError: 7')
    asked(relay.handles["feed"], FeedBuffer.append, "[📝] the paused video test fails", "normal")

    assert tick(relay, logs) == "ok"

    text = written(path, 1)
    assert text.startswith("# Situation\n\n> Auto-updated by sinain-relay at ")
    assert "> Tick #1 | Latency: " in text
    assert "| Model: google/gemini-2.5-flash-lite\n" in text
    assert f"## Digest\n\n{fake_llm.digest}\n" in text
    assert "## Active Application\n\nVS Code\n" in text
    assert "## App History\n\niTerm -> VS Code\n" in text
    assert "] the paused video test fails\n" in text
    trace = 'Traceback (most recent call last):\n  File "idle.py", line 3\nKeyError: 7'
    assert f"## Detected Errors\n\n```\n{trace}\n```\n" in text
    assert SK not in text
    assert marker("api-key") in text  # redacted at ingest, as everywhere else
    prompt = fake_llm.requests[0].body["messages"][0]["content"]
    assert marker("api-key") in prompt  # the same window the prompt was made from

    fake_llm.digest = "The user reads the failing test."
    show(relay, "def test_paused_video_is_not_idle():")
    assert tick(relay, logs) == "ok"

    text = written(path, 2)
    assert "## Digest\n\nThe user reads the failing test.\n" in text
    assert [p.name for p in path.parent.iterdir()] == ["SITUATION.md"]


def test_a_failed_tick_writes_nothing(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, tmp_path: Path
) -> None:
    path = tmp_path / "SITUATION.md"
    relay = make_relay(writing(fake_llm, path))
    fake_llm.mode = "http401"
    show(relay, "first")
    assert tick(relay, logs) == "failed"
    fake_llm.mode = "ok"
    show(relay, "second")
    assert tick(relay, logs) == "ok"
    before = written(path, 1)

    fake_llm.mode = "nonjson"
    show(relay, "third")
    assert tick(relay, logs) == "failed"
    asked(relay.handles["digest"], DigestStore.stats)  # what the failure told it is handled
    relay.handles["situation"].ask(RelayActor.ping).result(timeout=5)

    assert path.read_text() == before
    assert logs.named("situation.written") and len(logs.named("situation.written")) == 1


def test_a_write_failure_is_logged_and_counted_and_the_tick_still_succeeds(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, tmp_path: Path
) -> None:
    path = tmp_path / "SITUATION.md"
    path.mkdir()  # a directory where the file should be
    relay = make_relay(writing(fake_llm, path))
    show(relay, "def tick():")

    assert tick(relay, logs) == "ok"

    failures = wait_until(lambda: logs.named("situation.write_failed"), what="the failure")
    assert failures[0]["path"] == str(path)
    assert failures[0]["entry_id"] == 1
    with client_for(relay) as client:
        assert client.get("/agent/digest").json()["digest"]["id"] == 1
        health = wait_until(
            lambda: (h := client.get("/health").json())["agent"]["situationWriteFailures"] and h,
            what="the failure counted",
        )
        assert health["agent"]["situationWriteFailures"] == 1
        assert health["actors"]["situation"]["restarts"] == 0
        metrics = client.get("/metrics").text
    assert "relay_situation_write_failures_total 1.0" in metrics
    assert [p.name for p in tmp_path.iterdir()] == ["SITUATION.md"]
    assert path.is_dir()


def test_off_by_default_no_writer_and_no_file(
    relay: Relay,
    client: httpx.Client,
    logs: LogSink,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    show(relay, "def tick():")

    assert tick(relay, logs) == "ok"

    assert "situation" not in relay.handles
    health = client.get("/health").json()
    assert "situation" not in health["actors"]
    assert health["agent"]["situationWriteFailures"] == 0
    assert not list(tmp_path.rglob("SITUATION.md"))
    assert not logs.named("situation.written")


@pytest.mark.slow
def test_a_hung_writer_delays_no_tick_and_then_writes_only_the_newest(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, tmp_path: Path
) -> None:
    path = tmp_path / "SITUATION.md"
    relay = make_relay(writing(fake_llm, path))
    show(relay, "first")
    assert tick(relay, logs) == "ok"
    written(path, 1)

    relay.handles["situation"].tell(RelayActor.inject_fault, "hang", 1.5)
    started = time.monotonic()
    for n in (2, 3):
        show(relay, f"screen {n}")
        assert tick(relay, logs) == "ok"
    assert time.monotonic() - started < 1.2  # both ticks ended while the writer hung

    assert "> Tick #3 |" in written(path, 3)
    # The writer logs after the file is in place: wait for that line, then count.
    wait_until(lambda: logs.named("situation.written")[-1]["entry_id"] == 3, what="the log line")
    assert len(logs.named("situation.written")) == 2  # entry 2 was never written: 3 was newer


def test_a_crashed_writer_is_restarted_and_writes_the_next_tick(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, tmp_path: Path
) -> None:
    path = tmp_path / "SITUATION.md"
    relay = make_relay(writing(fake_llm, path))
    handle = relay.handles["situation"]
    handle.tell(RelayActor.inject_fault, "crash")
    wait_until(lambda: restarted(handle, 1), what="the writer's restart")

    show(relay, "after the crash")
    assert tick(relay, logs) == "ok"

    written(path, 1)
    assert relay.handles["ticker"].restarts == 0


def test_a_forget_after_a_restart_removes_a_file_that_may_quote_the_range(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, tmp_path: Path
) -> None:
    path = tmp_path / "SITUATION.md"
    relay = make_relay(writing(fake_llm, path))
    show(relay, "screenwordbeforerestart")
    assert tick(relay, logs) == "ok"
    text = written(path, 1)
    handle = relay.handles["situation"]
    handle.tell(RelayActor.inject_fault, "crash")  # the new incarnation did not write the file
    wait_until(lambda: restarted(handle, 1), what="the writer's restart")
    with client_for(relay) as client:
        before = client.post("/privacy/forget", json={"since": 0, "until": 1}).json()
        assert before["forgotten"]["situationLines"] == 0
        assert path.read_text() == text
        entry_ts = client.get("/agent/last").json()["result"]["ts"]
        span = {"since": entry_ts - 1000, "until": entry_ts - 1000}  # in its window only
        after = client.post("/privacy/forget", json=span).json()
    assert after["forgotten"]["situationLines"] == len(text.splitlines())
    assert not path.exists()
