"""``AGENT_API`` and ``AGENT_MODEL`` for the agent's own model: the default where it can serve,
and a model named that this machine cannot run refused at start."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.agent.local_llm import DEFAULT_LOCAL_MODEL, LOCAL_TIMEOUT_MS, local_llm_installed
from config.command_line import load_settings
from config.common.errors import ConfigError
from config.settings import Settings

pytestmark = pytest.mark.skipif(not local_llm_installed(), reason="the test extra installs it")


def settings(**environ: str) -> Settings:
    return load_settings([], environ, isatty=False)


def test_with_no_key_and_no_server_the_agent_thinks_on_this_machine() -> None:
    agent = settings().agent
    assert (agent.api, agent.model, agent.timeout_ms) == ("local", DEFAULT_LOCAL_MODEL, 60_000)
    assert agent.timeout_ms == LOCAL_TIMEOUT_MS
    assert agent.active
    assert not agent.sends_images


@pytest.mark.parametrize(
    "named",
    [
        {"OPENROUTER_API_KEY": "sk-test"},
        {"AGENT_BASE_URL": "http://127.0.0.1:11434/v1"},
        {"AGENT_API": "openai"},
    ],
)
def test_a_key_a_server_or_the_api_named_keeps_the_server(named: dict[str, str]) -> None:
    assert settings(**named).agent.api == "openai"


def test_a_servers_model_with_no_key_keeps_the_agent_off_rather_than_stop_the_start() -> None:
    agent = settings(AGENT_MODEL="openai/gpt-4o-mini").agent
    assert (agent.api, agent.active) == ("openai", False)


def test_a_server_on_this_machine_needs_no_key() -> None:
    agent = settings(AGENT_BASE_URL="http://localhost:11434/v1", AGENT_MODEL="llama3.2").agent
    assert (agent.api_key, agent.active) == ("", True)
    assert not settings(AGENT_BASE_URL="https://example.com/v1").agent.active


def test_a_gguf_file_or_its_directory_is_the_model(tmp_path: Path) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    assert settings(AGENT_MODEL=str(model)).agent.model == str(model)
    assert settings(AGENT_MODEL=str(tmp_path)).agent.model == str(model)


@pytest.mark.parametrize(
    ("model", "said"),
    [
        ("./nowhere.gguf", "is no .gguf file"),
        ("google/gemini-2.5-flash-lite", "is no model to run on this machine"),
    ],
)
def test_a_model_this_machine_cannot_run_stops_the_start(model: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        settings(AGENT_API="local", AGENT_MODEL=model)


def test_a_directory_of_several_models_asks_for_one(tmp_path: Path) -> None:
    for name in ("a.gguf", "b.gguf"):
        (tmp_path / name).write_bytes(b"GGUF")
    with pytest.raises(ConfigError, match=r"holding a\.gguf, b\.gguf: name one \.gguf file"):
        settings(AGENT_MODEL=str(tmp_path))


def test_an_unknown_api_is_refused() -> None:
    with pytest.raises(ConfigError, match="AGENT_API must be one of openai, local"):
        settings(AGENT_API="ollama")
