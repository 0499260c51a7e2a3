"""Which package may import which: the contracts in ``pyproject.toml`` (``[tool.importlinter]``),
checked by import-linter over every import of ``actors/``, ``transport/`` and ``config/``,
wherever it is written (at the top of a module, under ``if TYPE_CHECKING:``, in a function).

The layers, the kernel as the floor, actors without HTTP, the pure cores, no circle between
the actors' packages, and each feature needing no other but where a contract says why. A
broken contract fails this test with import-linter's report: the chain of imports that
breaks it, with the lines.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_LINT = (
    "import sys; from importlinter.cli import lint_imports;"
    " sys.exit(lint_imports(no_cache=True, no_logo=True))"
)
"""``lint-imports`` as its command runs it, without the cache it would leave in the tree."""


def test_the_import_contracts_are_kept() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _LINT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "Contracts:" in done.stdout, done.stdout + done.stderr  # the contracts were read
    assert done.returncode == 0, done.stdout + done.stderr
