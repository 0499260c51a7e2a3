"""``python run.py`` as a user runs it: a real process, real signals, JSON logs."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import orjson
import pykka
import pytest

from actors.kernel.base import RelayActor
from actors.kernel.storage import DataDirInUse
from actors.tree import Relay, StartFailed, watching_start
from tests.conftest import LogSink, relay_settings, wait_until

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_healthy(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 15) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"relay exited early with {proc.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    pytest.fail("relay did not become healthy")


def relay_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a test relay: no key or token from outside, its own data."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENROUTER_API_KEY", "RELAY_TOKEN")}
    return {**env, "RELAY_DATA_DIR": str(data_dir), **extra}


def spawn_relay(port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``python run.py --port PORT`` from the repository, its output piped."""
    return subprocess.Popen(
        [sys.executable, "run.py", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.fixture
def relay_proc(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    port = free_port()
    proc = spawn_relay(port, relay_env(tmp_path / "data"))
    try:
        wait_healthy(port, proc)
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_relay_serves_and_exits_cleanly_on_a_signal(
    relay_proc: tuple[subprocess.Popen[bytes], int], sig: signal.Signals
) -> None:
    proc, port = relay_proc
    answer = httpx.post(f"http://127.0.0.1:{port}/feed", json={"text": "hi"}, timeout=5)
    assert answer.json() == {"ok": True, "id": 1}

    proc.send_signal(sig)
    out, err = proc.communicate(timeout=15)

    assert proc.returncode == 0, err.decode()
    lines = [orjson.loads(line) for line in out.splitlines() if line.strip()]
    events = [line["event"] for line in lines]
    assert "relay.started" in events and "relay.stopped" in events
    assert all("actor" in line and "timestamp" in line and "level" in line for line in lines)
    off = next(line for line in lines if line["event"] == "agent.off")
    assert "OPENROUTER_API_KEY" in off["reason"]


def run_relay_once(args: list[str], env: dict[str, str], timeout_s: float = 30) -> tuple[int, str]:
    """``python run.py ARGS`` to its end (killed after ``timeout_s``): exit code and output."""
    done = subprocess.run(
        [sys.executable, "run.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=timeout_s,
        check=False,
    )
    return done.returncode, (done.stdout + done.stderr).decode()


def error_lines(output: str) -> list[str]:
    """The lines of a relay's output at level error or above, JSON or console."""
    found = []
    for line in output.splitlines():
        if line.startswith("{"):
            if orjson.loads(line).get("level") in ("error", "critical"):
                found.append(line)
        elif "[error" in line or "[critical" in line:
            found.append(line)
    return found


@pytest.mark.parametrize("fmt", ["json", "console"])
def test_a_port_in_use_is_one_line_and_exit_code_1(tmp_path: Path, fmt: str) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, output = run_relay_once(
            ["--port", str(port), "--log-format", fmt], relay_env(tmp_path / "data")
        )
    assert code == 1, output
    assert "Traceback" not in output
    (line,) = output.splitlines()  # nothing started, so nothing else was said
    assert error_lines(output) == [line]
    assert "relay.start_failed" in line
    assert f"port {port} on 127.0.0.1 is in use" in line


def test_a_second_relay_on_the_same_data_directory_exits_1_naming_the_holder(
    relay_proc: tuple[subprocess.Popen[bytes], int], tmp_path: Path
) -> None:
    first, first_port = relay_proc
    data = (tmp_path / "data").resolve()
    code, output = run_relay_once(
        ["--data-dir", str(data), "--port", str(free_port())], relay_env(tmp_path / "other")
    )
    assert code == 1, output
    assert "Traceback" not in output
    (line,) = error_lines(output)
    assert "relay.start_failed" in line
    assert f"data directory {data} is in use by another relay (pid {first.pid})" in line
    answer = httpx.post(f"http://127.0.0.1:{first_port}/feed", json={"text": "hi"}, timeout=5)
    assert answer.json() == {"ok": True, "id": 1}


def test_after_a_kill_9_a_new_relay_starts_on_the_same_data_directory(tmp_path: Path) -> None:
    env = relay_env(tmp_path / "data")
    port = free_port()
    first = spawn_relay(port, env)
    try:
        wait_healthy(port, first)
        httpx.post(f"http://127.0.0.1:{port}/feed", json={"text": "a"}, timeout=5)
        first.kill()  # SIGKILL: no clean-up runs; the kernel drops the lock with the process
        first.communicate(timeout=10)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate(timeout=10)
    port = free_port()
    second = spawn_relay(port, env)
    try:
        wait_healthy(port, second)
        assert (tmp_path / "data" / "relay.lock").read_text().strip() == str(second.pid)
        answer = httpx.post(f"http://127.0.0.1:{port}/feed", json={"text": "b"}, timeout=5)
        assert answer.json() == {"ok": True, "id": 2}
    finally:
        if second.poll() is None:
            second.kill()
        second.communicate(timeout=10)


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
    assert first.handles["feed"].proxy().append("kept", "normal").get(timeout=5).id == 1
    assert first.stop()
    again = make_relay(settings)
    assert again.storage.epoch == first.storage.epoch
    assert again.handles["feed"].proxy().append("next", "normal").get(timeout=5).id == 2


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


def test_a_signal_delivered_twice_at_once_is_one_clean_stop(
    relay_proc: tuple[subprocess.Popen[bytes], int],
) -> None:
    proc, _port = relay_proc
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGTERM)
    out, _err = proc.communicate(timeout=15)
    assert proc.returncode == 0
    assert b"relay.forced_exit" not in out


def test_a_hung_llm_request_does_not_hold_up_shutdown(tmp_path: Path) -> None:
    from transport.demo.fake_llm import FakeLLM  # noqa: PLC0415

    with FakeLLM(mode="hang") as llm:
        port = free_port()
        env = relay_env(
            tmp_path,
            OPENROUTER_API_KEY="k",
            AGENT_BASE_URL=llm.base_url,
            AGENT_INTERVAL_MS="100",
            AGENT_TIMEOUT_MS="60000",
        )
        proc = spawn_relay(port, env)
        try:
            wait_healthy(port, proc)
            httpx.post(
                f"http://127.0.0.1:{port}/feed", json={"text": "[PERIODIC]\n[x openrouter] hi"}
            )
            deadline = time.monotonic() + 10
            while llm.calls == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert llm.calls == 1
            proc.send_signal(signal.SIGTERM)
            # Well under the 60 s LLM timeout: the stuck caller is abandoned, not awaited.
            proc.communicate(timeout=8)
            assert proc.returncode == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)


def restarted(handle: Any, count: int) -> bool:
    return bool(handle.restarts == count and handle.alive)


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


def test_the_relay_does_not_load_httpxs_command_line_client() -> None:
    # pytest itself brings pygments, so this environment has what httpx's CLI would import
    code = "import run, sys; print(sorted({'click', 'pygments'} & set(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "[]"
