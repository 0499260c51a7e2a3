"""The table of options: one default per setting, flags that need no value, ``--version``."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from config.agent import local_llm
from config.audio import stt_choice
from config.command_line import build_parser, load_settings
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
    monkeypatch.setattr(local_llm, "local_llm_installed", lambda: False)


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
