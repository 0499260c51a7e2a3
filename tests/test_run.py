"""``python run.py`` as a user runs it: a real process, real signals, JSON logs."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

import run
from config.env_file import write_private
from tests.support import harness
from tests.support.harness import ROOT, free_port
from tests.support.observe import wait_until
from tests.support.run_relay import relay_env, spawn_relay, stopped_once_healthy, wait_healthy
from transport.openapi import openapi_json


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


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["json", "console"])
def test_a_port_in_use_is_one_line_naming_the_remedy_and_exit_code_1(
    tmp_path: Path, fmt: str
) -> None:
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
    assert "pass --port (RELAY_PORT) with a free port" in line
    assert "stop the other relay" in line


@pytest.mark.slow
def test_a_second_relay_on_the_same_data_directory_exits_1_naming_the_holder_and_the_remedy(
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
    assert "pass --data-dir (RELAY_DATA_DIR) with another directory" in line
    assert "stop the other relay" in line
    answer = httpx.post(f"http://127.0.0.1:{first_port}/feed", json={"text": "hi"}, timeout=5)
    assert answer.json() == {"ok": True, "id": 1}


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_signal_delivered_twice_at_once_is_one_clean_stop(
    relay_proc: tuple[subprocess.Popen[bytes], int],
) -> None:
    proc, _port = relay_proc
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGTERM)
    out, _err = proc.communicate(timeout=15)
    assert proc.returncode == 0
    assert b"relay.forced_exit" not in out


@pytest.mark.slow
def test_a_hung_llm_request_does_not_hold_up_shutdown(tmp_path: Path) -> None:
    from transport.agent.fake_llm import FakeLLM  # noqa: PLC0415

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
            wait_until(lambda: llm.calls, 10, "the LLM call")
            assert llm.calls == 1
            proc.send_signal(signal.SIGTERM)
            # Well under the 60 s LLM timeout: the stuck caller is abandoned, not awaited.
            proc.communicate(timeout=8)
            assert proc.returncode == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)


@pytest.mark.slow
def test_the_relay_does_not_load_httpxs_command_line_client() -> None:
    # this environment has what httpx's CLI would import (click comes with import-linter);
    # pygments is no sign here, since structlog loads it through rich, which import-linter
    # brings too: the CLI module itself stays blocked, and click unloaded
    code = (
        "import run, sys; print(sorted({'click'} & set(sys.modules)),"
        " sys.modules.get('httpx._main', 'absent'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "[] None"


def dependencies() -> set[str]:
    """The modules of the dependencies ``pyproject.toml`` lists (``prometheus-client`` is
    imported as ``prometheus_client``)."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        listed = tomllib.load(f)["project"]["dependencies"]
    return {re.split(r"[<>=;\[ ]", entry, maxsplit=1)[0].replace("-", "_") for entry in listed}


def assert_one_line_naming(done: subprocess.CompletedProcess[str], missing: str) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()  # no traceback
    assert f"the relay's dependency {missing!r} is not installed" in line
    assert f"python3 -m pip install -e . (in {ROOT})" in line


@pytest.mark.parametrize("args", [["--demo"], []], ids=["demo", "plain"])
def test_without_its_dependencies_the_relay_says_what_to_install_in_one_line(
    args: list[str],
) -> None:
    # -S: no site-packages at all, as in a Python the relay was never installed into
    done = subprocess.run(
        [sys.executable, "-S", "run.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    named = re.search(r"dependency '([\w.]+)'", done.stderr)
    assert named is not None, done.stderr
    assert named.group(1) in dependencies()
    assert_one_line_naming(done, named.group(1))


BLOCK = """
import importlib.abc, sys

class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] == {module!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)

sys.meta_path.insert(0, Missing())
sys.argv = ["run.py", "--demo"]
import run
from config.env_file import write_private
sys.exit(run.main())
"""


@pytest.mark.slow
@pytest.mark.parametrize("module", ["aiohttp", "structlog"])
def test_the_one_line_names_the_dependency_that_is_missing(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCK.format(module=module)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert_one_line_naming(done, module)


def test_openapi_prints_the_document_the_relay_serves(capsys: pytest.CaptureFixture[str]) -> None:
    assert run.main(["openapi"]) == 0
    printed = capsys.readouterr()
    assert orjson.loads(printed.out) == orjson.loads(openapi_json())
    assert printed.err == ""


@pytest.mark.slow
def test_with_a_log_file_every_line_goes_to_the_file_and_none_to_stdout(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "relay.log"
    port = free_port()
    proc = spawn_relay(port, relay_env(tmp_path / "data"), "--log-file", str(log))
    out, err = stopped_once_healthy(port, proc)
    assert proc.returncode == 0, err.decode()
    assert out == b""
    events = [orjson.loads(line)["event"] for line in log.read_text().splitlines()]
    assert "relay.started" in events and events[-1] == "relay.stopped"
    assert log.stat().st_mode & 0o777 == 0o600


@pytest.mark.slow
@pytest.mark.parametrize(
    "flags_first", [True, False], ids=["flags-then-command", "command-then-flags"]
)
def test_flags_go_before_or_after_the_command(tmp_path: Path, flags_first: bool) -> None:
    from_file = tmp_path / "from-file"
    key_file = tmp_path / "env"
    write_private(key_file, f"RELAY_DATA_DIR={from_file}\nRELAY_PORT={free_port()}\n")
    flags = ["--env-file", str(key_file)]
    _, output = run_relay_once(
        [*flags, "doctor"] if flags_first else ["doctor", *flags], harness.relay_env()
    )
    assert f"data directory: {from_file} " in output, output
    assert "unrecognized arguments" not in output


@pytest.mark.slow
def test_the_help_names_the_commands_first() -> None:
    code, output = run_relay_once(["--help"], harness.relay_env(COLUMNS="100"))
    assert code == 0
    top = "\n".join(output.splitlines()[:12])
    for name in ("doctor", "service", "mcp", "openapi", "data-dir"):
        assert re.search(rf"^  {name}\b", top, re.MULTILINE), (name, top)
