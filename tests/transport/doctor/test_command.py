"""``python run.py doctor`` as a user runs it, against a closed port and the fake LLM; and the
same checks logged by a relay after it started."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import orjson
import pytest

from tests.support.harness import ROOT, free_port
from tests.support.observe import wait_until
from tests.support.posts import screen_event
from tests.support.redaction_samples import assert_nowhere
from tests.support.run_relay import relay_env, spawn_relay, wait_healthy
from transport.agent.fake_llm import FakeLLM
from transport.demo.fake_stt import FakeStt

pytestmark = pytest.mark.slow

TIMEOUT_S = 60


def run_doctor(env: dict[str, str], *args: str) -> tuple[int, list[str]]:
    """``python run.py doctor ARGS`` to its end: the exit code and the lines it printed."""
    done = subprocess.run(
        [sys.executable, "run.py", "doctor", "--port", str(free_port()), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    return done.returncode, done.stdout.splitlines()


def line_of(lines: list[str], check: str) -> str:
    return next(line for line in lines if line.split(":")[0].split(" ", 1)[1] == check)


def llm_env(tmp_path: Path, base_url: str) -> dict[str, str]:
    return relay_env(
        tmp_path / "data",
        AGENT_BASE_URL=base_url,
        OPENROUTER_API_KEY="doctor-key",
        AGENT_TIMEOUT_MS="5000",
        AGENT_VISION_ENABLED="false",
    )


def test_an_unreachable_llm_fails_naming_agent_base_url(tmp_path: Path) -> None:
    closed = f"http://127.0.0.1:{free_port()}/v1"
    code, lines = run_doctor(llm_env(tmp_path, closed))
    assert code == 1
    assert line_of(lines, "llm") == (
        f"FAIL llm: {closed} is unreachable (connection refused): "
        "check AGENT_BASE_URL (no server answers there)"
    )


def test_a_refused_key_fails_naming_openrouter_api_key(tmp_path: Path) -> None:
    with FakeLLM(mode="http401") as fake:
        code, lines = run_doctor(llm_env(tmp_path, fake.base_url))
    assert code == 1
    llm = line_of(lines, "llm")
    assert llm.startswith("FAIL llm: ")
    assert "HTTP 401" in llm
    assert llm.endswith("check OPENROUTER_API_KEY (the server refused the key, HTTP 401)")


def test_a_working_model_is_ok_and_the_doctor_exits_0(tmp_path: Path) -> None:
    with FakeLLM(mode="ok") as fake:
        code, lines = run_doctor(llm_env(tmp_path, fake.base_url))
        asked = fake.requests[0].body
    assert code == 0, "\n".join(lines)
    assert line_of(lines, "llm").startswith(
        f"ok llm: google/gemini-2.5-flash-lite at {fake.base_url}"
    )
    assert line_of(lines, "llm").endswith("(response format json_schema)")
    assert asked["response_format"]["type"] == "json_schema"  # what the relay sends first
    assert asked["max_tokens"] <= 64
    assert line_of(lines, "vision").startswith("skip vision: ")
    assert {line.split(" ")[0] for line in lines} <= {"ok", "skip", "warn"}


def test_a_missing_file_source_fails_naming_its_setting(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.wav"
    env = relay_env(tmp_path / "data", AUDIO_SOURCE=f"file:{missing}")
    code, lines = run_doctor(env)
    assert code == 1
    assert line_of(lines, "source AUDIO_SOURCE") == (
        f"FAIL source AUDIO_SOURCE: {missing} does not exist or is not a file: check AUDIO_SOURCE"
    )


def test_the_relay_logs_each_check_once_after_it_started_asking_nothing(tmp_path: Path) -> None:
    log = tmp_path / "relay.log"
    with FakeLLM(mode="http401") as fake:
        port = free_port()
        env = llm_env(tmp_path, fake.base_url) | {"STT_API": "local", "RELAY_LOG_FILE": str(log)}
        proc = spawn_relay(port, env)
        try:
            wait_healthy(port, proc)
            wait_until(lambda: '"check":"mcp"' in log.read_text(), 15, "the last check's line")
        finally:
            proc.terminate()
            proc.communicate(timeout=15)
    lines = [orjson.loads(line) for line in log.read_text().splitlines() if line.strip()]
    events = [line["event"] for line in lines]
    assert events.index("relay.started") < events.index("doctor.check")
    checks = {line["check"]: line for line in lines if line["event"] == "doctor.check"}
    assert "port" not in checks  # the relay holds it
    # the server is only connected to: its refusal of the key shows at the first call
    assert fake.received == []
    assert "llm" not in checks
    server = checks["llm server"]
    assert (server["level"], server["verdict"]) == ("info", "ok")
    # the local model is loaded by the transcriber, at the first utterance (nothing is
    # captured), not by the checks (the command loads it)
    speech = checks["speech"]
    assert (speech["verdict"], speech["level"]) == ("skip", "info")
    assert "loaded at the first utterance" in speech["found"]
    assert (checks["data directory"]["level"], checks["data directory"]["verdict"]) == (
        "info",
        "ok",
    )


def test_a_started_relay_shows_its_checks_in_health_naming_the_setting(tmp_path: Path) -> None:
    closed = f"http://127.0.0.1:{free_port()}/v1"
    port = free_port()
    proc = spawn_relay(port, llm_env(tmp_path, closed))
    try:
        wait_healthy(port, proc)

        def checks() -> dict[str, dict[str, str]]:
            health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).json()
            return {check["name"]: check for check in health["checks"]}

        wait_until(lambda: "llm server" in checks(), 15, "the checks in /health")
        server = checks()["llm server"]
    finally:
        proc.terminate()
        proc.communicate(timeout=15)
    assert server["verdict"] == "FAIL"
    assert closed in server["found"]
    assert "AGENT_BASE_URL" in server["remedy"]


DOCTOR_WITHOUT_MCP = """
import sys
sys.modules["mcp"] = None  # as if the extra were not installed
import run
sys.exit(run.main(["doctor", *sys.argv[1:]]))
"""


def test_without_the_mcp_extra_the_doctor_skips_it_and_exits_0(tmp_path: Path) -> None:
    """The extra is optional: its absence is said (with the install command), not warned."""
    done = subprocess.run(
        [sys.executable, "-c", DOCTOR_WITHOUT_MCP, "--port", str(free_port())],
        cwd=ROOT,
        env=relay_env(tmp_path / "data"),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    assert line_of(lines, "mcp").startswith("skip mcp: the mcp extra is not installed")
    assert "pip install 'sinain-relay[mcp]'" in line_of(lines, "mcp")
    assert not [line for line in lines if line.startswith("warn")]


PASSWORD, QUERY_TOKEN = "s3cret-in-the-url", "t0ken-in-the-url"
"""Credentials in the base URLs: shown nowhere (a local server's, no vendor's shape)."""


def with_credentials(base_url: str) -> str:
    """``http://user:PASSWORD@host:port/v1?token=QUERY_TOKEN`` of ``base_url``."""
    return base_url.replace("://", f"://user:{PASSWORD}@", 1) + f"?token={QUERY_TOKEN}"


def credentials_env(tmp_path: Path, llm: FakeLLM, stt: FakeStt) -> dict[str, str]:
    return llm_env(tmp_path, with_credentials(llm.base_url)) | {
        "STT_API": "openai",
        "STT_BASE_URL": with_credentials(stt.base_url),
        "STT_API_KEY": "doctor-stt-key",
    }


def test_the_doctor_shows_no_credential_of_a_base_url(tmp_path: Path) -> None:
    with FakeLLM(mode="ok") as llm, FakeStt() as stt:
        done = subprocess.run(
            [sys.executable, "run.py", "doctor", "--port", str(free_port())],
            cwd=ROOT,
            env=credentials_env(tmp_path, llm, stt),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    printed = done.stdout + done.stderr
    assert "llm: " in printed and "speech: " in printed, printed
    assert "127.0.0.1" in line_of(done.stdout.splitlines(), "speech")  # the host is shown
    for secret in (PASSWORD, QUERY_TOKEN):
        assert_nowhere(secret, printed)


def test_a_relay_logs_and_shows_no_credential_of_a_base_url(tmp_path: Path) -> None:
    log = tmp_path / "relay.log"
    with FakeLLM(mode="ok") as llm, FakeStt() as stt:
        port = free_port()
        env = credentials_env(tmp_path, llm, stt) | {"RELAY_LOG_FILE": str(log)}
        proc = spawn_relay(port, env)
        try:
            wait_healthy(port, proc)
            wait_until(lambda: '"check":"mcp"' in log.read_text(), 15, "the last check's line")
            sensed = httpx.post(
                f"http://127.0.0.1:{port}/sense", json=screen_event("def f(): pass"), timeout=5
            )
            sensed.raise_for_status()  # the first call's verdict names the URL too
            wait_until(lambda: '"check":"llm"' in log.read_text(), 15, "the first call's verdict")
            answers = [
                httpx.get(f"http://127.0.0.1:{port}{path}", timeout=5).text
                for path in ("/health", "/agent/config")
            ]
        finally:
            proc.terminate()
            out, err = proc.communicate(timeout=15)
    text = log.read_text()
    assert '"event":"agent.on"' in text and '"check":"speech server"' in text
    for secret in (PASSWORD, QUERY_TOKEN):
        assert_nowhere(secret, text, out.decode(), err.decode(), *answers)
