"""The benchmarks are a tool built on the tests' support, never the reverse: no test module
imports ``bench`` (what both use lives in ``tests/support``; a test of a benchmark runs it as
``python -m bench <case>`` and reads what it prints). ``bench`` may import ``tests.support``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.test_layers import imported

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parent


def test_no_test_module_imports_bench() -> None:
    modules = sorted(TESTS.rglob("*.py"))
    assert len(modules) > 50  # the walk found the tests
    offending = [
        f"{path.relative_to(TESTS.parent)}:{line} imports {name}"
        for path in modules
        for line, name in imported(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        if name.partition(".")[0] == "bench"
    ]
    assert not offending, "tests/ must not import bench/:\n" + "\n".join(offending)
