"""A user's home for ``sinain-relay service`` tests: ``HOME`` and ``XDG_CONFIG_HOME`` in a
temporary directory, none of the relay's settings from outside, and stand-in ``systemctl``
and ``launchctl`` first on ``PATH``: shell scripts that append each command line they are
given to a file and keep what they were told (enabled, loaded) as files of their own."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from config import data_home
from config.options import OPTIONS

SYSTEMCTL = """#!/bin/sh
echo "systemctl $*" >> "$FAKE_CALLS"
case " $* " in *" $FAKE_FAIL "*) echo "Failed to $FAKE_FAIL unit: refused" >&2; exit 1 ;; esac
case "$*" in
  *is-active*) if [ -e "$FAKE_STATE/started" ]; then echo active; else echo inactive; exit 3; fi ;;
  *disable*) rm -f "$FAKE_STATE/started" ;;
  *enable*) touch "$FAKE_STATE/started" ;;
esac
exit 0
"""
"""``systemctl --user``: ``enable --now`` starts, ``disable --now`` stops, ``is-active`` says;
the subcommand named in ``FAKE_FAIL`` fails."""

LAUNCHCTL = """#!/bin/sh
echo "launchctl $*" >> "$FAKE_CALLS"
case " $* " in *" $FAKE_FAIL "*) echo "Bootstrap failed: 5: Input/output error" >&2; exit 5 ;; esac
case "$1" in
  print)
    if [ -e "$FAKE_STATE/loaded" ]; then
      printf '%s = {\\n\\tstate = running\\n\\tpid = 4242\\n' "$2"
      printf '\\tlast exit code = (never exited)\\n'
      printf '\\tendpoints = {\\n\\t\\tstate = active\\n\\t}\\n}\\n'
    else
      echo "Could not find service \\"ai.sinain.relay\\" in domain" >&2; exit 113
    fi ;;
  bootstrap) touch "$FAKE_STATE/loaded" ;;
  bootout) if [ -e "$FAKE_STATE/loaded" ]; then rm "$FAKE_STATE/loaded"; else exit 3; fi ;;
esac
exit 0
"""
"""``launchctl``: ``bootstrap`` loads (and runs) the agent, ``bootout`` unloads it, ``print``
describes it as launchctl does, or fails when it is not loaded."""


@dataclass(frozen=True)
class ServiceHome:
    home: Path
    config_home: Path
    calls_file: Path

    @property
    def calls(self) -> list[str]:
        """Each command line the stand-in managers were given, in order."""
        if not self.calls_file.exists():
            return []
        return self.calls_file.read_text().splitlines()

    @property
    def key_file(self) -> Path:
        return self.config_home / "sinain-relay" / "env"

    @property
    def unit(self) -> Path:
        return self.config_home / "systemd" / "user" / "sinain-relay.service"

    @property
    def plist(self) -> Path:
        return self.home / "Library" / "LaunchAgents" / "ai.sinain.relay.plist"


def service_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ServiceHome:
    """Point this process's environment at a home in ``tmp_path`` with the stand-ins."""
    home, config_home, tools, state = (tmp_path / n for n in ("home", "config", "bin", "state"))
    for folder in (home, tools, state):
        folder.mkdir()
    for name, script in (("systemctl", SYSTEMCTL), ("launchctl", LAUNCHCTL)):
        (tools / name).write_text(script)
        (tools / name).chmod(0o755)
    for option in OPTIONS:
        monkeypatch.delenv(option.env, raising=False)
    calls = tmp_path / "calls"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))  # the data home, here
    monkeypatch.setattr(data_home, "OLD_PLACE", tmp_path / "checkout" / "data")  # not ours
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CALLS", str(calls))
    monkeypatch.setenv("FAKE_STATE", str(state))
    monkeypatch.setenv("FAKE_FAIL", "-")
    return ServiceHome(home, config_home, calls)
