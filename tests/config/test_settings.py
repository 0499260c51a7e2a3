"""Settings from the environment and flags, and the runtime ``AgentSettings``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest

from actors.agent.core.config_update import AgentConfigUpdate
from actors.core.bodies import convert
from actors.core.errors import BadRequest
from config.agent.settings import DEFAULT_BASE_URL, DEFAULT_MODEL, AgentSettings
from config.command_line import load_settings
from config.common.errors import ConfigError
from config.settings import Settings
from run import settings_or_exit
from tests.support.redaction_samples import assert_nowhere
from transport.agent.answers import public_config

REPO = Path(__file__).resolve().parents[2]

ENV_VARS = (
    "AGENT_RESPONSE_FORMAT",
    "RELAY_HOST",
    "RELAY_PORT",
    "LOG_FORMAT",
    "LOG_LEVEL",
    "RELAY_ACTOR_TIMEOUT_MS",
    "AGENT_ENABLED",
    "AGENT_BASE_URL",
    "AGENT_MODEL",
    "AGENT_INTERVAL_MS",
    "AGENT_DEBOUNCE_MS",
    "AGENT_COOLDOWN_MS",
    "RELAY_MAX_STREAMS",
    "RELAY_ALLOW_INSECURE",
    "RELAY_CORS_ORIGINS",
    "RELAY_ALLOWED_HOSTS",
    "RELAY_REDACT",
    "RELAY_EXCLUDE_APPS",
    "RELAY_EXCLUDE_TITLES",
    "RELAY_PRICES",
    "RELAY_SITUATION_FILE",
    "AGENT_MAX_AGE_MS",
    "AGENT_MAX_TOKENS",
    "AGENT_TEMPERATURE",
    "AGENT_TIMEOUT_MS",
    "AGENT_PUSH_TO_FEED",
    "AGENT_LOG_VERBOSE",
    "OPENROUTER_API_KEY",
    "RELAY_TOKEN",
)


def load(argv=(), env=None, *, isatty=False) -> Settings:
    return load_settings(list(argv), env or {}, isatty=isatty)


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ENV_VARS}


# --- defaults ----------------------------------------------------------------------------------


def test_defaults_without_environment_or_flags():
    """The server's defaults; with the local-llm extra (the tests have it) and nothing named,
    the agent's own model is the default instead (tests/config/test_local_llm_settings.py)."""
    settings = load(env={"AGENT_API": "openai"})
    assert (settings.host, settings.port) == ("127.0.0.1", 18791)
    assert settings.token == ""
    assert settings.log_level == "info"
    assert settings.actor_timeout_ms == 2_000
    agent = settings.agent
    assert agent.enabled is True
    assert agent.api_key == ""
    assert agent.base_url == "https://openrouter.ai/api/v1"
    assert agent.model == "google/gemini-2.5-flash-lite"
    assert agent.interval_ms == 30_000
    assert agent.max_age_ms == 120_000
    assert agent.max_tokens == 200
    assert agent.temperature == 0.3
    assert agent.timeout_ms == 15_000
    assert agent.push_to_feed is True
    assert agent.log_verbose is False
    assert agent.active is False


def test_default_constants_match_the_spec():
    assert DEFAULT_BASE_URL == "https://openrouter.ai/api/v1"
    assert DEFAULT_MODEL == "google/gemini-2.5-flash-lite"


def test_default_log_format_is_console_on_a_tty():
    assert load(isatty=True).log_format == "console"


def test_default_log_format_is_json_off_a_tty():
    assert load(isatty=False).log_format == "json"


def test_explicit_log_format_wins_over_tty_default():
    assert load(env={"LOG_FORMAT": "json"}, isatty=True).log_format == "json"
    assert load(env={"LOG_FORMAT": "console"}, isatty=False).log_format == "console"


def test_empty_environment_values_count_as_unset():
    env = {"AGENT_MODEL": "", "RELAY_PORT": "  ", "AGENT_INTERVAL_MS": "", "AGENT_API": "openai"}
    settings = load(env=env)
    assert settings.agent.model == DEFAULT_MODEL
    assert settings.port == 18791
    assert settings.agent.interval_ms == 30_000


# --- environment -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("var", "raw", "read"),
    [
        ("RELAY_HOST", "0.0.0.0", lambda s: s.host),
        ("RELAY_PORT", "9000", lambda s: s.port),
        ("LOG_FORMAT", "CONSOLE", lambda s: s.log_format),
        ("LOG_LEVEL", "Debug", lambda s: s.log_level),
        ("RELAY_ACTOR_TIMEOUT_MS", "500", lambda s: s.actor_timeout_ms),
        ("AGENT_ENABLED", "false", lambda s: s.agent.enabled),
        ("AGENT_BASE_URL", "http://localhost:8080/v1/", lambda s: s.agent.base_url),
        ("AGENT_MODEL", " openai/gpt-4o-mini ", lambda s: s.agent.model),
        ("AGENT_INTERVAL_MS", "10000", lambda s: s.agent.interval_ms),
        ("AGENT_DEBOUNCE_MS", "1500", lambda s: s.agent.debounce_ms),
        ("AGENT_COOLDOWN_MS", "10000", lambda s: s.agent.cooldown_ms),
        ("RELAY_MAX_STREAMS", "4", lambda s: s.max_streams),
        ("RELAY_ALLOW_INSECURE", "1", lambda s: s.allow_insecure),
        ("RELAY_CORS_ORIGINS", "http://a.test:5173/, https://b.test", lambda s: s.cors_origins),
        ("RELAY_ALLOWED_HOSTS", " My-Laptop.local., t.example:8443 ", lambda s: s.allowed_hosts),
        ("RELAY_REDACT", "off", lambda s: s.redact),
        ("RELAY_EXCLUDE_APPS", "1Password, Keychain Access", lambda s: s.exclude_apps),
        ("RELAY_EXCLUDE_TITLES", "(?i)incognito|private", lambda s: s.exclude_titles),
        ("RELAY_PRICES", "/etc/relay/prices.json", lambda s: s.prices_file),
        ("RELAY_SITUATION_FILE", " /srv/openclaw/SITUATION.md ", lambda s: s.situation_file),
        ("AGENT_MAX_AGE_MS", "60000", lambda s: s.agent.max_age_ms),
        ("AGENT_MAX_TOKENS", "400", lambda s: s.agent.max_tokens),
        ("AGENT_TEMPERATURE", "1.25", lambda s: s.agent.temperature),
        ("AGENT_TIMEOUT_MS", "2500", lambda s: s.agent.timeout_ms),
        ("AGENT_PUSH_TO_FEED", "off", lambda s: s.agent.push_to_feed),
        ("AGENT_LOG_VERBOSE", "yes", lambda s: s.agent.log_verbose),
        ("AGENT_RESPONSE_FORMAT", " JSON_Object ", lambda s: s.agent.response_format),
        ("ESCALATION_MODE", " Selective ", lambda s: s.agent.escalation_mode),
        ("ESCALATION_COOLDOWN_MS", "1000", lambda s: s.agent.escalation_cooldown_ms),
        ("ESCALATION_STALE_MS", "90000", lambda s: s.agent.escalation_stale_ms),
        ("OPENROUTER_API_KEY", " sk-or-abc ", lambda s: s.agent.api_key),
        ("RELAY_TOKEN", " secret ", lambda s: s.token),
    ],
)
def test_each_environment_variable_is_read(var, raw, read):
    expected = {
        "RELAY_HOST": "0.0.0.0",
        "RELAY_PORT": 9000,
        "LOG_FORMAT": "console",
        "LOG_LEVEL": "debug",
        "RELAY_ACTOR_TIMEOUT_MS": 500,
        "AGENT_ENABLED": False,
        "AGENT_BASE_URL": "http://localhost:8080/v1",
        "AGENT_MODEL": "openai/gpt-4o-mini",
        "AGENT_INTERVAL_MS": 10_000,
        "AGENT_DEBOUNCE_MS": 1_500,
        "AGENT_COOLDOWN_MS": 10_000,
        "RELAY_MAX_STREAMS": 4,
        "RELAY_ALLOW_INSECURE": True,
        "RELAY_CORS_ORIGINS": ("http://a.test:5173", "https://b.test"),
        "RELAY_ALLOWED_HOSTS": ("my-laptop.local", "t.example:8443"),
        "RELAY_REDACT": False,
        "RELAY_EXCLUDE_APPS": ("1Password", "Keychain Access"),
        "RELAY_EXCLUDE_TITLES": "(?i)incognito|private",
        "RELAY_PRICES": "/etc/relay/prices.json",
        "RELAY_SITUATION_FILE": "/srv/openclaw/SITUATION.md",
        "AGENT_MAX_AGE_MS": 60_000,
        "AGENT_MAX_TOKENS": 400,
        "AGENT_TEMPERATURE": 1.25,
        "AGENT_TIMEOUT_MS": 2_500,
        "AGENT_PUSH_TO_FEED": False,
        "AGENT_LOG_VERBOSE": True,
        "AGENT_RESPONSE_FORMAT": "json_object",
        "ESCALATION_MODE": "selective",
        "ESCALATION_COOLDOWN_MS": 1_000,
        "ESCALATION_STALE_MS": 90_000,
        "OPENROUTER_API_KEY": "sk-or-abc",
        "RELAY_TOKEN": "secret",
    }[var]
    assert read(load(env={var: raw})) == expected


def test_every_env_var_is_covered_by_the_parametrised_test():
    assert len(ENV_VARS) == 29


def test_the_situation_file_is_off_by_default_and_its_path_is_expanded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert load().situation_file == ""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)

    env = {"RELAY_SITUATION_FILE": "~/.openclaw/workspace/SITUATION.md"}
    assert load(env=env).situation_file == str(
        tmp_path / "home" / ".openclaw" / "workspace" / "SITUATION.md"
    )
    relative = load(["--situation-file", "state/SITUATION.md"]).situation_file
    assert relative == str(tmp_path / "state" / "SITUATION.md")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", True), ("true", True), ("TRUE", True), ("yes", True), ("On", True),
        ("0", False), ("false", False), ("False", False), ("no", False), ("OFF", False),
    ],
)  # fmt: skip
def test_boolean_spellings(raw, expected):
    assert load(env={"AGENT_ENABLED": raw}).agent.enabled is expected


def test_api_key_makes_agent_active():
    assert load(env={"OPENROUTER_API_KEY": "sk-or-1"}).agent.active is True


def test_api_key_with_agent_disabled_is_not_active():
    env = {"OPENROUTER_API_KEY": "sk-or-1", "AGENT_ENABLED": "false"}
    assert load(env=env).agent.active is False


def test_environment_interval_is_not_clamped():
    assert load(env={"AGENT_INTERVAL_MS": "1000"}).agent.interval_ms == 1_000


@pytest.mark.parametrize("raw", ["0", "2", "0.0", " 2.0 "])
def test_temperature_bounds_are_inclusive(raw):
    assert load(env={"AGENT_TEMPERATURE": raw}).agent.temperature == float(raw)


@pytest.mark.parametrize("port", ["1", "65535"])
def test_port_bounds_are_accepted(port):
    assert load(env={"RELAY_PORT": port}).port == int(port)


# --- flags -------------------------------------------------------------------------------------


def test_flags_override_environment():
    env = {
        "RELAY_PORT": "8000",
        "AGENT_MODEL": "env/model",
        "AGENT_INTERVAL_MS": "40000",
        "AGENT_ENABLED": "true",
        "LOG_FORMAT": "console",
    }
    argv = [
        "--port", "9000",
        "--model", "flag/model",
        "--interval-ms", "50000",
        "--agent-enabled", "false",
        "--log-format", "json",
    ]  # fmt: skip
    settings = load(argv, env, isatty=True)
    assert settings.port == 9000
    assert settings.agent.model == "flag/model"
    assert settings.agent.interval_ms == 50_000
    assert settings.agent.enabled is False
    assert settings.log_format == "json"


def test_flag_wins_so_an_invalid_environment_value_is_not_read():
    settings = load(["--port", "9000"], {"RELAY_PORT": "not-a-port"})
    assert settings.port == 9000


def test_environment_is_used_for_settings_without_a_flag():
    settings = load(["--port", "9000"], {"AGENT_MAX_TOKENS": "321"})
    assert (settings.port, settings.agent.max_tokens) == (9000, 321)


def test_every_option_has_a_flag():
    argv = [
        "--host", "localhost", "--port", "1234", "--log-format", "console",
        "--log-level", "warning", "--actor-timeout-ms", "100", "--agent-enabled", "no",
        "--base-url", "https://example.com/api", "--model", "m", "--interval-ms", "7000",
        "--max-age-ms", "20000", "--max-tokens", "50", "--temperature", "0.7",
        "--timeout-ms", "3000", "--push-to-feed", "false", "--log-verbose", "true",
    ]  # fmt: skip
    s = load(argv)
    assert (s.host, s.port, s.log_format, s.log_level, s.actor_timeout_ms) == (
        "localhost", 1234, "console", "warning", 100,
    )  # fmt: skip
    a = s.agent
    assert (a.enabled, a.base_url, a.model, a.interval_ms, a.max_age_ms) == (
        False, "https://example.com/api", "m", 7000, 20000,
    )  # fmt: skip
    assert (a.max_tokens, a.temperature, a.timeout_ms, a.push_to_feed, a.log_verbose) == (
        50, 0.7, 3000, False, True,
    )  # fmt: skip


# --- invalid settings --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"AGENT_INTERVAL_MS": "abc"},
            "AGENT_INTERVAL_MS must be a positive whole number, got 'abc'",
        ),
        ({"AGENT_INTERVAL_MS": "0"}, "AGENT_INTERVAL_MS must be a positive whole number"),
        ({"AGENT_INTERVAL_MS": "-5"}, "AGENT_INTERVAL_MS must be a positive whole number"),
        ({"AGENT_INTERVAL_MS": "1.5"}, "AGENT_INTERVAL_MS must be a positive whole number"),
        ({"AGENT_INTERVAL_MS": "30s"}, "AGENT_INTERVAL_MS must be a positive whole number"),
        ({"AGENT_MAX_AGE_MS": "two minutes"}, "AGENT_MAX_AGE_MS must be a positive whole number"),
        ({"AGENT_MAX_TOKENS": "0"}, "AGENT_MAX_TOKENS must be a positive whole number"),
        ({"AGENT_TIMEOUT_MS": "x"}, "AGENT_TIMEOUT_MS must be a positive whole number"),
        ({"RELAY_ACTOR_TIMEOUT_MS": "-1"}, "RELAY_ACTOR_TIMEOUT_MS must be a positive whole"),
        ({"RELAY_PORT": "0"}, "RELAY_PORT must be a port number from 1 to 65535, got '0'"),
        ({"RELAY_PORT": "70000"}, "RELAY_PORT must be a port number from 1 to 65535, got '70000'"),
        ({"RELAY_PORT": "65536"}, "RELAY_PORT must be a port number from 1 to 65535"),
        ({"RELAY_PORT": "abc"}, "RELAY_PORT must be a port number from 1 to 65535, got 'abc'"),
        ({"LOG_FORMAT": "xml"}, "LOG_FORMAT must be one of console, json, got 'xml'"),
        ({"LOG_LEVEL": "verbose"}, "LOG_LEVEL must be one of debug, info, warning, error"),
        ({"AGENT_ENABLED": "maybe"}, "AGENT_ENABLED must be true or false, got 'maybe'"),
        ({"AGENT_PUSH_TO_FEED": "2"}, "AGENT_PUSH_TO_FEED must be true or false, got '2'"),
        ({"AGENT_LOG_VERBOSE": "y"}, "AGENT_LOG_VERBOSE must be true or false"),
        ({"AGENT_TEMPERATURE": "2.5"}, "AGENT_TEMPERATURE must be a number from 0 to 2, got '2.5'"),
        ({"AGENT_TEMPERATURE": "-0.1"}, "AGENT_TEMPERATURE must be a number from 0 to 2"),
        ({"AGENT_TEMPERATURE": "hot"}, "AGENT_TEMPERATURE must be a number from 0 to 2"),
        ({"AGENT_TEMPERATURE": "nan"}, "AGENT_TEMPERATURE must be a number from 0 to 2"),
        ({"AGENT_TEMPERATURE": "inf"}, "AGENT_TEMPERATURE must be a number from 0 to 2"),
        (
            {"AGENT_BASE_URL": "openrouter.ai/api/v1"},
            "AGENT_BASE_URL must be an http:// or https://",
        ),
        ({"AGENT_BASE_URL": "ftp://example.com"}, "AGENT_BASE_URL must be an http:// or https://"),
        ({"RELAY_HOST": "my host"}, "RELAY_HOST is not a host name or address"),
        (
            {"AGENT_RESPONSE_FORMAT": "json"},
            "AGENT_RESPONSE_FORMAT must be one of auto, json_schema, json_object, off, got 'json'",
        ),
        (
            {"ESCALATION_MODE": "loud"},
            "ESCALATION_MODE must be one of off, selective, focus, rich, got 'loud'",
        ),
    ],
)
def test_invalid_environment_value_raises_config_error_naming_it(env, message):
    with pytest.raises(ConfigError) as info:
        load(env=env)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--interval-ms", "abc"], "--interval-ms must be a positive whole number, got 'abc'"),
        (["--port", "70000"], "--port must be a port number from 1 to 65535"),
        (["--log-format", "yaml"], "--log-format must be one of console, json"),
        (["--agent-enabled", "sure"], "--agent-enabled must be true or false"),
        (["--temperature", "3"], "--temperature must be a number from 0 to 2"),
        (["--base-url", "example.com"], "--base-url must be an http:// or https:// URL"),
        (["--model", "  "], "--model must not be empty"),
        (["--host", ""], "--host must not be empty"),
        (["--situation-file", " "], "--situation-file must not be empty"),
    ],
)
def test_invalid_flag_raises_config_error_naming_the_flag(argv, message):
    with pytest.raises(ConfigError) as info:
        load(argv, {"AGENT_INTERVAL_MS": "30000"})
    assert message in str(info.value)


def test_invalid_flag_is_reported_even_if_the_environment_is_valid():
    with pytest.raises(ConfigError, match="--port"):
        load(["--port", "0"], {"RELAY_PORT": "8000"})


@pytest.mark.parametrize("var", ["AGENT_INTERVAL_MS", "RELAY_PORT"])
@pytest.mark.parametrize("raw", ["²", "¹²³"], ids=["superscript-two", "superscript-123"])
def test_non_ascii_digits_raise_config_error_not_a_crash(var, raw):
    # str.isdigit() accepts superscripts that int() cannot parse; the relay must still exit 2
    # with a message rather than crash with a ValueError traceback.
    with pytest.raises(ConfigError, match=var):
        load(env={var: raw})


def test_config_error_is_a_value_error():
    assert issubclass(ConfigError, ValueError)


# --- settings_or_exit and run.py ---------------------------------------------------------------


def test_settings_or_exit_returns_settings_when_valid():
    settings = settings_or_exit(["--port", "9100"], {"AGENT_MODEL": "m"})
    assert (settings.port, settings.agent.model) == (9100, "m")


def test_settings_or_exit_exits_2_with_one_error_line(capsys):
    with pytest.raises(SystemExit) as info:
        settings_or_exit([], {"AGENT_INTERVAL_MS": "abc"})
    assert info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1
    assert "error:" in lines[0]
    assert "AGENT_INTERVAL_MS must be a positive whole number, got 'abc'" in lines[0]


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"AUDIO_SOURCE": "bogus"}, "AUDIO_SOURCE must be one of"),
        ({"MIC_SOURCE": "pulse:"}, "MIC_SOURCE: pulse: needs"),
        ({"AUDIO_SOURCE": "pulse:x", "AUDIO_ALT_SOURCE": "command:"}, "AUDIO_ALT_SOURCE"),
    ],
)
def test_a_source_that_is_not_one_stops_the_start_with_exit_2(capsys, env, named):
    with pytest.raises(SystemExit) as info:
        settings_or_exit([], env)
    assert info.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert named in line


def test_settings_or_exit_reports_flag_errors_on_stderr(capsys):
    with pytest.raises(SystemExit) as info:
        settings_or_exit(["--temperature", "9"], {})
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1
    assert "--temperature must be a number from 0 to 2" in err


@pytest.mark.slow
def test_run_py_help_exits_0_and_names_every_environment_variable():
    result = subprocess.run(
        [sys.executable, "run.py", "--help"],
        cwd=REPO,
        env=clean_env() | {"COLUMNS": "100"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for var in ENV_VARS:
        assert var in result.stdout, var


@pytest.mark.slow
def test_run_py_invalid_flag_exits_2_with_message_on_stderr():
    result = subprocess.run(
        [sys.executable, "run.py", "--interval-ms", "abc"],
        cwd=REPO,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert "error:" in result.stderr
    assert "--interval-ms must be a positive whole number, got 'abc'" in result.stderr
    assert "Traceback" not in result.stderr


# --- the LLM key: what an HTTP header can carry ------------------------------------------------

KEY = "sk-or-v1-" + "5e1f" * 16
BAD_KEYS = [
    (KEY + "\u201d", 74, "a non-ASCII character (U+201D)"),  # pasted with a curly quote
    ("\u201c" + KEY, 1, "a non-ASCII character (U+201C)"),
    (KEY[:20] + " " + KEY[20:], 21, "a space (U+0020)"),
    (KEY[:20] + "\t" + KEY[20:], 21, "a control character (U+0009)"),
    (KEY[:20] + "\x00" + KEY[20:], 21, "a control character (U+0000)"),
    (KEY[:20] + "\u00a0" + KEY[20:], 21, "a non-ASCII space (U+00A0)"),
    (KEY + "\u00e9", 74, "a non-ASCII character (U+00E9)"),
]
BAD_KEY_IDS = [f"{kind.split('(')[1][:-1]}@{position}" for _, position, kind in BAD_KEYS]


@pytest.mark.parametrize("var", ["OPENROUTER_API_KEY", "RELAY_TOKEN"])
@pytest.mark.parametrize(("raw", "position", "kind"), BAD_KEYS, ids=BAD_KEY_IDS)
def test_a_secret_no_http_header_can_carry_stops_start_up_and_is_not_printed(
    capsys, var, raw, position, kind
):
    # A key would fail every LLM call; a token could never match an Authorization header.
    with pytest.raises(SystemExit) as info:
        settings_or_exit([], {var: raw})
    assert info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1
    assert f"{var} holds {kind} at position {position} of {len(raw)}" in captured.err
    assert_nowhere(KEY, captured.err)


@pytest.mark.parametrize(("raw", "position", "kind"), BAD_KEYS, ids=BAD_KEY_IDS)
def test_a_key_no_http_header_can_carry_is_refused_at_run_time_and_not_shown(raw, position, kind):
    config = AgentSettings(api_key="old-key")
    with pytest.raises(BadRequest) as info:
        config.updated(update({"openrouterApiKey": raw}))
    assert f"openrouterApiKey holds {kind} at position {position}" in str(info.value)
    assert_nowhere(KEY, str(info.value))
    assert config.api_key == "old-key"


def test_an_empty_token_leaves_the_token_unset():
    assert load(env={"RELAY_TOKEN": ""}).token == ""
    assert load(env={"RELAY_TOKEN": f" {KEY} "}).token == KEY


def test_a_key_of_printable_ascii_is_taken_and_its_surrounding_spaces_dropped():
    assert load(env={"OPENROUTER_API_KEY": f"  {KEY}\n"}).agent.api_key == KEY
    assert AgentSettings().updated(update({"openrouterApiKey": f" {KEY} "})).api_key == KEY
    odd = "!\"#$%&'()*+,-./0-9:;<=>?@A-Z[\\]^_`a-z{|}~"
    assert load(env={"OPENROUTER_API_KEY": odd}).agent.api_key == odd


@pytest.mark.slow
def test_run_py_with_a_pasted_key_exits_2_naming_the_variable_not_the_key():
    result = subprocess.run(
        [sys.executable, "run.py"],
        cwd=REPO,
        env=clean_env() | {"OPENROUTER_API_KEY": KEY + "\u201d"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert "OPENROUTER_API_KEY holds a non-ASCII character (U+201D)" in result.stderr
    assert "Traceback" not in result.stderr
    assert_nowhere(KEY, result.stdout, result.stderr)


# --- AgentSettings -------------------------------------------------------------------------------


def update(changes: dict[str, Any]) -> AgentConfigUpdate:
    """A ``POST /agent/config`` body, decoded as the relay decodes it (which checks it)."""
    return convert(changes, AgentConfigUpdate)


def test_updated_applies_every_runtime_field():
    config = AgentSettings().updated(
        update(
            {
                "enabled": False,
                "intervalMs": 60_000,
                "model": " openai/gpt-4o-mini ",
                "maxAge": 300_000,
                "maxTokens": 500,
                "temperature": 1,
                "pushToFeed": False,
                "logVerbose": True,
                "responseFormat": "OFF",
                "openrouterApiKey": " sk-or-new ",
            }
        )
    )
    assert config == AgentSettings(
        enabled=False,
        api_key="sk-or-new",
        interval_ms=60_000,
        model="openai/gpt-4o-mini",
        max_age_ms=300_000,
        max_tokens=500,
        temperature=1.0,
        push_to_feed=False,
        log_verbose=True,
        response_format="off",
    )
    assert isinstance(config.temperature, float)


def test_updated_returns_a_new_config_and_keeps_the_old_one():
    old = AgentSettings()
    new = old.updated(update({"model": "x"}))
    assert new.model == "x"
    assert old.model == DEFAULT_MODEL


def test_updated_with_empty_body_changes_nothing():
    config = AgentSettings(model="m", interval_ms=7_000)
    assert config.updated(update({})) == config


@pytest.mark.parametrize(
    ("value", "expected"), [(1_000, 5_000), (0, 5_000), (-1, 5_000), (4_999, 5_000), (5_000, 5_000)]
)
def test_updated_raises_interval_to_at_least_5000(value, expected):
    assert AgentSettings().updated(update({"intervalMs": value})).interval_ms == expected


@pytest.mark.parametrize("key", ["maxAge", "maxAgeMs"])
@pytest.mark.parametrize(("value", "expected"), [(100, 10_000), (9_999, 10_000), (10_001, 10_001)])
def test_updated_raises_max_age_to_at_least_10000(key, value, expected):
    assert AgentSettings().updated(update({key: value})).max_age_ms == expected


def test_updated_caps_interval_at_a_day():
    assert AgentSettings().updated(update({"intervalMs": 10**12})).interval_ms == 24 * 3_600_000


def test_updated_accepts_a_whole_float_interval():
    config = AgentSettings().updated(update({"intervalMs": 6_000.0}))
    assert config.interval_ms == 6_000
    assert isinstance(config.interval_ms, int)


def test_updated_rejects_unknown_fields_naming_them():
    with pytest.raises(BadRequest) as info:
        AgentSettings().updated(update({"model": "m", "colour": "red", "apiKey": "k"}))
    message = str(info.value)
    assert "unknown field colour" in message  # the first, in the order of the body
    assert "accepted:" in message
    assert "intervalMs" in message


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"enabled": "yes"}, "enabled must be true or false"),
        ({"enabled": 1}, "enabled must be true or false"),
        ({"pushToFeed": None}, "pushToFeed must be true or false"),
        ({"logVerbose": "false"}, "logVerbose must be true or false"),
        ({"intervalMs": "6000"}, "intervalMs must be a number, not a string"),
        ({"intervalMs": True}, "intervalMs must be a number"),
        ({"intervalMs": None}, "intervalMs must be a number, not null"),
        ({"intervalMs": 6_000.5}, "intervalMs must be a whole number"),
        ({"intervalMs": float("inf")}, "intervalMs must be a whole number"),
        ({"maxAge": "60000"}, "maxAge must be a number"),
        ({"temperature": 5}, "temperature must be a number at most 2"),
        ({"temperature": -0.1}, "temperature must be a number at least 0"),
        ({"temperature": "0.5"}, "temperature must be a number, not a string"),
        ({"temperature": True}, "temperature must be a number, not true or false"),
        ({"temperature": float("nan")}, "temperature must be a number at least 0"),
        ({"maxTokens": 0}, "maxTokens must be a whole number at least 1"),
        ({"maxTokens": 32_001}, "maxTokens must be a whole number at most 32000"),
        ({"maxTokens": 100.0}, "maxTokens must be a whole number, not a number with"),
        ({"maxTokens": True}, "maxTokens must be a whole number, not true or false"),
        ({"model": ""}, "model must be a string that is not blank"),
        ({"model": "   "}, "model must be a string that is not blank"),
        ({"model": 5}, "model must be a string, not a whole number"),
        ({"openrouterApiKey": None}, "openrouterApiKey must be a string, not null"),
        ({"responseFormat": "json"}, "responseFormat must be one of auto, json_schema"),
        ({"responseFormat": None}, "responseFormat must be a string, not null"),
    ],
)
def test_updated_rejects_wrong_types_and_ranges(changes, message):
    with pytest.raises(BadRequest) as info:
        AgentSettings().updated(update(changes))
    assert message in str(info.value)


def test_updated_changes_nothing_when_one_field_of_several_is_bad():
    config = AgentSettings(model="old", interval_ms=30_000, enabled=True)
    with pytest.raises(BadRequest, match="temperature"):
        config.updated(
            update({"model": "new", "intervalMs": 6_000, "enabled": False, "temperature": 5})
        )
    assert config == AgentSettings(model="old", interval_ms=30_000, enabled=True)


def test_updated_accepts_temperature_bounds():
    assert AgentSettings().updated(update({"temperature": 0})).temperature == 0.0
    assert AgentSettings().updated(update({"temperature": 2})).temperature == 2.0


def test_updated_with_empty_api_key_clears_it():
    config = AgentSettings(api_key="sk-or-1").updated(update({"openrouterApiKey": ""}))
    assert config.api_key == ""
    assert config.active is False
    assert msgspec.to_builtins(public_config(config))["hasApiKey"] is False


def test_to_public_never_contains_the_key():
    public = msgspec.to_builtins(public_config(AgentSettings(api_key="sk-or-very-secret-123")))
    assert public["hasApiKey"] is True
    assert "sk-or-very-secret-123" not in orjson.dumps(public).decode()
    assert "apiKey" not in public
    assert "api_key" not in public
    assert "openrouterApiKey" not in public


def test_to_public_has_the_runtime_fields():
    assert msgspec.to_builtins(public_config(AgentSettings())) == {
        "enabled": True,
        "intervalMs": 30_000,
        "debounceMs": 3_000,
        "cooldownMs": 0,
        "model": DEFAULT_MODEL,
        "maxAgeMs": 120_000,
        "maxTokens": 200,
        "temperature": 0.3,
        "pushToFeed": True,
        "logVerbose": False,
        "economy": True,
        "timeoutMs": 15_000,
        "fallbackModels": [],
        "responseFormat": "auto",
        "baseUrl": DEFAULT_BASE_URL,
        "hasApiKey": False,
        "escalationMode": "off",
        "escalationCooldownMs": 30_000,
        "escalationStaleMs": 0,
        "visionEnabled": True,
        "visionModel": "google/gemini-2.5-flash",
        "visionMaxImages": 1,
    }


def test_vision_settings_from_the_environment():
    agent = load(
        env={
            "AGENT_VISION_ENABLED": "false",
            "AGENT_VISION_MODEL": " qwen/qwen2.5-vl ",
            "AGENT_VISION_MAX_IMAGES": "4",
        }
    ).agent
    assert (agent.vision_enabled, agent.vision_model, agent.vision_max_images) == (
        False,
        "qwen/qwen2.5-vl",
        4,
    )
    assert agent.sends_images is False


@pytest.mark.parametrize("bad", ["5", "-1", "one"])
def test_vision_max_images_outside_0_to_4_is_refused(bad: str):
    with pytest.raises(ConfigError, match="AGENT_VISION_MAX_IMAGES"):
        load(env={"AGENT_VISION_MAX_IMAGES": bad})


def test_vision_settings_change_at_run_time():
    config = AgentSettings().updated(
        update({"visionEnabled": False, "visionModel": " a/b ", "visionMaxImages": 0})
    )
    assert (config.vision_enabled, config.vision_model, config.vision_max_images) == (
        False,
        "a/b",
        0,
    )
    with pytest.raises(BadRequest, match="visionMaxImages"):
        AgentSettings().updated(update({"visionMaxImages": 5}))
    with pytest.raises(BadRequest, match="visionModel"):
        AgentSettings().updated(update({"visionModel": "  "}))


def test_a_call_with_images_asks_the_vision_model_first():
    config = AgentSettings(
        model="m/text", fallback_models=("m/other", "m/vision"), vision_model="m/vision"
    )
    assert config.models_for(images=False) == ("m/text", "m/other", "m/vision")
    assert config.models_for(images=True) == ("m/vision", "m/text", "m/other")
    assert config.tick_budget_ms(images=True) == config.tick_budget_ms() == 3 * config.timeout_ms


def test_a_zero_debounce_is_allowed():
    assert load(env={"AGENT_DEBOUNCE_MS": "0"}).agent.debounce_ms == 0


def test_schedule_defaults():
    settings = load()
    agent = settings.agent
    assert (agent.debounce_ms, agent.interval_ms, agent.cooldown_ms) == (3_000, 30_000, 0)
    assert settings.max_streams == 32
    assert settings.demo is False


def test_the_debounce_is_capped_at_the_interval():
    assert AgentSettings(debounce_ms=60_000, interval_ms=10_000).effective_debounce_ms == 10_000
    assert AgentSettings(debounce_ms=2_000, interval_ms=10_000).effective_debounce_ms == 2_000


@pytest.mark.parametrize("var", ["AGENT_DEBOUNCE_MS", "AGENT_COOLDOWN_MS"])
@pytest.mark.parametrize("raw", ["-1", "1.5", "soon"])
def test_schedule_settings_must_be_whole_numbers(var, raw):
    with pytest.raises(ConfigError, match=f"{var} must be a whole number of 0 or more"):
        load(env={var: raw})


def test_schedule_fields_change_at_runtime():
    config = AgentSettings().updated(update({"debounceMs": 0, "cooldownMs": 5_000}))
    assert (config.debounce_ms, config.cooldown_ms) == (0, 5_000)
    assert (
        AgentSettings().updated(update({"debounceMs": -5})).debounce_ms == 0
    )  # clamped, as intervalMs
    with pytest.raises(BadRequest, match="debounceMs"):
        AgentSettings().updated(update({"debounceMs": "soon"}))


def test_demo_flag():
    assert load(["--demo"]).demo is True


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"RELAY_CORS_ORIGINS": "localhost:5173"}, "RELAY_CORS_ORIGINS must list origins"),
        ({"RELAY_CORS_ORIGINS": "http://a.test/app"}, "no path"),
        ({"RELAY_EXCLUDE_TITLES": "(unclosed"}, "not a valid regular expression"),
        ({"RELAY_ALLOWED_HOSTS": "*"}, "RELAY_ALLOWED_HOSTS must list host names"),
        ({"RELAY_ALLOWED_HOSTS": "http://relay.lan"}, "no scheme, path or \\*"),
        ({"RELAY_ALLOWED_HOSTS": "relay.lan/x"}, "got 'relay.lan/x'"),
        ({"RELAY_ALLOWED_HOSTS": "::1"}, "\\[fd00::1\\]"),  # IPv6 goes in brackets
        ({"RELAY_ALLOWED_HOSTS": "relay.lan:0"}, "RELAY_ALLOWED_HOSTS"),
        ({"RELAY_ALLOWED_HOSTS": "relay.lan:65536"}, "RELAY_ALLOWED_HOSTS"),
        ({"RELAY_ALLOWED_HOSTS": "relay lan"}, "RELAY_ALLOWED_HOSTS"),
    ],
)
def test_bad_privacy_and_cors_settings_stop_start_up(env, fragment):
    with pytest.raises(ConfigError, match=fragment):
        load(env=env)


def test_privacy_and_exposure_defaults():
    settings = load()
    assert settings.redact is True
    assert (settings.allow_insecure, settings.cors_origins) == (False, ())
    assert settings.allowed_hosts == ()
    assert (settings.exclude_apps, settings.exclude_titles, settings.prices_file) == ((), "", "")
