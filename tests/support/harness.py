"""What the tests' process helpers and the benchmarks share: ``python run.py`` subprocesses,
bodies, logs (what they read of ``/proc`` is in :mod:`tests.support.meter`). Only 127.0.0.1
is used; every wait is bounded; a process is stopped with SIGTERM, then SIGKILL after
:data:`TERM_TIMEOUT_S`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
from aiohttp import web

from transport.agent.fake_llm import FakeLLM

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
MEMORY = ":memory:"  # --data-dir :memory:: the same SQLite files in /dev/shm, no sync
JSON_HEADERS = {"Content-Type": "application/json"}
REQUEST_TIMEOUT_S, HEALTH_TIMEOUT_S, TERM_TIMEOUT_S = 10.0, 20.0, 15.0
FEED_TEXT = (
    "[PERIODIC] status check\n"
    "[2s ago, openrouter] so the relay keeps the last messages and the agent reads them"
)
OCR_LINE = "def handle(request): return json_response({'ok': True})  # editor text\n"
OCR_BYTES = 4096
APPS = ("code", "idea", "chrome", "slack", "terminal")


def feed_body(n: int = 0) -> bytes:
    """A ``POST /feed`` body like the sinain overlay's; ``n`` above 0 numbers the text."""
    return orjson.dumps({"text": f"[{n}] {FEED_TEXT}" if n else FEED_TEXT, "priority": "normal"})


def sense_body(ocr_bytes: int = OCR_BYTES, n: int = 0, ts: int | None = None) -> bytes:
    """A ``POST /sense`` text event with ``ocr_bytes`` of code-like OCR; ``n`` varies text, app."""
    ocr = (f"# screen {n}\n" if n else "") + OCR_LINE * (ocr_bytes // len(OCR_LINE) + 1)
    ts = ts if ts is not None else int(time.time() * 1000)
    meta = {"app": APPS[n % len(APPS)], "ssim": 0.9}
    return orjson.dumps({"type": "text", "ts": ts, "ocr": ocr[:ocr_bytes], "meta": meta})


def post_body(path: str) -> bytes:
    return feed_body() if path == "/feed" else sense_body()


def drive(handler: Callable[[Any], Any], request: object) -> None:
    """Run an aiohttp handler that never awaits to its end, without an event loop."""
    try:
        handler(request).send(None)
    except StopIteration:
        return
    raise AssertionError("the handler awaited something")


# -- processes -----------------------------------------------------------------------------------


def serve_forever(
    app: web.Application,
    loop: asyncio.AbstractEventLoop,
    port: int,
    banner: str,
    *,
    backlog: int = 128,
    shutdown_timeout_s: float = 60.0,
) -> int:
    """Serve ``app`` on ``HOST:port`` from ``loop`` until SIGINT or SIGTERM; ``banner`` is
    printed once it listens (a script's caller waits for it). The exit code (0)."""
    asyncio.set_event_loop(loop)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=shutdown_timeout_s)
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.TCPSite(runner, HOST, port, backlog=backlog).start())
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, loop.stop)
    print(banner, flush=True)
    try:
        loop.run_forever()
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):  # a second signal must not cut cleanup
            loop.remove_signal_handler(signum)
        loop.run_until_complete(runner.cleanup())
        loop.close()
    return 0


def free_port() -> int:
    """A TCP port that was free on loopback a moment ago."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def log_tail(path: Path | None, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path else ""
    except OSError:
        return "(no log)"


def wait_answering(
    url: str,
    proc: subprocess.Popen[bytes],
    what: str = "relay",
    log_path: Path | None = None,
    timeout_s: float = HEALTH_TIMEOUT_S,
) -> None:
    """Poll ``GET url`` every 50 ms until it answers 200; RuntimeError if the process exits or
    ``timeout_s`` goes by."""
    deadline, last = time.monotonic() + timeout_s, "no answer yet"
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if (status := client.get(url).status_code) == 200:
                    return
                last = f"HTTP {status}"
            except httpx.HTTPError as exc:
                last = type(exc).__name__
            time.sleep(0.05)
    if proc.poll() is not None:
        raise RuntimeError(f"{what} exited with code {proc.returncode}:\n{log_tail(log_path)}")
    msg = f"{what} not answering {url} after {timeout_s:g} s ({last}):\n{log_tail(log_path)}"
    raise RuntimeError(msg)


def _terminate(proc: subprocess.Popen[bytes], name: str) -> tuple[float, int | None]:
    """SIGTERM; the seconds until the process exited (a thread blocks in ``waitpid``, so the
    time is exact) and its exit code (``None``: killed after :data:`TERM_TIMEOUT_S`)."""
    exited: list[float] = []

    def wait() -> None:
        proc.wait()
        exited.append(time.monotonic())

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    waiter.join(timeout=TERM_TIMEOUT_S)
    if exited:
        return exited[0] - started, proc.returncode
    print(f"  [{name}] did not exit {TERM_TIMEOUT_S:g} s after SIGTERM; sending SIGKILL")
    proc.kill()
    proc.wait(timeout=TERM_TIMEOUT_S)
    return TERM_TIMEOUT_S, None


@dataclass(slots=True)
class Server:
    """A server subprocess (a relay, the bare app, the fake LLM), where it listens, how long it
    took from spawn to its first 200, and whether :func:`timed_stop` stopped it already."""

    proc: subprocess.Popen[bytes]
    base_url: str
    log_path: Path
    ready_s: float = float("nan")
    stopped: bool = False

    @property
    def pid(self) -> int:
        return self.proc.pid


def timed_stop(server: Server) -> tuple[float, int | None]:
    """SIGTERM; seconds until the process exited, and its exit code (``None``: killed)."""
    server.stopped = True
    return _terminate(server.proc, "relay")


def with_open_files(nofile: int | None, command: list[str]) -> list[str]:
    """``command`` run with at most ``nofile`` open files (``ulimit -S -n`` through ``sh``,
    which then becomes the command: the same process); as it is for ``None``."""
    if nofile is None:
        return command
    return ["/bin/sh", "-c", f'ulimit -S -n {int(nofile)} && exec "$@"', "sh", *command]


@contextlib.contextmanager
def server_process(
    args: Sequence[str],
    log_path: Path,
    *,
    env: dict[str, str] | None = None,
    name: str = "relay",
    ready_path: str = "/health",
    cwd: Path = ROOT,
    nofile: int | None = None,
) -> Iterator[Server]:
    """``python <args> --port <free port>`` (at most ``nofile`` open files if set), its output
    appended to ``log_path``; yields once ``GET <ready_path>`` answers 200, stops it on exit."""
    port, spawned = free_port(), time.monotonic()
    with log_path.open("ab") as log:
        command = with_open_files(nofile, [sys.executable, *args, "--port", str(port)])
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    server = Server(proc, f"http://{HOST}:{port}", log_path)
    try:
        wait_answering(server.base_url + ready_path, proc, name, log_path)
        server.ready_s = time.monotonic() - spawned
        yield server
    finally:
        if server.stopped:
            pass
        elif proc.poll() is not None:
            print(f"  [{name}] had already exited with code {proc.returncode}")
        else:
            took, code = _terminate(proc, name)
            print(f"  [{name}] exited with code {code} {took:.2f} s after SIGTERM")


def relay_env(**settings: str) -> dict[str, str]:
    """This environment without the relay's own settings (``RELAY_``, ``AGENT_``, ``LOG_``,
    ``OPENROUTER_``, ``ESCALATION_``), plus ``settings``. The agent asks a server
    (``AGENT_API=openai``) unless ``settings`` say otherwise: where the ``local-llm`` extra is
    installed, a relay with no key would otherwise load a model of its own at its first tick."""
    prefixes = ("RELAY_", "AGENT_", "LOG_", "OPENROUTER_", "ESCALATION_")
    kept = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    return kept | {"AGENT_API": "openai"} | settings


def agent_env(llm_url: str, sync: str = "full", **extra: str) -> dict[str, str]:
    """A relay pointed at a fake LLM, ticking every second (a tick times out after 5 s)."""
    agent = {"AGENT_BASE_URL": llm_url, "AGENT_INTERVAL_MS": "1000", "AGENT_TIMEOUT_MS": "5000"}
    return relay_env(OPENROUTER_API_KEY="bench-key", RELAY_SYNC=sync, **agent, **extra)


@contextlib.contextmanager
def relay_process(
    data_dir: str,
    log_path: Path,
    env: dict[str, str],
    log_level: str | None = "warning",
    cwd: Path = ROOT,
    nofile: int | None = None,
) -> Iterator[Server]:
    """``python run.py --data-dir <data_dir> [--log-level <log_level>] --port <free port>``,
    ``run.py`` that of the checkout at ``cwd``, with at most ``nofile`` open files if set."""
    args = ["run.py", "--data-dir", data_dir] + (["--log-level", log_level] if log_level else [])
    with server_process(args, log_path, env=env, cwd=cwd, nofile=nofile) as server:
        yield server


@contextlib.contextmanager
def fake_llm_process(log_path: Path) -> Iterator[Server]:
    """``python -m transport.agent.fake_llm`` on a free port (its API is ``base_url + "/v1"``)."""
    args = ["-m", "transport.agent.fake_llm"]
    with server_process(args, log_path, name="the fake LLM", ready_path="/_mode") as server:
        yield server


# -- data directories, logs, /health, arguments --------------------------------------------------


@contextlib.contextmanager
def data_directory(path: str | None = None, prefix: str = "relay-bench-") -> Iterator[str]:
    """``path`` itself, or a fresh temporary directory removed on exit."""
    if path is not None:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield tmp


def filesystem(path: str) -> str:
    """The type and mount point of the filesystem holding ``path`` (fsync costs depend on it)."""
    best, real = ("?", ""), os.path.realpath(path)
    for fields in (line.split() for line in Path("/proc/mounts").read_text().splitlines()):
        point = fields[1] if len(fields) > 2 else ""
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if point and inside and len(point) >= len(best[1]):
            best = (fields[2], point)
    return f"{best[0]} on {best[1]}"


def where(data_dir: str, sync: str = "full") -> str:
    """How a relay keeps its state, for a scenario's header."""
    if data_dir == MEMORY:
        return "data dir :memory: (/dev/shm, no sync)"
    return f"data dir {data_dir} ({filesystem(data_dir)}), RELAY_SYNC={sync}"


@contextlib.contextmanager
def agent_setup(
    name: str, data_dir: str | None = None, mode: str = "ok", delay_s: float = 1.0
) -> Iterator[tuple[FakeLLM, str, Path]]:
    """A fake LLM on a thread, a data directory and a log file (summarised on exit)."""
    with (
        data_directory(data_dir, f"relay-bench-{name}-") as path,
        log_file(name) as log_path,
        FakeLLM(mode=mode, delay_s=delay_s) as llm,
    ):
        yield llm, path, log_path


@contextlib.contextmanager
def log_file(name: str, label: str = "relay log (level warning)") -> Iterator[Path]:
    """A temporary log file; a summary of it is printed on exit."""
    with tempfile.TemporaryDirectory(prefix=f"relay-{name}-") as tmp:
        path = Path(tmp) / f"{name}.log"
        path.touch()
        try:
            yield path
        finally:
            print_log_summary(path.read_text(errors="replace").splitlines(), label)


_URN = re.compile(r"\(urn:uuid:[0-9a-f-]+\)")


def summarize_log(
    lines: Sequence[str], limit: int = 8, *, above_info: bool = False, first_lines: bool = True
) -> list[str]:
    """Counts of a relay's log events (``level event``), each with its first line (truncated);
    ``above_info``: warnings and worse only."""
    events: Counter[str] = Counter()
    first: dict[str, str] = {}
    for line in lines:
        try:
            record = orjson.loads(line)
            level = record.get("level")
            key = f"{level} {_URN.sub('(urn)', str(record.get('event')))}"
        except (orjson.JSONDecodeError, AttributeError):
            level, key = None, line[:80]
        if not (above_info and level in ("debug", "info")):
            events[key] += 1
            first.setdefault(key, line)
    out: list[str] = []
    for key, n in events.most_common(limit):
        out += [f"{n:6d} x {key}"] + (
            [f"         first: {first[key][:400]}"] if first_lines else []
        )
    return out


def print_log_summary(lines: Sequence[str], label: str, limit: int = 8, **options: bool) -> None:
    below = " (warnings and worse below)" if options.get("above_info") else ""
    print(f"  {label}: {len(lines)} lines{below}")
    for line in summarize_log(lines, limit, **options):
        print(f"    {line}")


def post_many(server: Server, feed_posts: int, sense_posts: int) -> None:
    """``feed_posts`` ``POST /feed`` and ``sense_posts`` ``POST /sense`` (4 KiB OCR), in turn."""
    with httpx.Client(timeout=REQUEST_TIMEOUT_S, headers=JSON_HEADERS) as client:
        for path, count in (("/feed", feed_posts), ("/sense", sense_posts)):
            for _ in range(count):
                client.post(server.base_url + path, content=post_body(path)).raise_for_status()


def health(server: Server) -> tuple[int, dict[str, Any]]:
    """``GET /health``: status and body (status 0 when it did not answer)."""
    try:
        resp = httpx.get(server.base_url + "/health", timeout=5.0)
        return resp.status_code, resp.json()
    except (httpx.HTTPError, ValueError) as exc:
        return 0, {"error": repr(exc)}


def print_health(server: Server, prefix: str = "") -> None:
    """The relay's ``/health.agent`` and the actors that restarted."""
    status, body = health(server)
    print(f"  {prefix}GET /health -> {status}: agent={body.get('agent')}")
    actors: dict[str, Any] = body.get("actors") or {}
    restarts = {n: a["restarts"] for n, a in actors.items() if a.get("restarts")}
    print(f"  {prefix}actor restarts: {restarts or 'none'}")


def parser(doc: str | None, **options: tuple[type, Any, str]) -> argparse.ArgumentParser:
    """The command line of a test script (the benchmarks have theirs in ``bench.runner``): a
    parser described by the first line of ``doc``; each option ``name=(type, default,
    help)`` is ``--name`` (dashes for underscores; ``bool``: a flag; default ``...``: required),
    or a positional argument for a name that starts with ``_``."""
    made = argparse.ArgumentParser(description=(doc or "").split("\n", 1)[0])
    for name, (kind, default, text) in options.items():
        flag = "--" + name.replace("_", "-")
        if name.startswith("_"):
            made.add_argument(name[1:], type=kind, help=text)
        elif kind is bool:
            made.add_argument(flag, action="store_true", help=text)
        else:
            made.add_argument(flag, type=kind, default=default, required=default is ..., help=text)
    return made


def python_at_top(*args: str, timeout_s: float = 60.0) -> subprocess.CompletedProcess[str]:
    """``python <args>`` (this interpreter) from the repository's top; its exit code and
    output, captured."""
    command = [sys.executable, *args]
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s, check=False
    )


def bench_case(*args: str, timeout_s: float = 60.0) -> subprocess.CompletedProcess[str]:
    """``python -m bench <args>`` from the repository's top: how a test runs a benchmark case
    (tests never import ``bench``); its exit code and output, captured."""
    return python_at_top("-m", "bench", *args, timeout_s=timeout_s)
