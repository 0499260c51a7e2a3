"""``python run.py`` as a user runs it: a real process, real signals, JSON logs."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

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


def test_a_port_in_use_stops_start_up_with_exit_code_1(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "run.py", "--port", str(port)],
            cwd=ROOT,
            env=relay_env(tmp_path),
            capture_output=True,
            timeout=30,
            check=False,
        )
    assert proc.returncode == 1
    events = [orjson.loads(line)["event"] for line in proc.stdout.splitlines() if line.strip()]
    assert "relay.start_failed" in events


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
    from transport.fake_llm import FakeLLM  # noqa: PLC0415

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
    from actors.base import ChildExited  # noqa: PLC0415
    from tests.conftest import wait_until  # noqa: PLC0415

    escalations: list[ChildExited] = []
    relay = make_relay(on_escalate=escalations.append)
    feed = relay.handles["feed"]
    for n in range(1, 11):  # the root allows 10 restarts in 30 s
        feed.defer("inject_fault", "crash")
        wait_until(partial(restarted, feed, n), what=f"restart {n}")
    assert escalations == []

    feed.defer("inject_fault", "crash")

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
