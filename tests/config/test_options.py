"""The table of options: one default per setting, flags that need no value, ``--version``."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from actors.audio import stt_choice
from actors.audio.stt_choice import primary_language
from config import command_line
from config.command_line import build_parser, load_settings
from config.errors import ConfigError
from config.options import OPTIONS


def test_every_option_names_a_field_and_an_environment_variable_of_its_own() -> None:
    envs = [o.env for o in OPTIONS]
    assert len(envs) == len(set(envs))
    for option in OPTIONS:
        assert option.attr in {f.name for f in fields(option.owner)}, option


@pytest.fixture
def no_local_stt(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine without the local-stt and local-llm extras: the defaults are the fields'."""
    monkeypatch.setattr(stt_choice, "local_stt_installed", lambda: False)
    monkeypatch.setattr(command_line, "local_llm_installed", lambda: False)


@pytest.mark.usefixtures("no_local_stt")
def test_the_defaults_are_the_fields_own() -> None:
    settings = load_settings([], {}, isatty=False)
    for option in OPTIONS:
        assert option.value_in(settings) == option.default, option.name


def test_help_states_each_default_once_from_the_table() -> None:
    text = " ".join(build_parser().format_help().split())
    for option in OPTIONS:
        if option.flag is None:
            assert f"[{option.env}]" not in text
            continue
        assert f"(default {option.default_shown()}) [{option.env}]" in text, option.name


def test_secrets_have_no_flag() -> None:
    secret = {o.env for o in OPTIONS if o.secret}
    assert secret == {"RELAY_TOKEN", "OPENROUTER_API_KEY", "STT_API_KEY"}
    settings = load_settings([], {"RELAY_TOKEN": "t", "OPENROUTER_API_KEY": "k"}, isatty=False)
    assert (settings.token, settings.agent.api_key) == ("t", "k")


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


@pytest.mark.parametrize("flag", ["--faults", "--redact", "--agent-enabled", "--log-verbose"])
def test_a_boolean_flag_alone_means_true(flag: str) -> None:
    settings = load_settings([flag], {"RELAY_REDACT": "off", "AGENT_ENABLED": "0"}, isatty=False)
    option = next(o for o in OPTIONS if o.flag == flag)
    assert option.value_in(settings) is True


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("sinain-relay ")


def test_the_configuration_document_states_every_option_as_the_table_does() -> None:
    """docs/configuration.md lists each option once, with its flag and its default."""
    doc = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
    rows: dict[str, tuple[str, str]] = {}
    for line in doc.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0].startswith("`") and cells[0].endswith("`"):
            env = cells[0].strip("`")
            assert env not in rows, f"{env} listed twice"
            rows[env] = (cells[1].strip("`"), cells[2].replace("`", ""))
    assert set(rows) == {o.env for o in OPTIONS}
    for option in OPTIONS:
        assert rows[option.env] == (option.flag or "", option.default_shown()), option.env
