"""docs/architecture.md's module tables name every product module, and only modules that exist.

Each ``### `<package>/` ...`` heading is followed by a table whose first column names the
package's modules (several in one cell, comma-separated, are allowed). A module added without
a row, or a row left behind by a module that moved, fails here with its name.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("actors", "transport", "config")
DATA_SUFFIXES = (".json", ".jsonl")
"""Data files that ship inside a package are listed too: a reader needs to know they exist."""

_HEADING = re.compile(r"^### `(?P<package>[a-z_/]+)/`")
_NAME = re.compile(r"`([^`]+)`")


def documented() -> set[str]:
    """Paths (from the repository's top) that the tables list."""
    names: set[str] = set()
    package: str | None = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        heading = _HEADING.match(line)
        if heading:
            package = heading["package"]
            continue
        if line.startswith("#"):
            package = None
        if package is None or not line.startswith("| `"):
            continue
        first_cell = line.split("|")[1]
        names.update(f"{package}/{name}" for name in _NAME.findall(first_cell))
    return names


def in_tree() -> set[str]:
    """Every product module and shipped data file; ``__init__.py`` only where it holds code."""
    found: set[str] = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*"):
            if "__pycache__" in path.parts or not path.is_file():
                continue
            if path.suffix not in (".py", *DATA_SUFFIXES):
                continue
            if path.name == "__init__.py" and not _holds_code(path):
                continue
            found.add(path.relative_to(ROOT).as_posix())
    return found


def _holds_code(path: Path) -> bool:
    """More than a docstring and imports: an ``__init__`` that does something."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    code = [line for line in lines if line.startswith(("def ", "class ", "async def "))]
    return bool(code)


def test_every_product_module_has_a_row() -> None:
    missing = sorted(in_tree() - documented())
    assert not missing, f"docs/architecture.md has no row for: {', '.join(missing)}"


def test_every_row_names_a_module_that_exists() -> None:
    stale = sorted(documented() - in_tree())
    assert not stale, f"docs/architecture.md lists modules that are gone: {', '.join(stale)}"
