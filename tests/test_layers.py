"""The layers the tree shows: actors know no HTTP. No module under ``actors/`` imports
``transport``, not even for type checking; the entry point assembles the HTTP transport and
hands it to the tree."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOWER = "actors"
UPPER = "transport"


def imported(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module an ``import`` or ``from ... import`` names, with its line, wherever it
    stands (in a function, under ``if TYPE_CHECKING``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def test_no_module_under_actors_imports_the_transport() -> None:
    modules = sorted((ROOT / LOWER).rglob("*.py"))
    assert len(modules) > 10  # the walk found the package
    offending = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in modules
        for line, name in imported(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        if name.partition(".")[0] == UPPER
    ]
    assert offending == []


def test_the_check_sees_an_import_under_type_checking() -> None:
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from transport.x import Y\n"
    assert (3, "transport.x") in imported(ast.parse(source))
