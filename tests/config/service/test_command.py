"""``sinain-relay service install|uninstall|status`` in a home of its own, with stand-in
``systemctl`` and ``launchctl`` that record what they were asked (:mod:`tests.support.
service_home`): the files, their modes, the commands, and what is kept."""

from __future__ import annotations

import os
import plistlib
import stat
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from config.data_home import data_dir
from config.env_file import read_env_file
from config.service.command import main
from tests.support.harness import free_port
from tests.support.service_home import ServiceHome, service_home

KEY = "sk-or-v1-install-test-key-0123456789abcdef"
OTHER_KEY = "sk-or-v1-a-newer-key-fedcba9876543210"
SYSTEMCTL = "systemctl --user"


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ServiceHome:
    found = service_home(tmp_path, monkeypatch)
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    monkeypatch.setenv("AGENT_MODEL", "some/model")
    monkeypatch.setenv("RELAY_DATA_DIR", "relative/data")
    monkeypatch.chdir(tmp_path)
    return found


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_install_writes_the_key_file_and_the_unit_and_starts_it(
    user: ServiceHome, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["install", "--platform", "linux"]) == 0
    assert read_env_file(str(user.key_file)) == {
        "RELAY_DATA_DIR": str(tmp_path / "relative" / "data"),  # absolute: the service's cwd is ~
        "AGENT_MODEL": "some/model",
        "OPENROUTER_API_KEY": KEY,
    }
    assert (mode(user.key_file), mode(user.key_file.parent), mode(user.unit)) == (
        0o600,
        0o700,
        0o644,
    )
    assert KEY not in user.unit.read_text()
    assert f"EnvironmentFile={user.key_file}" in user.unit.read_text()
    assert user.calls == [
        f"{SYSTEMCTL} daemon-reload",
        f"{SYSTEMCTL} enable --now sinain-relay",
    ]
    out = capsys.readouterr().out
    assert "loginctl enable-linger" in out and "journalctl --user -u sinain-relay" in out
    assert KEY not in out


def test_install_keeps_an_existing_key_file_unless_forced(
    user: ServiceHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["install", "--platform", "linux"]) == 0
    monkeypatch.setenv("OPENROUTER_API_KEY", OTHER_KEY)
    assert main(["install", "--platform", "linux"]) == 0
    assert read_env_file(str(user.key_file))["OPENROUTER_API_KEY"] == KEY
    assert user.calls[-1] == f"{SYSTEMCTL} restart sinain-relay"  # the new unit applies
    assert main(["install", "--platform", "linux", "--force"]) == 0
    assert read_env_file(str(user.key_file))["OPENROUTER_API_KEY"] == OTHER_KEY
    assert mode(user.key_file) == 0o600


def test_install_refuses_a_kept_key_file_others_may_read(
    user: ServiceHome, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["install", "--platform", "linux"]) == 0
    user.key_file.chmod(0o644)
    assert main(["install", "--platform", "linux"]) == 2
    assert f"chmod 600 {user.key_file}" in capsys.readouterr().err


def test_install_refuses_an_invalid_setting_before_writing_anything(
    user: ServiceHome, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RELAY_PORT", "not-a-port")
    assert main(["install", "--platform", "linux"]) == 2
    assert "RELAY_PORT" in capsys.readouterr().err
    assert not user.key_file.exists() and not user.unit.exists() and user.calls == []


def test_a_refusing_manager_fails_the_install(
    user: ServiceHome, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FAKE_FAIL", "enable")
    assert main(["install", "--platform", "linux"]) == 1
    out = capsys.readouterr().out
    assert "Failed to enable unit: refused" in out
    assert user.unit.exists()  # left for the user to look at


def test_uninstall_stops_and_removes_the_unit_and_keeps_the_key_file(
    user: ServiceHome, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["install", "--platform", "linux"]) == 0
    assert main(["uninstall", "--platform", "linux"]) == 0
    assert not user.unit.exists()
    assert read_env_file(str(user.key_file))["OPENROUTER_API_KEY"] == KEY
    assert user.calls[-2:] == [
        f"{SYSTEMCTL} disable --now sinain-relay",
        f"{SYSTEMCTL} daemon-reload",
    ]
    assert f"kept {user.key_file}" in capsys.readouterr().out


def test_uninstall_purge_removes_the_key_file_too(user: ServiceHome) -> None:
    assert main(["install", "--platform", "linux"]) == 0
    assert main(["uninstall", "--platform", "linux", "--purge"]) == 0
    assert not user.unit.exists() and not user.key_file.exists()
    assert not user.key_file.parent.exists()
    assert main(["uninstall", "--platform", "linux", "--purge"]) == 0  # twice: nothing to do


def test_uninstall_names_the_data_directory_it_keeps(
    user: ServiceHome, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("RELAY_DATA_DIR")  # the key file names none: the data home
    assert main(["install", "--platform", "linux"]) == 0
    capsys.readouterr()
    assert main(["uninstall", "--platform", "linux"]) == 0
    out = capsys.readouterr().out
    assert f"kept the relay's data in {data_dir('')}\n" in out
    assert not [line for line in out.splitlines() if line.rstrip().endswith(" in")]


class _Health(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/health" else 404)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def answering() -> Iterator[int]:
    """A loopback server answering ``GET /health`` with 200, on the port it yields."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_status_asks_the_manager_then_the_relay_at_the_key_files_address(
    user: ServiceHome,
    monkeypatch: pytest.MonkeyPatch,
    answering: int,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["status", "--platform", "linux"]) == 3
    assert "not installed" in capsys.readouterr().out
    monkeypatch.setenv("RELAY_PORT", str(answering))
    assert main(["install", "--platform", "linux"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("RELAY_PORT", "1")  # the status's own environment is not the service's
    assert main(["status", "--platform", "linux"]) == 0
    out = capsys.readouterr().out
    assert "running: yes (active)" in out
    assert f"GET http://127.0.0.1:{answering}/health: 200 OK" in out
    assert f"{SYSTEMCTL} is-active sinain-relay" in user.calls
    assert KEY not in out


def test_status_says_when_nothing_answers(
    user: ServiceHome, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    monkeypatch.setenv("RELAY_PORT", str(port))
    assert main(["install", "--platform", "linux"]) == 0
    capsys.readouterr()
    assert main(["status", "--platform", "linux"]) == 3
    assert f"GET http://127.0.0.1:{port}/health: no answer" in capsys.readouterr().out


def test_launchd_install_bootstraps_the_agent_and_uninstall_boots_it_out(
    user: ServiceHome, answering: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELAY_PORT", str(answering))
    target = f"gui/{os.getuid()}/ai.sinain.relay"
    assert main(["install", "--platform", "macos"]) == 0
    agent = plistlib.loads(user.plist.read_bytes())
    assert "--env-file" in agent["ProgramArguments"]
    assert KEY not in user.plist.read_text()
    assert (mode(user.key_file), mode(user.plist)) == (0o600, 0o644)
    logs = user.home / "Library" / "Logs" / "sinain-relay"
    assert logs.is_dir() and mode(logs) == 0o700  # launchd opens stderr.log there
    assert user.calls == [
        f"launchctl print {target}",
        f"launchctl enable {target}",
        f"launchctl bootstrap gui/{os.getuid()} {user.plist}",
    ]
    assert main(["status", "--platform", "macos"]) == 0
    assert main(["install", "--platform", "macos"]) == 0  # loaded: booted out, then in again
    assert user.calls[-3:] == [
        f"launchctl bootout {target}",
        f"launchctl enable {target}",
        f"launchctl bootstrap gui/{os.getuid()} {user.plist}",
    ]
    assert main(["uninstall", "--platform", "macos"]) == 0
    assert user.calls[-1] == f"launchctl bootout {target}"
    assert not user.plist.exists() and user.key_file.exists() and logs.is_dir()
    assert main(["status", "--platform", "macos"]) == 3


def test_install_checks_the_kept_key_file_not_the_environment(
    user: ServiceHome, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["install", "--platform", "linux"]) == 0
    monkeypatch.setenv("RELAY_PORT", "not-a-port")  # not kept: the file is
    assert main(["install", "--platform", "linux"]) == 0
    user.key_file.write_text("RELAY_RETENTION_DAYS=-1\n")
    assert main(["install", "--platform", "linux"]) == 2
    assert "RELAY_RETENTION_DAYS" in capsys.readouterr().err
