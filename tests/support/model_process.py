"""Finding the process that runs a model, to read its CPU time and memory (Linux ``/proc``):
the server listening on a local port, or the children of a relay."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from actors.agent.local_llm import LocalChat
from actors.core.errors import LLMError
from config.agent.local_llm import LOCAL_TIMEOUT_MS

Pid = Callable[[], int | None]
"""A way to read a process's id, ``None`` while it runs none."""
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


@contextlib.contextmanager
def local_model(model: str, threads: int) -> Iterator[tuple[httpx.MockTransport, Pid]]:
    """The relay's own worker for ``model`` (``AGENT_API=local``: a GGUF file, or a known
    model's name) behind an httpx transport that answers chat completions as a server would
    (an error as a 500 that names it); and a way to read its process id once it runs."""
    chat = LocalChat(model, threads)

    def answer(request: httpx.Request) -> httpx.Response:
        try:
            done = chat.complete(json.loads(request.content), LOCAL_TIMEOUT_MS / 1000)
        except LLMError as exc:
            return httpx.Response(500, json={"error": {"message": str(exc)}})
        usage = {"prompt_tokens": done.tokens_in, "completion_tokens": done.tokens_out}
        message = {"role": "assistant", "content": done.content}
        choice = {"message": message, "finish_reason": "stop"}
        return httpx.Response(200, json={"choices": [choice], "usage": usage, "model": done.model})

    try:
        yield httpx.MockTransport(answer), lambda: chat.stats().pid
    finally:
        chat.close()
