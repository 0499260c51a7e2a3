"""A started relay asks nothing of any model or speech service until a tick has news: its
start-up checks look at the settings and try a connection, and the verdict on the model comes
with the first real call, which is counted as every call is.

A stand-in LLM counts every request that reaches its origin (chat completions, transcriptions,
anything), so that a probe of any kind shows."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.support.harness import free_port
from tests.support.observe import wait_until
from tests.support.posts import screen_event
from tests.support.run_relay import relay_env, spawn_relay, wait_healthy
from transport.agent.fake_llm import FakeLLM

pytestmark = pytest.mark.slow

MAX_TOKENS = 777
"""``AGENT_MAX_TOKENS`` of the relays here: what a tick's call carries (a probe asked 64)."""


def keyed_env(tmp_path: Path, fake: FakeLLM, **extra: str) -> dict[str, str]:
    """A key, the default vision model, and a keyed speech service at the LLM's origin."""
    return relay_env(
        tmp_path / "data",
        AGENT_BASE_URL=fake.base_url,
        OPENROUTER_API_KEY="quiet-start-key",
        AGENT_MAX_TOKENS=str(MAX_TOKENS),
        AGENT_DEBOUNCE_MS="100",
        STT_API="openai",
        STT_BASE_URL=fake.base_url,
        RELAY_LOG_FILE=str(tmp_path / "relay.log"),
        **extra,
    )


def logged(log: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in log.read_text().splitlines() if line.strip()]


def checks_of(log: Path) -> list[dict[str, Any]]:
    return [line for line in logged(log) if line["event"] == "doctor.check"]


def checks_done(log: Path) -> int:
    """How many times the start-up checks ran to their last line."""
    return sum(line["check"] == "mcp" for line in checks_of(log))


def ran(log: Path, times: int) -> bool:
    return checks_done(log) == times


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.communicate(timeout=15)


def test_three_quiet_starts_send_no_request(tmp_path: Path) -> None:
    log = tmp_path / "relay.log"
    with FakeLLM(mode="ok") as fake:
        env = keyed_env(tmp_path, fake)
        for start in range(1, 4):
            port = free_port()
            proc = spawn_relay(port, env)
            try:
                wait_healthy(port, proc)
                done = f"the start-up checks of start {start}"
                wait_until(functools.partial(ran, log, start), 15, done)
            finally:
                stop(proc)
            assert fake.received == [], f"start {start}"
    checks = {line["check"]: line for line in checks_of(log)}
    assert "llm" not in checks  # no call, no verdict
    assert checks["llm server"]["verdict"] == "ok"
    assert fake.base_url in checks["llm server"]["found"]
    assert checks["speech server"]["verdict"] == "ok"


def test_the_first_request_is_a_ticks_call_and_every_request_is_counted(tmp_path: Path) -> None:
    log = tmp_path / "relay.log"
    with FakeLLM(mode="ok") as fake:
        port = free_port()
        proc = spawn_relay(port, keyed_env(tmp_path, fake))
        try:
            wait_healthy(port, proc)
            wait_until(lambda: checks_done(log) == 1, 15, "the checks")
            url = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=url, timeout=5) as client:
                client.post(
                    "/sense", json=screen_event("def quiet_start(): pass")
                ).raise_for_status()
                client.post(
                    "/feed", json={"text": "so the start sends nothing", "source": "audio"}
                ).raise_for_status()

                def calls() -> int:
                    return int(client.get("/health").json()["agent"]["totalCalls"])

                wait_until(lambda: calls() >= 1, 15, "the first tick's call")
                wait_until(
                    lambda: len(fake.received) == calls(), 5, "the stand-in's count and the relay's"
                )
                wait_until(
                    lambda: any(c.get("check") == "llm" for c in checks_of(log)), 5, "its verdict"
                )
        finally:
            stop(proc)
    assert fake.received[0] == "POST /v1/chat/completions"
    assert fake.requests[0].body["max_tokens"] == MAX_TOKENS
    verdict = next(c for c in checks_of(log) if c["check"] == "llm")
    assert (verdict["verdict"], verdict["level"]) == ("ok", "info")
    assert verdict["found"].startswith(f"google/gemini-2.5-flash-lite at {fake.base_url} answered")
