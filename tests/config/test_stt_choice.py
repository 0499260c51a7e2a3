"""What the command line makes of the audio settings given (:mod:`config.audio.stt_choice`):
this machine's recogniser when no speech service is named, the model for the language, and
the LLM key for a speech service of the LLM's origin only."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.agent import local_llm
from config.audio import stt_choice
from config.audio.stt_choice import primary_language
from config.command_line import load_settings
from config.common.errors import ConfigError


@pytest.fixture
def no_local_stt(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine without the local-stt and local-llm extras."""
    monkeypatch.setattr(stt_choice, "local_stt_installed", lambda: False)
    monkeypatch.setattr(local_llm, "local_llm_installed", lambda: False)


@pytest.mark.usefixtures("no_local_stt")
def test_the_speech_key_is_its_own_or_the_llm_key() -> None:
    env = {"OPENROUTER_API_KEY": "llm-key"}
    assert load_settings([], env, isatty=False).audio.stt_api_key == "llm-key"
    env["STT_API_KEY"] = "stt-key"
    assert load_settings([], env, isatty=False).audio.stt_api_key == "stt-key"
    assert load_settings([], {}, isatty=False).audio.stt_api_key == ""


def test_with_the_extra_and_no_speech_service_named_speech_is_recognised_here(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(stt_choice, "local_stt_installed", lambda: True)
    audio = load_settings([], {"OPENROUTER_API_KEY": "llm-key"}, isatty=False).audio
    assert (audio.stt_api, audio.stt_model, audio.stt_api_key) == ("local", "tiny.en", "")
    assert audio.can_transcribe
    named = load_settings([], {"STT_API_KEY": "k"}, isatty=False).audio
    assert named.stt_api == "chat" and named.stt_model == "google/gemini-2.5-flash"
    named_model = {"STT_API": "local", "STT_MODEL": str(tmp_path)}
    chosen = load_settings([], named_model, isatty=False).audio
    assert (chosen.stt_api, chosen.stt_model) == ("local", str(tmp_path))
    monkeypatch.setattr(stt_choice, "local_stt_installed", lambda: False)
    assert load_settings([], {}, isatty=False).audio.stt_api == "chat"


def test_the_local_model_fits_the_language_spoken() -> None:
    def local(**env: str) -> tuple[str, str]:
        audio = load_settings([], {"STT_API": "local", **env}, isatty=False).audio
        return audio.stt_model, audio.language

    assert local() == ("tiny.en", "en")
    assert local(AUDIO_LANGUAGE="de") == ("tiny", "de")  # tiny.en hears English only
    assert local(AUDIO_LANGUAGE="de", STT_MODEL="small") == ("small", "de")
    with pytest.raises(ConfigError, match=r"STT_MODEL=base\.en .* English only.*AUDIO_LANGUAGE"):
        local(AUDIO_LANGUAGE="fr", STT_MODEL="base.en")
    assert local(STT_MODEL="base.en", AUDIO_LANGUAGE="en") == ("base.en", "en")
    assert local(AUDIO_LANGUAGE="en_US") == ("tiny.en", "en_US")
    assert [primary_language(t) for t in ("en", "en-GB", " de_AT ", "PT-br", "")] == [
        "en",
        "en",
        "de",
        "pt",
        "",
    ]  # what the model is told


def test_a_local_model_named_by_a_path_must_be_a_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def model(name: str) -> str:
        return load_settings(
            [], {"STT_API": "local", "STT_MODEL": name}, isatty=False
        ).audio.stt_model

    assert model(str(tmp_path)) == str(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "whisper").mkdir()
    assert model("~/whisper") == str(tmp_path / "whisper")  # the worker gets it expanded
    for missing in (str(tmp_path / "nowhere"), "./nowhere", "~/nowhere"):
        with pytest.raises(ConfigError, match=r"STT_MODEL=.*nowhere is no directory"):
            model(missing)
    assert model("Systran/faster-whisper-tiny.en") == "Systran/faster-whisper-tiny.en"


@pytest.mark.parametrize(
    ("llm", "stt"),
    [
        ("", "https://api.groq.com/openai/v1"),
        ("", "http://openrouter.ai/api/v1"),
        ("", "https://openrouter.ai:8443/api/v1"),
        ("", "https://openrouter.ai.evil.example/api/v1"),
        ("", "https://evil.example/?https://openrouter.ai"),
        ("", "https://openrouter.ai@evil.example/api/v1"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8001/v1"),
        ("http://127.0.0.1:8000/v1", "http://localhost:8000/v1"),
        ("http://127.0.0.1:8000/v1", "not a url"),
    ],
)
def test_the_llm_key_goes_to_no_speech_service_of_another_origin(llm: str, stt: str) -> None:
    env = {"OPENROUTER_API_KEY": "llm-key", "STT_BASE_URL": stt}
    if llm:
        env["AGENT_BASE_URL"] = llm
    settings = load_settings([], env, isatty=False)
    assert settings.agent.api_key == "llm-key"
    assert settings.audio.stt_api_key == ""
    env["STT_API_KEY"] = "stt-key"
    assert load_settings([], env, isatty=False).audio.stt_api_key == "stt-key"


@pytest.mark.parametrize(
    ("llm", "stt"),
    [
        ("", "https://openrouter.ai/api/v1"),
        ("", "HTTPS://OpenRouter.AI:443/api/v1/audio"),
        ("https://openrouter.ai/api/v1", "https://openrouter.ai/other"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/whisper/v1"),
        ("http://Example.com/v1", "http://example.com:80/v1"),
        ("http://[::1]:8000/v1", "http://[0:0::1]:8000/v1"),
    ],
)
def test_the_llm_key_goes_to_a_speech_service_of_the_llms_origin(llm: str, stt: str) -> None:
    env = {"OPENROUTER_API_KEY": "llm-key", "STT_BASE_URL": stt}
    if llm:
        env["AGENT_BASE_URL"] = llm
    assert load_settings([], env, isatty=False).audio.stt_api_key == "llm-key"
