"""Where the service's files go and what they say: the systemd user unit and the launchd
agent's property list, made from paths alone (no file is read or written here).

Neither file holds a setting's value: the relay reads its settings, keys included, from the
key file (systemd's ``EnvironmentFile=``, or ``--env-file`` for launchd, which has no such
thing). Standard output goes to the journal under systemd; launchd keeps none, so the agent
passes ``--log-file`` (:mod:`config.logs` rotates it).
"""

from __future__ import annotations

import plistlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Platform = Literal["linux", "macos"]
PLATFORMS: tuple[Platform, ...] = ("linux", "macos")
UNIT = "sinain-relay"
"""The systemd unit's name (``sinain-relay.service``)."""
LABEL = "ai.sinain.relay"
"""The launchd agent's label (``~/Library/LaunchAgents/ai.sinain.relay.plist``)."""
RESTART_S = 5
"""Seconds between a failed relay and its restart (launchd waits at least 10)."""
EXIT_INVALID = 2
"""The relay's exit code for an invalid setting: restarting would only fail again."""
STOP_TIMEOUT_S = 30
"""How long systemd waits for the relay to stop after SIGTERM before it kills it."""
SCRIPT = "sinain-relay"
"""The console script ``pip install`` puts beside the interpreter."""


@dataclass(frozen=True, slots=True)
class ServiceLayout:
    """Where one platform's service keeps its files."""

    platform: Platform
    service_file: Path
    """The systemd unit or the launchd property list."""
    key_file: Path
    """The relay's settings, keys included (mode 0600, in a 0700 directory)."""
    log_file: Path | None
    """The relay's rotated log where there is no journal (launchd); ``None`` under systemd."""
    error_file: Path | None
    """What the process writes to stderr before its log is set up (launchd only)."""
    home: Path


def service_layout(platform: Platform, home: Path, environ: Mapping[str, str]) -> ServiceLayout:
    """The files of ``platform``'s service for the user whose home is ``home``; the key file
    and the unit under ``XDG_CONFIG_HOME`` (an absolute path, else ``~/.config``)."""
    config_home = Path(environ.get("XDG_CONFIG_HOME", ""))
    if not config_home.is_absolute():  # the XDG rule: a relative value is ignored
        config_home = home / ".config"
    key_file = config_home / "sinain-relay" / "env"
    if platform == "linux":
        unit = config_home / "systemd" / "user" / f"{UNIT}.service"
        return ServiceLayout(platform, unit, key_file, None, None, home)
    logs = home / "Library" / "Logs" / "sinain-relay"
    plist = home / "Library" / "LaunchAgents" / f"{LABEL}.plist"
    return ServiceLayout(platform, plist, key_file, logs / "relay.log", logs / "stderr.log", home)


def relay_command(executable: str, run_py: str, *, script_exists: bool) -> tuple[str, ...]:
    """How the service starts the relay: the ``sinain-relay`` script beside ``executable``
    when it exists, else ``executable run.py``. ``executable`` is kept as given, not
    resolved: a virtual environment's interpreter is a link that must stay one."""
    if script_exists:
        return (str(Path(executable).parent / SCRIPT),)
    return (executable, run_py)


def systemd_unit(command: Sequence[str], key_file: Path) -> str:
    """The systemd user unit that runs ``command`` with the key file's settings."""
    return "\n".join(
        [
            "# sinain-relay as a systemd user service, written by `sinain-relay service install`.",
            "# Settings and keys live in the EnvironmentFile below (mode 0600), never here.",
            "# The log goes to the journal: journalctl --user -u sinain-relay -f",
            "[Unit]",
            "Description=sinain-relay: what the user sees and hears, as a hud line and a digest",
            "",
            "[Service]",
            "Type=exec",
            f"ExecStart={' '.join(_exec_word(w, first=n == 0) for n, w in enumerate(command))}",
            f"EnvironmentFile={_specifiers_escaped(str(key_file))}",
            "WorkingDirectory=~",
            "Restart=on-failure",
            f"RestartSec={RESTART_S}",
            f"RestartPreventExitStatus={EXIT_INVALID}",
            f"TimeoutStopSec={STOP_TIMEOUT_S}",
            f"SyslogIdentifier={UNIT}",
            "",
            "[Install]",
            "WantedBy=default.target",
            "",
        ]
    )


def _specifiers_escaped(text: str) -> str:
    """``text`` with systemd's specifier sign doubled (``%h`` would be the home)."""
    return text.replace("%", "%%")


def _exec_word(word: str, *, first: bool) -> str:
    """One word of ``ExecStart=``: ``%`` doubled, and ``$`` in an argument (the program's
    path is not expanded); quoted when it holds a space, a quote, a backslash or a ``;``."""
    word = _specifiers_escaped(word)
    if not first:
        word = word.replace("$", "$$")
    if word and not any(char.isspace() or char in "\"'\\;" for char in word):
        return word
    escaped = word.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def launchd_plist(layout: ServiceLayout, command: Sequence[str], path_variable: str) -> str:
    """The launchd agent that runs ``command`` with the key file (``--env-file``) and the
    rotated log (``--log-file``), started at login and again whenever it fails.

    ``path_variable`` is the ``PATH`` it runs with: launchd's own is ``/usr/bin:/bin:...``,
    where no capture command installed by Homebrew is found.
    """
    if layout.log_file is None or layout.error_file is None:
        raise ValueError("a launchd agent needs its log files")
    agent = {
        "Label": LABEL,
        "ProgramArguments": [
            *command,
            "--env-file",
            str(layout.key_file),
            "--log-file",
            str(layout.log_file),
        ],
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": max(RESTART_S, 10),
        "ExitTimeOut": STOP_TIMEOUT_S,
        "WorkingDirectory": str(layout.home),
        "EnvironmentVariables": {"PATH": path_variable},
        "StandardErrorPath": str(layout.error_file),
    }
    return plistlib.dumps(agent, sort_keys=False).decode()


def service_file_text(
    layout: ServiceLayout, command: Sequence[str], path_variable: str = "/usr/bin:/bin"
) -> str:
    """The unit or the property list of ``layout``'s platform."""
    if layout.platform == "linux":
        return systemd_unit(command, layout.key_file)
    return launchd_plist(layout, command, path_variable)
