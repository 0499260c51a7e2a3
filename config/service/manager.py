"""The service managers, asked through their own commands: ``systemctl --user`` and
``launchctl``, each run with a timeout, found on ``PATH``. What they answered is returned as
:class:`Ran` for the command to show; nothing here writes a file."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from config.service.files import LABEL, UNIT

TOOL_TIMEOUT_S = 60.0
"""The longest a ``systemctl`` or ``launchctl`` call may take (``enable --now`` waits for the
relay to start)."""
NOT_FOUND = 127
TIMED_OUT = 124


@dataclass(frozen=True, slots=True)
class Ran:
    """One command run, and what it answered."""

    argv: tuple[str, ...]
    returncode: int
    output: str
    """Its stdout then its stderr, stripped."""

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def shown(self) -> str:
        """The command as a user would type it, and its answer when it failed."""
        line = " ".join(self.argv)
        if self.ok or not self.output:
            return line
        return f"{line}  (exit {self.returncode}: {self.output})"


def run_tool(argv: Sequence[str], timeout_s: float = TOOL_TIMEOUT_S) -> Ran:
    """Run ``argv`` to its end, or for ``timeout_s`` at most; a missing program is exit 127."""
    command = tuple(argv)
    try:
        done = subprocess.run(  # noqa: S603 - our own argv, no shell
            command, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except FileNotFoundError:
        return Ran(command, NOT_FOUND, f"{command[0]} not found on PATH")
    except subprocess.TimeoutExpired:
        return Ran(command, TIMED_OUT, f"no answer within {timeout_s:g} s")
    output = "\n".join(part.strip() for part in (done.stdout, done.stderr) if part.strip())
    return Ran(command, done.returncode, output)


class ServiceManager(Protocol):
    """What ``service install``, ``uninstall`` and ``status`` ask of a platform's manager."""

    def start(self, service_file: Path, *, replaced: bool) -> list[Ran]:
        """Load the newly written ``service_file``, enable it at login and start it (restart
        it when ``replaced`` an installed one); stop at the first failure."""
        ...

    def stop(self) -> list[Ran]:
        """Stop the service and disable it (before its file is removed)."""
        ...

    def forget(self) -> list[Ran]:
        """Tell the manager the file is gone."""
        ...

    def state(self) -> tuple[bool, str]:
        """Whether the service runs, and the manager's own words for its state."""
        ...


def _until_failure(*commands: Sequence[str]) -> list[Ran]:
    done: list[Ran] = []
    for argv in commands:
        done.append(run_tool(argv))
        if not done[-1].ok:
            break
    return done


class Systemd:
    """The user's systemd instance (``systemctl --user``)."""

    def _command(self, *args: str) -> tuple[str, ...]:
        return ("systemctl", "--user", *args)

    def start(self, service_file: Path, *, replaced: bool) -> list[Ran]:  # noqa: ARG002
        commands = [self._command("daemon-reload"), self._command("enable", "--now", UNIT)]
        if replaced:  # enable --now leaves a running relay on its old unit and settings
            commands.append(self._command("restart", UNIT))
        return _until_failure(*commands)

    def stop(self) -> list[Ran]:
        return [run_tool(self._command("disable", "--now", UNIT))]

    def forget(self) -> list[Ran]:
        return [run_tool(self._command("daemon-reload"))]

    def state(self) -> tuple[bool, str]:
        ran = run_tool(self._command("is-active", UNIT))
        words = ran.output.splitlines()[-1] if ran.output else f"exit {ran.returncode}"
        return ran.ok and words == "active", words


_LAUNCHD_FIELD = re.compile(r"^\s*(state|pid|last exit code) = (.+)$", re.MULTILINE)


class Launchd:
    """The user's launchd domain (``gui/<uid>``)."""

    def __init__(self, uid: int) -> None:
        self._domain = f"gui/{uid}"
        self._target = f"{self._domain}/{LABEL}"

    def start(self, service_file: Path, *, replaced: bool) -> list[Ran]:  # noqa: ARG002
        done: list[Ran] = []
        if run_tool(("launchctl", "print", self._target)).ok:
            done.append(run_tool(("launchctl", "bootout", self._target)))  # loaded: unload first
        # enable: a `launchctl disable` from before would keep bootstrap from starting it
        return done + _until_failure(
            ("launchctl", "enable", self._target),
            ("launchctl", "bootstrap", self._domain, str(service_file)),
        )

    def stop(self) -> list[Ran]:
        return [run_tool(("launchctl", "bootout", self._target))]

    def forget(self) -> list[Ran]:
        return []

    def state(self) -> tuple[bool, str]:
        ran = run_tool(("launchctl", "print", self._target))
        if not ran.ok:
            return False, "not loaded"
        fields: dict[str, str] = {}
        for key, value in _LAUNCHD_FIELD.findall(ran.output):
            fields.setdefault(key, value)  # the service's own, before its sub-sections'
        words = ", ".join(f"{key} = {value.strip()}" for key, value in fields.items())
        return fields.get("state", "").strip() == "running", words or "loaded"
