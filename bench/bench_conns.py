"""Whether idle connections can lock new clients out of the relay, under ``ulimit -n 256``.

Run from the repository root::

    python -m bench.bench_conns                       # 240 idle connections, 256 open files
    python -m bench.bench_conns --idle 400 --seconds 20
    python -m bench.bench_conns --checkout /tmp/relay-before   # another checkout's run.py
    python -m bench.bench_conns --base-url http://127.0.0.1:18791   # a relay already running

For each scenario a relay starts with at most ``--nofile`` open files (a Mac's default is
256), real SQLite files and its default connection settings; then ``--idle`` connections are
opened to it and left alone:

``silent``  connect and send nothing;
``half``    send half a request head (the request line and part of a header), then nothing;
``kept``    send one whole request, read its answer, and keep the connection open.

While they stay open, a new client connects every 0.25 s for ``--seconds`` and asks
``GET /health``. The table shows how many of these new clients were answered 200, how many
were refused with 503 (the relay at its connection cap) and how many got nothing (connection
refused, reset, or no answer in 1 s); when the first was answered; how many of the idle
connections the relay had closed by the end, and after how long the last of those went; and
the relay's open files at most (``/proc``, when it runs here). Then the idle connections are
closed and one more client must be answered. It asserts nothing: it prints figures.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bench.harness import HOST, ROOT, relay_env, relay_process, summarize_log

SCENARIOS = ("silent", "half", "kept")
PROBE_EVERY_S = 0.25
PROBE_TIMEOUT_S = 1.0
HALF_HEAD = b"GET /health HTTP/1.1\r\nHost: relay\r\nUser-Agent: bench-"
WHOLE_REQUEST = b"GET /health HTTP/1.1\r\nHost: relay\r\n\r\n"
PROBE_REQUEST = b"GET /health HTTP/1.1\r\nHost: relay\r\nConnection: close\r\n\r\n"


@dataclass(slots=True)
class Outcome:
    """What one scenario measured."""

    scenario: str
    opened: int = 0
    answered: int = 0
    refused: int = 0
    failed: int = 0
    first_answer_s: float | None = None
    closed: int = 0
    last_closed_s: float | None = None
    peak_fds: int | None = None
    after: str = ""
    """The answer to one more client once the idle connections are gone."""
    statuses: list[str] = field(default_factory=list)


def probe(host: str, port: int) -> str:
    """One new client's ``GET /health``: ``"200"``, ``"503"`` ..., or why it got nothing."""
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S) as conn:
            conn.sendall(PROBE_REQUEST)
            data = b""
            while b"\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return "closed" if not data else "short"
                data += chunk
    except TimeoutError:
        return "timeout"
    except OSError as exc:
        return type(exc).__name__
    parts = data.split(b" ", 2)
    return parts[1].decode() if len(parts) > 1 else "garbage"


def open_idle(host: str, port: int, count: int, scenario: str) -> list[socket.socket]:
    """``count`` connections left as ``scenario`` says (those the system refuses are left out)."""
    conns: list[socket.socket] = []
    for _ in range(count):
        try:
            conn = socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S)
        except OSError:
            continue
        conns.append(conn)
        try:
            if scenario == "half":
                conn.sendall(HALF_HEAD)
            elif scenario == "kept":
                conn.sendall(WHOLE_REQUEST)
                _read_answer(conn)
        except OSError:
            continue
    for conn in conns:
        conn.setblocking(False)
    return conns


def _read_answer(conn: socket.socket) -> None:
    """Read one answer's head and body (``Content-Length``), or give up at the timeout."""
    data = b""
    with contextlib.suppress(OSError):
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(4096)
            if not chunk:
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(body) < length:
            chunk = conn.recv(4096)
            if not chunk:
                return
            body += chunk


def newly_closed(conns: list[socket.socket], closed: set[int]) -> list[int]:
    """Indexes of idle connections the relay closed (or answered) since the last look."""
    readable, _, _ = select.select([c for i, c in enumerate(conns) if i not in closed], [], [], 0)
    found = []
    for conn in readable:
        index = conns.index(conn)
        with contextlib.suppress(BlockingIOError):
            try:
                data = conn.recv(65536)
            except OSError:
                data = b""
            if not data or b"Connection: close" in data:
                found.append(index)
    return found


def open_files(pid: int | None) -> int | None:
    if pid is None:
        return None
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def run_scenario(
    scenario: str, host: str, port: int, pid: int | None, idle: int, seconds: float
) -> Outcome:
    outcome = Outcome(scenario)
    started = time.monotonic()
    conns = open_idle(host, port, idle, scenario)
    outcome.opened = len(conns)
    closed: set[int] = set()
    peak = open_files(pid)
    try:
        while time.monotonic() - started < seconds:
            tick = time.monotonic()
            status = probe(host, port)
            outcome.statuses.append(status)
            if status == "200":
                outcome.answered += 1
                if outcome.first_answer_s is None:
                    outcome.first_answer_s = time.monotonic() - started
            elif status == "503":
                outcome.refused += 1
            else:
                outcome.failed += 1
            found = newly_closed(conns, closed)
            if found:
                closed.update(found)
                outcome.last_closed_s = time.monotonic() - started
            fds = open_files(pid)
            if fds is not None:
                peak = max(peak or 0, fds)
            time.sleep(max(0.0, PROBE_EVERY_S - (time.monotonic() - tick)))
    finally:
        outcome.closed = len(closed)
        outcome.peak_fds = peak
        for conn in conns:
            conn.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        outcome.after = probe(host, port)
        if outcome.after == "200":
            break
        time.sleep(0.1)
    return outcome


@contextlib.contextmanager
def relay(args: argparse.Namespace, log: list[str]) -> Iterator[tuple[str, int, int | None]]:
    """Where the relay of one scenario listens, and its pid (``None``: not ours); a summary
    of its log is added to ``log`` once it stopped."""
    if args.base_url:
        hostport = args.base_url.split("://", 1)[-1].rstrip("/")
        host, _, port = hostport.rpartition(":")
        yield host, int(port), None
        return
    root = Path(args.checkout).resolve() if args.checkout else ROOT
    with tempfile.TemporaryDirectory(prefix="relay-conns-") as tmp:
        log_path = Path(tmp) / "relay.log"
        env = relay_env()
        with relay_process(
            str(Path(tmp) / "data"), log_path, env, cwd=root, nofile=args.nofile
        ) as server:
            host, port = server.base_url.split("://", 1)[1].rsplit(":", 1)
            yield host, int(port), server.pid
        log += summarize_log(log_path.read_text(errors="replace").splitlines(), first_lines=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=int, default=240, help="idle connections (default 240)")
    parser.add_argument("--nofile", type=int, default=256, help="the relay's ulimit -n")
    parser.add_argument("--seconds", type=float, default=15.0, help="probing per scenario")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated")
    parser.add_argument("--checkout", help="run run.py of this checkout (default: this one)")
    parser.add_argument("--base-url", help="a relay already running (no ulimit, no /proc)")
    args = parser.parse_args(argv)
    scenarios = [s for s in args.scenarios.split(",") if s]
    where = args.base_url or f"run.py of {args.checkout or ROOT}, ulimit -n {args.nofile}"
    print(
        f"== {args.idle} idle connections, a new client every {PROBE_EVERY_S:g} s for "
        f"{args.seconds:g} s ({where}, on {HOST})"
    )
    print(
        f"{'scenario':<8} {'idle':>5} {'200':>4} {'503':>4} {'none':>5} {'1st 200 s':>9} "
        f"{'closed':>6} {'last closed s':>13} {'fds max':>7}  after"
    )
    logs: dict[str, list[str]] = {}
    for scenario in scenarios:
        log = logs[scenario] = []
        with relay(args, log) as (host, port, pid):
            o = run_scenario(scenario, host, port, pid, args.idle, args.seconds)
        first = "-" if o.first_answer_s is None else f"{o.first_answer_s:.2f}"
        last = "-" if o.last_closed_s is None else f"{o.last_closed_s:.2f}"
        fds = "-" if o.peak_fds is None else str(o.peak_fds)
        print(
            f"{scenario:<8} {o.opened:>5} {o.answered:>4} {o.refused:>4} {o.failed:>5} "
            f"{first:>9} {o.closed:>6} {last:>13} {fds:>7}  {o.after}"
        )
        others = sorted({s for s in o.statuses if s not in ("200", "503")})
        if others:
            print(f"    no answer: {', '.join(others)}")
    for scenario, lines in logs.items():
        if lines:
            print(f"  {scenario}: the relay's log (level warning), events by count")
            for line in lines:
                print(f"    {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
