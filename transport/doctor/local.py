"""The doctor's checks of the relay's own: the port and the data directory. Nothing is
changed: a directory is not created, a port is bound only for a moment.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from actors.common.check import Check
from actors.common.http_library import httpx
from actors.kernel.file_modes import PRIVATE_DIR, inspect, open_to_others
from config.data_home import data_dir
from config.settings import Settings
from transport.http_transport import CannotServe, check_port

HEALTH_TIMEOUT_S = 2.0
"""How long the port check waits for a relay already there to answer ``GET /health``."""
MEMORY = ":memory:"


def port_check(settings: Settings) -> Check:
    """Whether ``RELAY_HOST:RELAY_PORT`` can be bound; if not, whether a relay answers there."""
    host, port = settings.host, settings.port
    if port == 0:
        return Check("port", "ok", "RELAY_PORT=0: any free port")
    try:
        check_port(host, port)
    except CannotServe as exc:
        url = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
        if _relay_answers(f"{url}/health"):
            return Check(
                "port",
                "warn",
                f"a relay already answers at {url}",
                "stop it before starting another, or choose another RELAY_PORT (--port)",
            )
        return Check("port", "FAIL", str(exc), "choose another RELAY_PORT (--port) or RELAY_HOST")
    return Check("port", "ok", f"{host}:{port} is free")


def _relay_answers(url: str) -> bool:
    try:
        answer = httpx.get(url, timeout=HEALTH_TIMEOUT_S)
    except httpx.HTTPError:
        return False
    return answer.status_code in (200, 401) and answer.headers.get("content-type", "").startswith(
        "application/json"
    )


def data_dir_check(settings: Settings) -> Check:
    """Whether the data directory exists (or can be created), is writable and is ``0700``."""
    if settings.data_dir == MEMORY:
        return Check("data directory", "skip", "RELAY_DATA_DIR=:memory: keeps nothing on disk")
    directory = Path(data_dir(settings.data_dir)).expanduser()  # none given: the data home
    quoted = shlex.quote(str(directory))
    if not directory.exists():
        parent = next((p for p in directory.parents if p.exists()), None)
        if parent is None or not os.access(parent, os.W_OK | os.X_OK):
            return Check(
                "data directory",
                "FAIL",
                f"{directory} does not exist and cannot be created here",
                f"check RELAY_DATA_DIR, or mkdir -m 700 {quoted}",
            )
        return Check(
            "data directory",
            "ok",
            f"{directory} does not exist yet; the relay creates it {PRIVATE_DIR:04o}",
        )
    if not directory.is_dir():
        return Check(
            "data directory", "FAIL", f"{directory} is not a directory", "check RELAY_DATA_DIR"
        )
    if not os.access(directory, os.W_OK | os.X_OK):
        return Check(
            "data directory",
            "FAIL",
            f"{directory} is not writable",
            f"check RELAY_DATA_DIR, or chmod 700 {quoted} as its owner",
        )
    entry = inspect(directory)
    if open_to_others(entry):
        return Check(
            "data directory",
            "warn",
            f"{directory} is mode {entry.octal}: other users may open it",
            f"chmod 700 {quoted}",
        )
    return Check("data directory", "ok", f"{directory} is writable, mode {entry.octal}")
