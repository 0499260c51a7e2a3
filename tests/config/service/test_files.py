"""What ``sinain-relay service print`` shows: the systemd unit and the launchd agent, each
starting the relay with its key file, restarted on failure, with no setting's value in them;
and the unit passes ``systemd-analyze verify``."""

from __future__ import annotations

import os
import plistlib
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from config.service.command import RUN_PY, main
from config.service.files import (
    relay_command,
    service_layout,
    systemd_unit,
)
from tests.support.harness import ROOT, relay_env
from tests.support.run_relay import run_to_end
from tests.support.service_home import ServiceHome, service_home

SECRETS = {
    "OPENROUTER_API_KEY": "sk-or-v1-print-test-key-000111222",
    "RELAY_TOKEN": "print-test-token-333444555",
    "STT_API_KEY": "stt-print-test-key-666777888",
}
SCRIPT = Path(sys.executable).parent / "sinain-relay"
EXPECTED_COMMAND = (
    (str(SCRIPT),) if os.access(SCRIPT, os.X_OK) else (os.path.abspath(sys.executable), str(RUN_PY))
)


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ServiceHome:
    found = service_home(tmp_path, monkeypatch)
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("RELAY_PORT", "18800")
    return found


def printed(platform: str, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    assert main(["print", "--platform", platform]) == 0
    out, err = capsys.readouterr()
    return out, err


def unit_lines(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line and line[0] != "#")


def test_print_linux_shows_a_unit_restarted_on_failure_with_the_key_file(
    user: ServiceHome, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = printed("linux", capsys)
    unit = unit_lines(out)
    assert unit["ExecStart"] == " ".join(EXPECTED_COMMAND)
    assert unit["EnvironmentFile"] == str(user.key_file)
    assert unit["Restart"] == "on-failure"
    assert int(unit["RestartSec"]) > 0
    assert unit["RestartPreventExitStatus"] == "2"  # an invalid setting: a restart fails again
    assert unit["WantedBy"] == "default.target"
    for name, value in SECRETS.items():
        assert value not in out + err
        assert name in err  # named as what the key file would keep
    assert str(user.unit) in err
    assert not user.unit.exists() and not user.key_file.exists()  # print writes nothing


def test_print_macos_shows_an_agent_kept_alive_with_the_env_file_and_the_log_file(
    user: ServiceHome, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = printed("macos", capsys)
    agent = plistlib.loads(out.encode())
    log = user.home / "Library" / "Logs" / "sinain-relay" / "relay.log"
    assert agent["Label"] == "ai.sinain.relay"
    assert agent["ProgramArguments"] == [
        *EXPECTED_COMMAND,
        "--env-file",
        str(user.key_file),
        "--log-file",
        str(log),
    ]
    assert agent["RunAtLoad"] is True
    assert agent["KeepAlive"] == {"SuccessfulExit": False}
    assert set(agent["EnvironmentVariables"]) == {"PATH"}
    for value in SECRETS.values():
        assert value not in out + err
    assert str(user.plist) in err


def test_the_command_is_the_script_beside_the_interpreter_else_run_py() -> None:
    assert relay_command("/venv/bin/python", "/src/run.py", script_exists=True) == (
        "/venv/bin/sinain-relay",
    )
    assert relay_command("/venv/bin/python", "/src/run.py", script_exists=False) == (
        "/venv/bin/python",
        "/src/run.py",
    )


@pytest.mark.slow
def test_python_run_py_service_print_prints_the_unit(tmp_path: Path) -> None:
    env = relay_env(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"))
    done = run_to_end(["service", "print", "--platform", "linux"], env)
    assert done.returncode == 0, done.stderr
    assert "Restart=on-failure" in done.stdout
    assert f"EnvironmentFile={tmp_path}/config/sinain-relay/env" in done.stdout


def verify(unit: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``systemd-analyze --user verify`` with a runtime directory of its own."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "HOME": str(tmp_path)}
    return subprocess.run(
        ["systemd-analyze", "--user", "verify", str(unit)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


needs_systemd_analyze = pytest.mark.skipif(
    shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here"
)


@needs_systemd_analyze
def test_the_printed_unit_verifies(
    user: ServiceHome, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out, _ = printed("linux", capsys)
    unit = tmp_path / "units" / "sinain-relay.service"
    unit.parent.mkdir()
    unit.write_text(out)
    done = verify(unit, tmp_path)
    assert (done.returncode, done.stdout + done.stderr) == (0, "")
    # the check sees a mistake: a key systemd does not know
    unit.write_text(out.replace("Restart=on-failure", "Restart=on-failure\nRestartt=always"))
    assert "Unknown key" in verify(unit, tmp_path).stderr


@needs_systemd_analyze
def test_a_path_with_a_space_a_percent_and_a_dollar_verifies(tmp_path: Path) -> None:
    folder = tmp_path / "my tools %h $HOME"
    folder.mkdir()
    program = folder / "sinain-relay"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    layout = service_layout("linux", tmp_path, {})
    unit = tmp_path / "sinain-relay.service"
    unit.write_text(systemd_unit((str(program), "--data-dir", "a b"), layout.key_file))
    done = verify(unit, tmp_path)
    assert (done.returncode, done.stdout + done.stderr) == (0, "")
    program.unlink()  # and the unit names that very file: now it is missing
    assert "sinain-relay" in verify(unit, tmp_path).stderr


def test_the_unit_in_the_service_doc_is_the_printed_one(
    user: ServiceHome, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/service.md shows the unit as print does, but for the paths of its example."""
    doc = (ROOT / "docs" / "service.md").read_text()
    shown = doc.split("```ini\n", 1)[1].split("```", 1)[0]
    out, _ = printed("linux", capsys)
    paths = ("ExecStart=", "EnvironmentFile=")
    assert [line for line in shown.splitlines() if not line.startswith(paths)] == [
        line for line in out.splitlines() if not line.startswith(paths)
    ]
