"""The shell blocks of the README and docs/operations.md run as shown: each block that starts
a relay is pasted into bash whole, in a home of its own, and every call in it is answered;
the README's "meanwhile" blocks run against its demo; ``.ci/run`` runs the README's test
command."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.harness import ROOT, relay_env
from tests.support.observe import wait_until

PORTS = (18791, 18900)
"""The ports the blocks name: the relay's default and the fake LLM's."""
BLOCK_S = 60.0
_BASH = re.compile(r"^```bash\n(.*?)^```", re.DOTALL | re.MULTILINE)


def blocks(doc: str) -> list[str]:
    return _BASH.findall((ROOT / doc).read_text(encoding="utf-8"))


def starting(doc: str) -> list[str]:
    """The blocks that start a relay in the background."""
    return [block for block in blocks(doc) if "run.py &" in block]


@pytest.fixture
def shell_env(tmp_path: Path) -> dict[str, str]:
    """A home of its own (the relay's data home), ``python3`` this interpreter, and none of
    the relay's settings from outside; the blocks' ports free.

    ``python3`` is found as an activated virtual environment finds it: its ``bin`` first on
    ``PATH``. A link to the interpreter elsewhere would run it outside its environment (a
    Python finds its ``pyvenv.cfg`` beside the name it was started by, not beside the file
    the link points to), without the packages installed there."""
    for port in PORTS:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                pytest.fail(f"port {port} is taken: the docs' blocks need it free")
    bin_dir = Path(sys.executable).parent
    assert (bin_dir / "python3").is_file(), f"no python3 beside {sys.executable}"
    env = {k: v for k, v in relay_env().items() if not k.startswith("XDG_")}
    return env | {"HOME": str(tmp_path / "home"), "PATH": f"{bin_dir}:{os.environ['PATH']}"}


@contextlib.contextmanager
def session(env: dict[str, str]) -> Iterator[list[subprocess.Popen[str]]]:
    """Processes started here, each in a group of its own, ended with it on exit."""
    started: list[subprocess.Popen[str]] = []
    try:
        yield started
    finally:
        for proc in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        wait_until(lambda: not any(_alive(proc.pid) for proc in started), 15, "the blocks' ends")


def _alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def run_block(block: str, env: dict[str, str], started: list[subprocess.Popen[str]]) -> str:
    """``block`` pasted into bash: its output (to a file, which its background jobs keep
    writing to); it must end with exit 0 and no call refused."""
    with tempfile.TemporaryFile("w+") as output:
        proc = subprocess.Popen(
            ["bash", "-c", block], cwd=ROOT, env=env, text=True, start_new_session=True,
            stdout=output, stderr=subprocess.STDOUT,
        )  # fmt: skip
        started.append(proc)
        proc.wait(timeout=BLOCK_S)
        output.seek(0)
        out = output.read()
    assert proc.returncode == 0, out[-3000:]
    assert "Connection refused" not in out and "Failed to connect" not in out, out[-3000:]
    return out


@pytest.mark.slow
def test_the_blocks_that_start_a_relay_run_as_shown(shell_env: dict[str, str]) -> None:
    """One test, the blocks one after the other: they all use the same ports."""
    operations = starting("docs/operations.md")
    assert len(operations) == 2
    for block in operations:
        with session(shell_env) as started:
            out = run_block(block, shell_env, started)
            if "debug/fault" in block:
                assert '"restarts": 1' in out  # the crashed feed buffer, restarted
                metrics = [b for b in blocks("docs/operations.md") if "/metrics" in b]
                assert "relay_ticks_total" in run_block(metrics[0], shell_env, started)
            else:
                assert out.count('"mode"') >= 3  # each switch of the fake answered
    readme = blocks("README.md")
    (demo,) = [b for b in readme if b.strip() == "python3 run.py --demo"]
    calls = [b for b in readme if b.startswith("curl -s localhost:18791") or "sense -d" in b]
    assert len(calls) == 2
    wait = "until curl -sf localhost:18791/health >/dev/null; do sleep 0.2; done"
    with session(shell_env) as started:
        run_block(f"{demo.strip()} > /dev/null 2>&1 &\n{wait}\n", shell_env, started)
        for block in calls:
            out = run_block(block, shell_env, started)
            assert '"ok": true' in out or '"ok":true' in out, out


def test_ci_runs_the_readmes_test_command() -> None:
    readme = blocks("README.md")
    (command,) = [b.strip() for b in readme if "pytest" in b]
    assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip().endswith(command)
