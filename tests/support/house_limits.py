"""The house limits on the length of a module and of a function: a module that grows past
them holds two things, and is split by what each does. The benchmarks keep them
(``tests/bench/test_cases.py``), and so does the tests' support code (``tests/test_lint.py``)."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from tests.support.harness import ROOT

MODULE_LINES, FUNCTION_LINES = 450, 80


def past_the_house_limits(paths: Iterable[Path]) -> list[str]:
    """Each module of ``paths`` longer than :data:`MODULE_LINES` and each function (at any
    depth) longer than :data:`FUNCTION_LINES`, as ``path: what``, the path from the
    repository's top."""
    found = []
    for path in paths:
        text, name = path.read_text(encoding="utf-8"), path.relative_to(ROOT)
        if (lines := len(text.splitlines())) > MODULE_LINES:
            found.append(f"{name}: {lines} lines")
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > FUNCTION_LINES:
                    found.append(f"{name}: {node.name}() is {length} lines")
    return found
