"""A model worker with no model, for the worker's own tests: it says ``ready`` at once and
answers each message ``("echo", message)`` until the pipe ends."""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection


def serve(conn: Connection) -> None:
    """Say ready, then echo every message until the owner closes the pipe."""
    conn.send(("ready", "echo"))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        conn.send(("echo", message))


if __name__ == "__main__":  # as python -m tests.support.echo_worker FD
    serve(Connection(int(sys.argv[1])))
