"""The house rules a machine can check: ruff's lint and format, ``mypy --strict``, one name
per class, and the house limits on a module's and a function's length in the tests' support
code.

Part of the test command, so that the one command the README gives, which CI runs as it is,
checks them too. Each tool runs over the whole tree, as a developer would. No class name is
defined twice in the product (``actors/``, ``transport/``, ``config/``, ``run.py``): a wire
struct and the record or setting it is made from are told apart by their names, so a reader
(and a search) never takes one for the other. The tests' support code (``tests/support/`` and
the modules beside the test modules in ``tests/``) is read and reused as the product is, so it
keeps the house limits on a module's and a function's length (:mod:`tests.support.house_limits`).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tests.support.house_limits import past_the_house_limits

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("actors", "transport", "config")


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
    [
        pytest.param(("ruff", "check", "."), id="ruff-check"),
        pytest.param(("ruff", "format", "--check", "."), id="ruff-format"),
        pytest.param(("mypy",), id="mypy", marks=pytest.mark.slow),
    ],
)
def test_the_tree_passes(command: tuple[str, ...]) -> None:
    done = run(*command)
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}{done.stderr}"


def class_definitions(paths: list[Path]) -> dict[str, list[str]]:
    """Each class name defined in ``paths`` (at any depth), with where: ``path:line``."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                found[node.name].append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


@pytest.mark.slow
def test_no_class_name_is_defined_twice_in_the_product() -> None:
    paths = [ROOT / "run.py"]
    for package in PRODUCT:
        paths.extend(sorted((ROOT / package).rglob("*.py")))
    classes = class_definitions(paths)
    assert len(classes) > 100  # the walk found the classes
    twice = {name: places for name, places in classes.items() if len(places) > 1}
    assert twice == {}


def test_no_test_support_module_passes_the_house_limits() -> None:
    support = sorted((ROOT / "tests" / "support").glob("*.py"))
    beside = [p for p in sorted((ROOT / "tests").glob("*.py")) if not p.name.startswith("test_")]
    assert len(support) > 20  # the walk found the support modules
    found = past_the_house_limits([*support, *beside])
    assert not found, "\n".join(found)
