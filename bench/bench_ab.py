"""A/B of the ingest path: two checkouts of the relay served at once, measured in turns.

Run from the repository root, with the other checkout made by ``git worktree``::

    git worktree add /tmp/relay-before <commit>
    python -m bench.bench_ab /tmp/relay-before .          # 5 rounds of 2 s per row
    python -m bench.bench_ab /tmp/relay-before . --rounds 9 --seconds 3

Both relays run as ``python run.py`` subprocesses of their own checkout, on free loopback
ports, with ``--data-dir :memory:`` (no fsync: what is compared is the code, not the disk)
and no LLM key. ``wrk`` (``apt-get install wrk``) drives ``POST /feed`` and ``POST /sense``
(4 KiB of code-like OCR), the bodies of the ingest bench, at 16 and 64 connections. Within
each row the two relays take turns, the first of a round alternating, so that what the
shared machine does meanwhile falls on both alike. It prints, per row, the median requests
per second and p99 of each checkout, and the ratio after/before of the medians. It asserts
nothing.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

from bench.bench_ingest import feed_body, sense_body
from bench.wrk import run_wrk

START_TIMEOUT_S = 30.0
ROWS = [
    (path, body, conns)
    for path, body in (("/feed", feed_body()), ("/sense", sense_body()))
    for conns in (16, 64)
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _start(root: Path, port: int) -> subprocess.Popen[bytes]:
    """``python run.py`` of the checkout at ``root``, once its ``/health`` answers."""
    env = {**os.environ, "PYTHONPATH": str(root), "LOG_LEVEL": "warning"}
    env.pop("OPENROUTER_API_KEY", None)
    proc = subprocess.Popen(
        [sys.executable, "run.py", "--port", str(port), "--data-dir", ":memory:"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
        except httpx.HTTPError:
            time.sleep(0.1)
            continue
        return proc
    proc.kill()
    msg = f"the relay of {root} did not answer /health within {START_TIMEOUT_S} s"
    raise SystemExit(msg)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="the checkout measured as 'before'")
    parser.add_argument("after", type=Path, help="the checkout measured as 'after'")
    parser.add_argument("--rounds", type=int, default=5, help="turns of each relay per row")
    parser.add_argument("--seconds", type=int, default=2, help="wrk's window per turn")
    args = parser.parse_args(argv)
    roots = {"before": args.before.resolve(), "after": args.after.resolve()}
    ports = {name: _free_port() for name in roots}
    procs = {name: _start(root, ports[name]) for name, root in roots.items()}
    try:
        header = ("row", "before req/s", "p99 ms", "after req/s", "p99 ms")
        print("{:14} {:>12} {:>7} {:>12} {:>7}  ratio".format(*header))
        for path, body, conns in ROWS:
            rates: dict[str, list[float]] = {"before": [], "after": []}
            p99s: dict[str, list[float]] = {"before": [], "after": []}
            for turn in range(args.rounds):
                for name in ("before", "after") if turn % 2 == 0 else ("after", "before"):
                    url = f"http://127.0.0.1:{ports[name]}{path}"
                    result = run_wrk(
                        url, conns=conns, seconds=args.seconds, method="POST", body=body
                    )
                    rates[name].append(result.requests / result.seconds)
                    p99s[name].append(result.p99_ms)
            before, after = (statistics.median(rates[n]) for n in ("before", "after"))
            p99_before, p99_after = (statistics.median(p99s[n]) for n in ("before", "after"))
            row = f"{path} @{conns}"
            print(
                f"{row:14} {before:12.0f} {p99_before:7.2f} {after:12.0f} {p99_after:7.2f}"
                f"  {after / before:.3f}"
            )
    finally:
        for proc in procs.values():
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
