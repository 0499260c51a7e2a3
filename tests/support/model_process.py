"""Finding the process that runs a model, to read its CPU time and memory (Linux ``/proc``):
the server listening on a local port, or the children of a relay."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from urllib.parse import urlsplit

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})
"""Hosts whose server is a process of this machine."""
_LISTEN = "0A"
"""A socket's state in ``/proc/net/tcp``: listening."""


def _listening_inodes(port: int) -> set[str]:
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                local, state, inode = fields[1], fields[3], fields[9]
                if state == _LISTEN and int(local.rsplit(":", 1)[1], 16) == port:
                    inodes.add(inode)
    return inodes


def listening_pid(port: int) -> int | None:
    """The process listening on TCP ``port`` of this machine, if one of ours can be seen."""
    sockets = {f"socket:[{inode}]" for inode in _listening_inodes(port)}
    if not sockets:
        return None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (entry / "fd").iterdir():
                if os.readlink(fd) in sockets:
                    return int(entry.name)
    return None


def server_pid(base_url: str) -> int | None:
    """The process serving ``base_url`` when it is on this machine, else ``None``."""
    parts = urlsplit(base_url)
    if parts.hostname not in LOCAL_HOSTS:
        return None
    return listening_pid(parts.port or (443 if parts.scheme == "https" else 80))


def children(pid: int) -> list[int]:
    """The processes ``pid`` started (its direct children)."""
    found = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found += [int(c) for c in (task / "children").read_text().split()]
    return found
