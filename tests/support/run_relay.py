"""``python run.py`` in a test: a relay spawned with its own environment and data directory,
run to its end, or waited for until it answers and then stopped. Built on the process harness
(:mod:`tests.support.harness`), whose failures these turn into the test's."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest

from tests.support import harness
from tests.support.harness import HOST, ROOT


def relay_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a test relay: none of the relay's own settings from outside (no key,
    no token; see :func:`harness.relay_env`), its own data directory, and ``extra``."""
    return harness.relay_env(RELAY_DATA_DIR=str(data_dir), **extra)


def spawn_relay(
    port: int,
    env: dict[str, str],
    *args: str,
    stdout: int | IO[bytes] = subprocess.PIPE,
    stderr: int | IO[bytes] = subprocess.PIPE,
    nofile: int | None = None,
) -> subprocess.Popen[bytes]:
    """``python run.py ARGS --port PORT`` from the repository, its output piped by default;
    with at most ``nofile`` open files (``ulimit -n``) if set."""
    return subprocess.Popen(
        harness.with_open_files(nofile, [sys.executable, "run.py", *args, "--port", str(port)]),
        cwd=ROOT,
        env=env,
        stdout=stdout,
        stderr=stderr,
    )


def run_to_end(
    args: list[str], env: dict[str, str], timeout_s: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python run.py ARGS`` from the repository, to its end: its exit code and output."""
    return subprocess.run(
        [sys.executable, "run.py", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s, check=False,
    )  # fmt: skip


def stopped_once_healthy(port: int, proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """Wait until the relay ``proc`` answers ``GET /health``, stop it with SIGTERM, and return
    its output; it is killed if it outlives the test's patience."""
    try:
        wait_healthy(port, proc)
        proc.send_signal(signal.SIGTERM)
        return proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


def wait_answering(
    url: str, proc: subprocess.Popen[bytes], what: str = "relay", timeout_s: float = 15
) -> None:
    """Wait until ``GET url`` answers 200 (:func:`harness.wait_answering`); fail the test
    if ``proc`` exits first or ``timeout_s`` goes by."""
    try:
        harness.wait_answering(url, proc, what, timeout_s=timeout_s)
    except RuntimeError as exc:
        pytest.fail(str(exc))


def wait_healthy(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 15) -> None:
    """Wait until the relay on ``port`` answers ``GET /health``; fail the test if it exits or
    is late."""
    wait_answering(f"http://{HOST}:{port}/health", proc, timeout_s=timeout_s)
