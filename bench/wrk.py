"""A load generator for the benches that does not cap the server: ``wrk``, driven from Python.

The benches' own Python generator (``bench_ingest.py``'s workers) spends about as much CPU per
request as the server it drives, so against a fast server it measures itself: the bare
aiohttp app answered some 16k ``POST /feed`` per second to it and 35k to ``wrk``. ``wrk`` is
C (epoll, one thread here) and needs a few microseconds per request. Install it with
``apt-get install wrk`` (Debian's package, version 4.1).

:func:`run_wrk` writes a small Lua script (method, headers, a body read from a file, and a
``done`` hook that prints the counts and latency percentiles as one JSON line), runs ``wrk``
with it and returns a :class:`WrkResult`. It asserts nothing about speed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

WRK = "wrk"
"""The executable, looked up on ``PATH``."""
INSTALL_HINT = "wrk is not installed: apt-get install wrk (Debian's package)"

_LUA = """
wrk.method = {method}
wrk.headers["Content-Type"] = "application/json"
{body}
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "\\nWRK-JSON {{\\"requests\\": %d, \\"duration_us\\": %d, \\"p50_us\\": %d, "
    .. "\\"p99_us\\": %d, \\"max_us\\": %d, \\"non2xx\\": %d, \\"connect\\": %d, "
    .. "\\"read\\": %d, \\"write\\": %d, \\"timeout\\": %d}}\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.max, e.status, e.connect, e.read, e.write, e.timeout))
end
"""
_BODY = """
local f = assert(io.open({path}, "rb"))
wrk.body = f:read("*a")
f:close()
"""


@dataclass(frozen=True, slots=True)
class WrkResult:
    """What one ``wrk`` run measured."""

    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    errors: dict[str, int]
    """Non-2xx answers (``status``) and socket errors by kind; zero counts left out."""

    @property
    def rps(self) -> float:
        """Completed requests per second (errors included, as wrk counts them)."""
        return self.requests / self.seconds if self.seconds else 0.0


def available() -> bool:
    """Whether ``wrk`` is on ``PATH``."""
    return shutil.which(WRK) is not None


def _lua_string(text: str) -> str:
    return json.dumps(text)  # a JSON string of ASCII is a valid Lua string literal


def run_wrk(
    url: str,
    *,
    conns: int,
    seconds: float,
    method: str = "GET",
    body: bytes | None = None,
    cpu: int | None = None,
) -> WrkResult:
    """Drive ``url`` with ``conns`` keep-alive connections for ``seconds`` (one wrk thread).

    ``cpu`` pins wrk to that CPU (``taskset``) when given.

    Raises:
        RuntimeError: wrk is missing, failed, or printed no result.
    """
    if not available():
        raise RuntimeError(INSTALL_HINT)
    with tempfile.TemporaryDirectory(prefix="relay-wrk-") as tmp:
        script = Path(tmp) / "load.lua"
        body_lua = ""
        if body is not None:
            body_path = Path(tmp) / "body"
            body_path.write_bytes(body)
            body_lua = _BODY.format(path=_lua_string(str(body_path)))
        script.write_text(_LUA.format(method=_lua_string(method), body=body_lua))
        command = [WRK, "-t1", f"-c{conns}", f"-d{max(1, round(seconds))}s", "-s", str(script)]
        command += ["--timeout", "10s", url]
        if cpu is not None:
            command = ["taskset", "-c", str(cpu), *command]
        done = subprocess.run(
            command, check=False, capture_output=True, text=True, timeout=seconds + 60
        )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("WRK-JSON ")]
    if done.returncode != 0 or not lines:
        msg = f"wrk failed (exit {done.returncode}): {done.stderr.strip() or done.stdout[-500:]}"
        raise RuntimeError(msg)
    raw = json.loads(lines[-1].removeprefix("WRK-JSON "))
    errors = {
        kind: int(raw[key])
        for kind, key in (
            ("status", "non2xx"),
            ("connect", "connect"),
            ("read", "read"),
            ("write", "write"),
            ("timeout", "timeout"),
        )
        if raw[key]
    }
    return WrkResult(
        requests=int(raw["requests"]),
        seconds=int(raw["duration_us"]) / 1e6,
        p50_ms=int(raw["p50_us"]) / 1000,
        p99_ms=int(raw["p99_us"]) / 1000,
        max_ms=int(raw["max_us"]) / 1000,
        errors=errors,
    )
