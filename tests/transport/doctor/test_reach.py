"""A started relay's checks of its services: a connection opened and closed, no request sent."""

from __future__ import annotations

import pytest

from config.agent.settings import AgentSettings
from config.audio.settings import AudioConfig
from tests.support.harness import free_port
from transport.agent.doctor import llm_server_check
from transport.agent.fake_llm import FakeLLM
from transport.audio.doctor import speech_server_check
from transport.host.reach import unreachable


def test_a_listening_server_is_ok_and_receives_no_request(fake_llm: FakeLLM) -> None:
    check = llm_server_check(AgentSettings(api_key="k", base_url=fake_llm.base_url))
    assert check.verdict == "ok"
    assert check.found.startswith(f"{fake_llm.base_url} accepts connections")
    assert fake_llm.received == []


def test_a_closed_port_fails_naming_agent_base_url() -> None:
    closed = f"http://127.0.0.1:{free_port()}/v1"
    check = llm_server_check(AgentSettings(api_key="k", base_url=closed))
    assert check.line() == (
        f"FAIL llm server: {closed} is unreachable (connection refused): "
        "check AGENT_BASE_URL (no server answers there)"
    )


def test_a_host_that_does_not_resolve_says_so() -> None:
    assert unreachable("https://nowhere.invalid/v1", 2) == "the host name does not resolve"


def test_a_proxy_is_what_must_accept_the_connection(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("https_proxy", f"http://127.0.0.1:{fake_llm.port}")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    assert unreachable("https://nowhere.invalid/v1", 2) is None


def test_the_speech_server_is_checked_only_when_speech_goes_to_one(fake_llm: FakeLLM) -> None:
    keyed = AudioConfig(stt_api="openai", stt_base_url=fake_llm.base_url, stt_api_key="k")
    check = speech_server_check(keyed)
    assert check is not None
    assert check.verdict == "ok"
    assert speech_server_check(AudioConfig(stt_api="local")) is None
    assert speech_server_check(AudioConfig()) is None  # no key: nothing is sent
    closed = AudioConfig(
        stt_api="openai", stt_base_url=f"http://127.0.0.1:{free_port()}/v1", stt_api_key="k"
    )
    failed = speech_server_check(closed)
    assert failed is not None
    assert failed.verdict == "FAIL"
    assert failed.remedy == "check STT_BASE_URL (no speech service answers there)"
    assert fake_llm.received == []
