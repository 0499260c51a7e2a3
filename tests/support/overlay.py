"""A stand-in for the sinain overlay: WebSockets on the relay's overlay path that drain what
the relay pushes and say they are alive, as the overlay does. The load benchmark keeps some
open while it measures; ``tests/test_overlay_stand_in.py`` checks them on a real relay.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx

from tests.support.harness import Server

OVERLAY_PONG_EVERY_S = 5.0
"""How often each bench overlay says it is alive (the relay drops one silent for 30 s)."""
OVERLAY_READ_EVERY_S = 0.01
"""How long a bench overlay lets what comes pile up between two reads (reading costs less)."""


@dataclass(slots=True)
class OverlayLoad:
    """What the bench's overlay sockets received: bytes by socket, how those that ended early
    did, and this process's CPU seconds while they were open (reading them, mostly)."""

    received: Counter[int] = field(default_factory=Counter)
    ended: list[str] = field(default_factory=list)
    cpu_s: float = 0.0


_UPGRADE = (
    "GET / HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)
_PONG, _CLOSE = b"\x81\x8f\0\0\0\0" + b'{"type":"pong"}', b"\x88\x82\0\0\0\0\x03\xe8"
"""A client's text frame ``{"type":"pong"}`` and close frame 1000 (masked by a mask of zeros)."""


def overlay_socket(server: Server) -> socket.socket:
    """A WebSocket on the relay's overlay path ``/`` (RuntimeError when refused)."""
    url = httpx.URL(server.base_url)
    sock = socket.create_connection((url.host, url.port or 80), timeout=1.0)
    sock.sendall(_UPGRADE.format(host=url.netloc.decode()).encode())
    head = b""
    while b"\r\n\r\n" not in head and (chunk := sock.recv(4096)):
        head += chunk
    if not head.startswith(b"HTTP/1.1 101"):
        sock.close()
        raise RuntimeError(f"overlay socket refused: {head[:500]!r}")
    return sock


@contextlib.contextmanager
def overlay_sockets(server: Server, count: int) -> Iterator[OverlayLoad]:
    """``count`` overlay WebSockets on ``server`` until exit, each on a thread draining what
    the relay sends every :data:`OVERLAY_READ_EVERY_S` without parsing it and sending
    ``{"type": "pong"}`` every :data:`OVERLAY_PONG_EVERY_S`."""
    load, stop = OverlayLoad(), threading.Event()
    socks = [overlay_socket(server) for _ in range(count)]

    def drain(n: int, sock: socket.socket) -> None:
        next_pong = time.monotonic()
        while not stop.is_set():
            if time.monotonic() >= next_pong:
                sock.sendall(_PONG)
                next_pong += OVERLAY_PONG_EVERY_S
            try:
                chunk, ended = sock.recv(1 << 16), "closed by the relay"
            except TimeoutError:
                continue
            except OSError as exc:
                chunk, ended = b"", type(exc).__name__
            if not chunk:
                load.ended.append(ended)
                return
            load.received[n] += len(chunk)
            stop.wait(OVERLAY_READ_EVERY_S)

    threads = [threading.Thread(target=drain, args=pair, daemon=True) for pair in enumerate(socks)]
    started = time.process_time()
    for thread in threads:
        thread.start()
    try:
        yield load
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=5)
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.sendall(_CLOSE)
            sock.close()
        load.cpu_s = time.process_time() - started
