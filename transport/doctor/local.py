"""The doctor's checks of this machine: the port, the data directory, the capture sources and
the ``mcp`` extra. Nothing is changed: a directory is not created, a port is bound only for a
moment, a source is looked at, never captured.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
from pathlib import Path

from actors.agent.core.verdicts import Check
from actors.common.http_library import httpx
from actors.kernel.file_modes import PRIVATE_DIR, inspect, open_to_others
from config.data_home import data_dir
from config.settings import Settings
from transport.features import WAV_HEADER_READ, AudioConfig, parse_source, wav_layout
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


def source_checks(audio: AudioConfig) -> list[Check]:
    """One check a configured capture source, or one ``skip`` when none is."""
    named = [
        (name, value.strip())
        for name, value in (
            ("AUDIO_SOURCE", audio.source),
            ("MIC_SOURCE", audio.mic_source),
            ("AUDIO_ALT_SOURCE", audio.alt_source),
        )
        if value.strip()
    ]
    if not named:
        return [Check("sources", "skip", "no AUDIO_SOURCE or MIC_SOURCE: nothing is captured")]
    return [source_check(name, value) for name, value in named]


def source_check(name: str, value: str) -> Check:
    """Whether one source can be captured, as far as can be told without capturing."""
    check = f"source {name}"
    plan = parse_source(value, name)  # checked when the settings were read
    if plan.kind == "command":
        program = plan.argv[0]
        if shutil.which(program) is None:
            return Check(check, "FAIL", f"{program} is not an executable on PATH", f"check {name}")
        return Check(check, "ok", f"{value}: {program} found (its output is known when it runs)")
    if plan.kind == "file":
        return _file_check(check, name, value, Path(plan.target).expanduser())
    if shutil.which("ffmpeg") is None:
        return Check(check, "FAIL", f"{value}: ffmpeg is not on PATH", "install ffmpeg")
    return Check(check, "ok", f"{value}: ffmpeg found (the device is known when capture starts)")


def _file_check(check: str, name: str, value: str, path: Path) -> Check:
    if not path.is_file():
        return Check(check, "FAIL", f"{path} does not exist or is not a file", f"check {name}")
    try:
        with path.open("rb") as file:
            head = file.read(WAV_HEADER_READ)
    except OSError as exc:
        return Check(check, "FAIL", f"{path} cannot be read ({exc.strerror})", f"check {name}")
    if wav_layout(head) is not None:
        return Check(check, "ok", f"{value}: a 16 kHz mono WAV, read by the relay itself")
    if shutil.which("ffmpeg") is None:
        return Check(
            check,
            "FAIL",
            f"{value} is not a 16 kHz mono 16-bit WAV, and ffmpeg is not on PATH to convert it",
            "install ffmpeg, or convert the file to a 16 kHz mono WAV",
        )
    return Check(check, "ok", f"{value}: readable, converted by ffmpeg")


def mcp_check() -> Check:
    """Whether the ``mcp`` extra is installed (``sinain-relay mcp`` needs it; the relay not).

    An optional extra: without it the check is skipped, an info line at start, never a
    warning; ``sinain-relay mcp`` itself fails naming the install command."""
    if importlib.util.find_spec("mcp") is None:
        return Check(
            "mcp",
            "skip",
            "the mcp extra is not installed (optional): only sinain-relay mcp needs it",
            "pip install 'sinain-relay[mcp]'",
        )
    return Check("mcp", "ok", "the mcp extra is installed: sinain-relay mcp can run")
