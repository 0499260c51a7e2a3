"""Whether idle connections (``silent``, ``half`` a head, ``kept`` alive) can lock new clients
out of a relay under ``ulimit -n 256``; docs/benchmarks.md reads the table."""

from __future__ import annotations

import argparse
import contextlib
import http.client
import math
import os
import select
import socket
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from bench.figures import Table
from bench.runner import choose, flags
from tests.support.harness import HOST, ROOT, relay_env, relay_process, summarize_log

SCENARIOS = ("silent", "half", "kept")
PROBE_EVERY_S, PROBE_TIMEOUT_S = 0.25, 1.0
TABLE = Table(
    "scenario <8|idle >5|200 >4|503 >4|none >5|1st 200 s >9.2f|closed >6|last closed s >13.2f|"
    "fds max >7|after >6"
)


def head(host: str, port: int, close: bool = False) -> bytes:
    """A ``GET /health`` request head (the relay answers only its own ``Host``)."""
    closing = "Connection: close\r\n" if close else ""
    return f"GET /health HTTP/1.1\r\nHost: {host}:{port}\r\n{closing}\r\n".encode()


def probe(host: str, port: int) -> str:
    """One new client's ``GET /health``: ``"200"``, ``"503"`` ..., or why it got nothing."""
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S) as conn:
            conn.sendall(head(host, port, close=True))
            data = b""
            while b"\r\n" not in data:
                if not (chunk := conn.recv(4096)):
                    return "short" if data else "closed"
                data += chunk
    except TimeoutError:
        return "timeout"
    except OSError as exc:
        return type(exc).__name__
    parts = data.split(b" ", 2)
    return parts[1].decode() if len(parts) > 1 else "garbage"


def open_idle(host: str, port: int, count: int, scenario: str) -> list[socket.socket]:
    """``count`` connections left as ``scenario`` says (those the system refuses left out)."""
    conns: list[socket.socket] = []
    for _ in range(count):
        with contextlib.suppress(OSError):
            conns.append(conn := socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S))
            if scenario == "half":
                conn.sendall(head(host, port)[:-2] + b"User-Agent: bench-")
            elif scenario == "kept":
                kept = http.client.HTTPConnection(host, port)
                kept.sock = conn  # the answer read whole, the connection kept open
                kept.request("GET", "/health")
                kept.getresponse().read()
    for conn in conns:
        conn.setblocking(False)
    return conns


def newly_closed(conns: list[socket.socket], closed: set[int]) -> list[int]:
    """Indexes of idle connections the relay closed (or answered) since the last look."""
    readable, _, _ = select.select([c for i, c in enumerate(conns) if i not in closed], [], [], 0)
    found = []
    for conn in readable:
        try:
            data = conn.recv(65536)
        except OSError:  # a reset, or (BlockingIOError) nothing after all: counted as closed
            data = b""
        if not data or b"Connection: close" in data:
            found.append(conns.index(conn))
    return found


def open_files(pid: int | None) -> int | None:
    with contextlib.suppress(OSError):
        return None if pid is None else len(os.listdir(f"/proc/{pid}/fd"))
    return None


def run_scenario(
    scenario: str, host: str, port: int, pid: int | None, idle: int, seconds: float
) -> str:
    """The scenario's row of the table, and what the probes got that was not 200 or 503."""
    started = time.monotonic()
    conns = open_idle(host, port, idle, scenario)
    closed, statuses = set[int](), Counter[str]()
    first = last = math.nan
    fds = [open_files(pid)]
    try:
        while time.monotonic() - started < seconds:
            tick = time.monotonic()
            statuses[status := probe(host, port)] += 1
            if status == "200" and math.isnan(first):
                first = time.monotonic() - started
            if found := newly_closed(conns, closed):
                closed.update(found)
                last = time.monotonic() - started
            fds.append(open_files(pid))
            time.sleep(max(0.0, PROBE_EVERY_S - (time.monotonic() - tick)))
    finally:
        for conn in conns:
            conn.close()
    deadline, after = time.monotonic() + 5, ""
    while time.monotonic() < deadline and (after := probe(host, port)) != "200":
        time.sleep(0.1)
    others = sorted(s for s in statuses if s not in ("200", "503"))
    none, most = sum(statuses[s] for s in others), max(filter(None, fds), default="-")
    cells = (statuses["200"], statuses["503"], none, first, len(closed), last, most, after)
    row = TABLE.line(scenario, len(conns), *cells)
    return row + (f"\n    no answer: {', '.join(others)}" if others else "")


@contextlib.contextmanager
def relay(args, log: list[str]) -> Iterator[tuple[str, int, int | None]]:
    """Where the relay of one scenario listens and its pid (``None``: not ours); a summary of
    its log is added to ``log`` once it stopped."""
    if args.base_url:
        host, _, port = args.base_url.split("://", 1)[-1].rstrip("/").rpartition(":")
        yield host, int(port), None
        return
    root = Path(args.checkout).resolve() if args.checkout else ROOT
    with tempfile.TemporaryDirectory(prefix="relay-conns-") as tmp:
        log_path, data = Path(tmp) / "relay.log", str(Path(tmp) / "data")
        with relay_process(data, log_path, relay_env(), cwd=root, nofile=args.nofile) as server:
            yield HOST, int(server.base_url.rsplit(":", 1)[1]), server.pid
        log += summarize_log(log_path.read_text(errors="replace").splitlines(), first_lines=False)


OPTIONS = flags(
    idle=(int, 240, "idle connections (default 240)"),
    nofile=(int, 256, "the relay's ulimit -n"),
    seconds=(float, 15.0, "probing per scenario"),
    scenarios=(str, None, f"comma-separated, from {','.join(SCENARIOS)} (default all)"),
    checkout=(str, None, "run run.py of this checkout (default: this one)"),
    base_url=(str, None, "a relay already running (no ulimit, no /proc)"),
)


def run(args: argparse.Namespace) -> int:
    where = args.base_url or f"run.py of {args.checkout or ROOT}, ulimit -n {args.nofile}"
    print(
        f"== {args.idle} idle connections, a new client every {PROBE_EVERY_S:g} s for "
        f"{args.seconds:g} s ({where}, on {HOST})"
    )
    TABLE.head()
    logs: dict[str, list[str]] = {}
    for scenario in choose(args.scenarios, SCENARIOS):
        with relay(args, logs.setdefault(scenario, [])) as (host, port, pid):
            row = run_scenario(scenario, host, port, pid, args.idle, args.seconds)
        print(row)
    for scenario, lines in logs.items():
        if lines:
            print(f"  {scenario}: the relay's log (level warning), events by count")
            print("\n".join(f"    {line}" for line in lines))
    return 0
