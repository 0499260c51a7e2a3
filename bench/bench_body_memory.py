"""What request bodies never finished cost the relay's memory: clients that each send 95 % of a
large ``POST /sense`` body (``--sent``) and wait, while a new client posts; see
docs/benchmarks.md."""

from __future__ import annotations

import argparse
import contextlib
import socket
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

from bench.runner import flags
from tests.support.harness import HOST, ROOT, relay_env, relay_process
from tests.support.meter import rss_mb

CHUNK = 64 * 1024


def _hold_body(
    port: int, size: int, share: float, answers: Counter[str], held: list[socket.socket]
) -> None:
    """One client: a head, ``share`` of a ``size``-byte body, then nothing (the socket is kept
    in ``held``); what the relay answered meanwhile, if anything, is counted in ``answers``."""
    held.append(conn := socket.create_connection((HOST, port), timeout=10))
    head = (
        f"POST /sense HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {size}\r\n\r\n"
    ).encode()
    data = head + b'{"type": "text", "ts": 1, "ocr": "' + b"x" * size
    try:
        sent, goal = 0, len(head) + int(size * share)
        while sent < goal:
            sent += conn.send(data[sent : min(goal, sent + CHUNK)])
    except OSError:
        answers["closed while sending"] += 1
        return
    conn.settimeout(0.5)
    try:
        answer = conn.recv(4096)
    except TimeoutError:
        answers["no answer (held)"] += 1
        return
    except OSError:
        answer = b""
    status = answer.split(b" ", 2)[1].decode() if answer.count(b" ") >= 2 else "closed"
    answers[status] += 1


def measure(checkout: Path, connections: int, size: int, share: float) -> str:
    """One checkout's row."""
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="relay-bodies-")))
        relay = relay_process(":memory:", tmp / "relay.log", relay_env(), cwd=checkout)
        server = stack.enter_context(relay)
        port = int(server.base_url.rsplit(":", 1)[1])
        time.sleep(1)
        before = rss_mb(server.pid)
        answers, held = Counter[str](), list[socket.socket]()
        clients = [
            threading.Thread(target=_hold_body, args=(port, size, share, answers, held))
            for _ in range(connections)
        ]
        for client in clients:
            client.start()
        for client in clients:
            client.join(timeout=120)
        peak = before
        for _ in range(10):
            peak = max(peak, rss_mb(server.pid))
            time.sleep(0.1)
        try:
            posted = httpx.post(server.base_url + "/feed", json={"text": "hi"}, timeout=5)
            meanwhile = str(posted.status_code)
        except httpx.HTTPError as exc:
            meanwhile = type(exc).__name__
        for conn in held:
            conn.close()
    got = ", ".join(f"{status}: {n}" for status, n in sorted(answers.items()))
    return f"{before:9.1f} {peak:9.1f} {peak - before:9.1f}  {meanwhile:>6}  {got}  ({checkout})"


OPTIONS = flags(
    connections=(int, 64, "clients, each holding one body"),
    mib=(float, 2.0, "each body's Content-Length, in MiB"),
    sent=(float, 0.95, "the share of each body sent before the client waits (0: the head)"),
    before=(Path, None, "another checkout, measured first"),
)


def run(args: argparse.Namespace) -> int:
    size = int(args.mib * 1024 * 1024)
    print(f"== {args.connections} clients, each {args.sent:.0%} of a {args.mib:g} MiB /sense body")
    print(f"{'RSS MB':>9} {'held MB':>9} {'grew MB':>9}  {'/feed':>6}  answers to the clients")
    for checkout in [args.before, ROOT] if args.before else [ROOT]:
        print(measure(checkout, args.connections, size, args.sent), flush=True)
    return 0
