"""The key file (``--env-file``, ``RELAY_ENV_FILE``): read under the environment, refused when
others may read it, written back as it reads, never quoted in an error."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from config.command_line import load_settings
from config.common.errors import ConfigError
from config.env_file import env_file_text, read_env_file, write_private
from tests.support.harness import relay_env
from tests.support.run_relay import run_to_end

KEY = "sk-or-v1-env-file-test-key-0123456789"


def key_file(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "env"
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def test_the_files_settings_are_read_under_the_environments(tmp_path: Path) -> None:
    path = key_file(
        tmp_path,
        f"# the relay's keys\n\n; a comment too\nOPENROUTER_API_KEY={KEY}\n"
        "RELAY_PORT=18800\nAGENT_MODEL = 'some/model'\n",
    )
    settings = load_settings(["--env-file", str(path)], {}, isatty=False)
    assert (settings.agent.api_key, settings.port, settings.agent.model) == (
        KEY,
        18800,
        "some/model",
    )
    assert settings.env_file == str(path)
    environ = {"RELAY_ENV_FILE": str(path), "RELAY_PORT": "18900", "AGENT_MODEL": " "}
    from_variable = load_settings([], environ, isatty=False)
    assert from_variable.port == 18900  # the real environment wins over the file
    assert from_variable.agent.model == "some/model"  # an empty variable does not
    assert load_settings(["--port", "18950", "--env-file", str(path)], {}, isatty=False).port == (
        18950
    )


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620])
def test_a_file_others_may_use_is_refused_with_the_chmod(tmp_path: Path, mode: int) -> None:
    path = key_file(tmp_path, f"OPENROUTER_API_KEY={KEY}\n", mode)
    with pytest.raises(ConfigError) as refused:
        load_settings(["--env-file", str(path)], {}, isatty=False)
    assert f"chmod 600 {path}" in str(refused.value)
    assert str(refused.value).startswith("--env-file: ")
    assert KEY not in str(refused.value)


def test_a_missing_file_or_a_bad_line_is_named_without_its_text(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="RELAY_ENV_FILE: cannot read"):
        load_settings([], {"RELAY_ENV_FILE": str(tmp_path / "none")}, isatty=False)
    path = key_file(tmp_path, f"# ok\nexport OPENROUTER_API_KEY={KEY}\n")
    with pytest.raises(ConfigError, match="line 2 of") as refused:
        read_env_file(str(path))
    assert KEY not in str(refused.value)
    path = key_file(tmp_path, f"OPENROUTER_API_KEY='{KEY}\n")
    with pytest.raises(ConfigError, match="line 1 of"):
        read_env_file(str(path))


@pytest.mark.parametrize(
    "value",
    [
        KEY,
        "http://127.0.0.1:8000/v1",
        r"(?i)\bbank\b|private $HOME `x`",
        'it\'s "quoted" \\ twice',
        "  spaced  inside  ",
        "100%",
        "",
    ],
)
def test_what_is_written_is_read_back_as_it_was(tmp_path: Path, value: str) -> None:
    path = tmp_path / "dir" / "env"
    write_private(path, env_file_text({"RELAY_EXCLUDE_TITLES": value}, "a header\nof two lines"))
    assert read_env_file(str(path)) == {"RELAY_EXCLUDE_TITLES": value}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_a_value_with_a_line_end_is_not_written() -> None:
    with pytest.raises(ConfigError, match="RELAY_HOST"):
        env_file_text({"RELAY_HOST": "a\nRELAY_TOKEN=x"})


def run_relay(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_to_end(args, env)


@pytest.mark.slow
def test_the_relay_refuses_to_start_with_a_file_others_may_read(tmp_path: Path) -> None:
    path = key_file(tmp_path, f"OPENROUTER_API_KEY={KEY}\n", 0o644)
    done = run_relay(["--env-file", str(path)], relay_env(RELAY_DATA_DIR=str(tmp_path / "data")))
    assert done.returncode == 2
    assert f"chmod 600 {path}" in done.stderr
    assert KEY not in done.stderr + done.stdout
    assert not (tmp_path / "data").exists()  # nothing started


@pytest.mark.slow
def test_the_relay_reads_its_settings_from_a_private_file(tmp_path: Path) -> None:
    """A setting only the file holds, invalid, stops the start: the file was read."""
    path = key_file(tmp_path, "RELAY_RETENTION_DAYS=-3\n")
    env = relay_env(RELAY_DATA_DIR=str(tmp_path / "data"), RELAY_ENV_FILE=str(path))
    done = run_relay([], env)
    assert done.returncode == 2
    assert "RELAY_RETENTION_DAYS" in done.stderr
    os.chmod(path, 0o644)
    assert "chmod 600" in run_relay([], env).stderr
