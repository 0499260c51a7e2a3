"""The benches are tools the tests also check: tests may import ``bench``, never the reverse."""

from __future__ import annotations

import ast
from pathlib import Path

from bench.harness import ROOT


def imported_modules(path: Path) -> list[str]:
    """Every module ``path`` imports, at any depth (lazy imports in functions too)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return names


def test_no_bench_module_imports_the_tests() -> None:
    found = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / "bench").rglob("*.py"))
        for name in imported_modules(path)
        if name == "tests" or name.startswith("tests.")
    ]
    assert not found, "bench/ must not import tests/ (what both use lives in bench/):\n" + (
        "\n".join(found)
    )
