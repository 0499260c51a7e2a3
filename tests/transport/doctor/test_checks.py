"""The doctor's verdicts against the fake LLM over loopback (each probe a real request), and
its checks of this machine."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from actors.agent.core.verdicts import chat_verdict
from actors.common.check import Check, exit_code
from config.agent.settings import AgentSettings
from config.audio.settings import AudioConfig
from config.settings import Settings
from tests.support.harness import free_port
from transport.agent.doctor import pixel, probe_chat
from transport.agent.fake_llm import FakeLLM
from transport.audio.doctor import source_check, speech_check
from transport.demo.fake_stt import FakeStt
from transport.doctor.local import data_dir_check
from transport.mcp.feature import mcp_check


def agent(fake: FakeLLM, **fields: Any) -> AgentSettings:
    return replace(AgentSettings(api_key="k", base_url=fake.base_url, timeout_ms=5_000), **fields)


def llm_check(config: AgentSettings) -> Check:
    return chat_verdict("llm", probe_chat(config, config.model), config)


def test_a_refused_json_schema_is_a_warning_saying_what_auto_does(fake_llm: FakeLLM) -> None:
    fake_llm.mode = "refuse_schema_400"
    check = llm_check(agent(fake_llm))
    assert check.verdict == "warn"
    assert "at response format json_object, after the server refused json_schema" in check.found
    assert "AGENT_RESPONSE_FORMAT=auto steps down by itself" in check.remedy
    assert "AGENT_RESPONSE_FORMAT=json_object" in check.remedy


def test_a_refused_named_level_fails_naming_agent_response_format(fake_llm: FakeLLM) -> None:
    fake_llm.mode = "refuse_schema_400"
    check = llm_check(agent(fake_llm, response_format="json_schema"))
    assert check.verdict == "FAIL"
    assert "AGENT_RESPONSE_FORMAT=auto" in check.remedy


@pytest.mark.parametrize("mode", ["no_model_404", "bad_model_400"])
def test_an_unknown_model_fails_naming_agent_model(fake_llm: FakeLLM, mode: str) -> None:
    fake_llm.mode = mode
    check = llm_check(agent(fake_llm))
    assert check.verdict == "FAIL"
    assert check.remedy.startswith("check AGENT_MODEL ")


def test_a_timeout_names_agent_timeout_ms(fake_llm: FakeLLM) -> None:
    fake_llm.mode = "hang"
    check = llm_check(agent(fake_llm, timeout_ms=200))
    assert check.verdict == "FAIL"
    assert "AGENT_TIMEOUT_MS" in check.remedy
    assert "AGENT_BASE_URL" in check.remedy


def test_a_vision_model_without_vision_fails_naming_agent_vision_model(
    fake_llm: FakeLLM,
) -> None:
    fake_llm.mode = "no_vision"
    config = agent(fake_llm)
    probe = probe_chat(config, config.vision_model, (pixel(),))
    check = chat_verdict("vision", probe, config, images=True)
    assert check.verdict == "FAIL"
    assert "AGENT_VISION_MODEL" in check.remedy
    assert "AGENT_VISION_ENABLED" in check.remedy
    assert fake_llm.requests[0].images[0].startswith("data:image/png;base64,")


def test_speech_sends_a_second_of_silence_and_names_stt_settings(fake_stt: FakeStt) -> None:
    audio = AudioConfig(stt_api="openai", stt_base_url=fake_stt.base_url, stt_api_key="k")
    assert speech_check(Settings(audio=audio)).verdict == "ok"
    assert fake_stt.last.audio_ms == 1_000
    fake_stt.mode = "401"
    failed = speech_check(Settings(audio=audio))
    assert failed.verdict == "FAIL"
    assert failed.remedy.startswith("check STT_API_KEY ")
    closed = replace(audio, stt_base_url=f"http://127.0.0.1:{free_port()}/v1")
    assert "STT_BASE_URL" in speech_check(Settings(audio=closed)).remedy
    assert speech_check(Settings()).verdict == "skip"


def test_a_source_program_not_on_path_fails_and_one_on_path_is_ok() -> None:
    assert source_check("MIC_SOURCE", "command:no-such-program-4711 -x").verdict == "FAIL"
    assert source_check("MIC_SOURCE", "command:cat").verdict == "ok"


def test_the_mcp_extra_is_skipped_when_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    found = importlib.util.find_spec("mcp") is not None
    assert mcp_check().verdict == ("ok" if found else "skip")
    monkeypatch.setattr(importlib.util, "find_spec", lambda _name: None)
    missing = mcp_check()
    assert missing.verdict == "skip"
    assert missing.remedy == "pip install 'sinain-relay[mcp]'"
    assert exit_code([missing]) == 0


def test_a_data_directory_open_to_others_is_a_warning_with_the_chmod(tmp_path: Path) -> None:
    directory = tmp_path / "data"
    directory.mkdir(mode=0o700)
    os.chmod(directory, 0o755)
    check = data_dir_check(Settings(data_dir=str(directory)))
    assert (check.verdict, check.remedy) == ("warn", f"chmod 700 {directory}")
    os.chmod(directory, 0o700)
    assert data_dir_check(Settings(data_dir=str(directory))).verdict == "ok"
    assert data_dir_check(Settings(data_dir=str(directory / "new"))).verdict == "ok"
    assert data_dir_check(Settings(data_dir=":memory:")).verdict == "skip"
