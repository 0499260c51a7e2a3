"""The house rules a machine can check: ruff's lint and format, and ``mypy --strict``.

Part of the test command, so that the one command the README gives, which CI runs as it is,
checks them too. Each runs the tool over the whole tree, as a developer would.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "command",
    [("ruff", "check", "."), ("ruff", "format", "--check", "."), ("mypy",)],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_the_tree_passes(command: tuple[str, ...]) -> None:
    done = run(*command)
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}{done.stderr}"
