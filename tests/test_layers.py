"""What import-linter's contracts (``tests/test_import_contracts.py``) cannot say: the kernel
is the floor at run time too (importing any of its modules loads no other product module but
the common package's, pure, importing nothing of the product), a pure core module loads no
actor, no package's ``__init__`` imports anything, a feature is imported from outside by few
modules, no package holds more than twenty modules, and no two folders import each other,
however many folders lie between."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KERNEL = "actors.kernel"
COMMON = "actors.common"
"""Below the kernel and every feature: pure, and importing no other product package."""
CORE = "actors.core"
AUDIO_CORE = "actors.audio.core"
AGENT_CORE = "actors.agent.core"
ESCALATION = "actors.escalation"
PURE = (COMMON, CORE, AUDIO_CORE, AGENT_CORE, ESCALATION)
"""The pure packages: plain functions and frozen values, no actor."""
PRODUCT = ("actors", "transport", "config")

ACTOR_LIBRARIES = ("pykka", "aiohttp")
"""What the pure core must not load (nor any actor that would bring them)."""

_PROBE = """
import importlib, sys
def ours(name): return name.partition(".")[0] in {product!r}
def shown(name): return ours(name) or name in {libraries!r}
for module in sys.argv[1:]:
    for name in [name for name in sys.modules if ours(name)]:
        del sys.modules[name]
    importlib.import_module(module)
    print(module, *sorted(name for name in sys.modules if shown(name)))
"""
"""Run in a fresh interpreter: each module named imported on a sys.modules cleared of the
product's modules, then the product modules that import loaded (and the actor libraries loaded
so far: those are not cleared, so the first module that brings one is the one named), one
line per module."""


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


def loaded_by_each(modules: list[str]) -> dict[str, list[str]]:
    """The product modules importing each of ``modules`` loads, each on a clean slate, and
    the actor libraries loaded so far."""
    probe = _PROBE.format(product=PRODUCT, libraries=ACTOR_LIBRARIES)
    done = subprocess.run(
        [sys.executable, "-c", probe, *modules],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return {module: rest for module, *rest in (line.split() for line in done.stdout.splitlines())}


def modules_of(package: str) -> list[str]:
    """The dotted names of a package's modules, its ``__init__`` aside."""
    folder = ROOT.joinpath(*package.split("."))
    return sorted(
        f"{package}.{path.stem}" for path in folder.glob("*.py") if path.stem != "__init__"
    )


def test_importing_a_kernel_module_loads_nothing_above_the_kernel() -> None:
    kernel = modules_of(KERNEL)
    assert len(kernel) > 10  # the walk found the package
    loaded = loaded_by_each(kernel)
    assert sorted(loaded) == kernel
    above = {
        module: [
            name
            for name in names
            if name.partition(".")[0] in PRODUCT
            and name not in ("actors", KERNEL, COMMON)
            and not name.startswith((f"{KERNEL}.", f"{COMMON}."))
        ]
        for module, names in loaded.items()
    }
    assert {module: names for module, names in above.items() if names} == {}


def test_importing_a_common_module_loads_nothing_but_the_common_package() -> None:
    common = modules_of(COMMON)
    assert len(common) >= 4  # the walk found the package
    offending = {
        module: [
            name
            for name in names
            if name not in ("actors", COMMON) and not name.startswith(f"{COMMON}.")
        ]
        for module, names in loaded_by_each(common).items()
    }
    assert {module: names for module, names in offending.items() if names} == {}


def test_importing_a_pure_core_module_loads_no_actor() -> None:
    core = [module for package in PURE for module in modules_of(package)]
    assert len(core) > 10  # the walk found the package
    packages = ("actors", KERNEL, "config", *PURE)
    within = tuple(f"{package}." for package in packages)
    below = (*packages, "actors.audio", "actors.agent")  # those alone: their __init__ is empty
    offending = {
        module: [name for name in names if name not in below and not name.startswith(within)]
        for module, names in loaded_by_each(core).items()
    }
    assert {module: names for module, names in offending.items() if names} == {}


def test_no_package_init_imports_anything() -> None:
    inits = [
        path
        for package in PRODUCT
        for path in sorted((ROOT / package).rglob("__init__.py"))
        if path.parent != ROOT / "transport" / "demo"  # the demo's program, not a surface
    ]
    assert len(inits) >= 5  # the walk found the packages
    importing = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in inits
        for line, name in imported(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        if name != "__future__"
    ]
    assert importing == []


FEATURES = {
    "ingest": ("actors.ingest", "transport.ingest"),
    "agent": ("actors.agent", "transport.agent", "config.agent"),
    "audio": ("actors.audio", "transport.audio", "config.audio"),
    "escalation": ("actors.escalation", "transport.escalation"),
    "overlay": ("transport.overlay",),
    "mcp": ("transport.mcp",),
    "console": ("transport.console",),
    "forget": ("transport.forget",),
    "privacy": ("actors.privacy", "transport.privacy"),
}
"""Each feature's packages, in every layer that has one."""
MAX_IMPORTERS = 4
"""Modules outside every feature that may import one: the composition roots and the registry.
What one feature imports of another is the import contracts' (``pyproject.toml``)."""
NOT_YET: dict[str, str] = {}
"""Features the shell still reaches around their :class:`~transport.host.feature.Feature`."""
MAX_MODULES = 20
"""Modules in one package, its ``__init__`` aside."""


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == package or module.startswith(f"{package}.") for package in packages)


def product_imports() -> dict[str, set[str]]:
    """Every product module by its dotted name, and the product modules it imports."""
    found: dict[str, set[str]] = {}
    paths = [ROOT / "run.py", *(p for package in PRODUCT for p in (ROOT / package).rglob("*.py"))]
    for path in paths:
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found[name] = {target for _, target in imported(tree)}
    return found


def importers_from_outside(imports: dict[str, set[str]], feature: str) -> list[str]:
    """The modules that import ``feature`` and belong to no feature."""
    everyone = tuple(package for packages in FEATURES.values() for package in packages)
    return sorted(
        module
        for module, targets in imports.items()
        if not _within(module, everyone)
        and any(_within(target, FEATURES[feature]) for target in targets)
    )


@pytest.mark.parametrize(
    "feature",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=NOT_YET[name]))
        if name in NOT_YET
        else name
        for name in FEATURES
    ],
)
def test_a_feature_is_imported_from_outside_by_the_roots_and_the_registry_alone(
    feature: str,
) -> None:
    importers = importers_from_outside(product_imports(), feature)
    assert "transport.registry" in importers or feature not in ("overlay", "console", "mcp")
    assert len(importers) <= MAX_IMPORTERS, importers


def test_no_package_holds_more_than_twenty_modules() -> None:
    packages = {
        path.parent.relative_to(ROOT).as_posix(): len(
            [p for p in path.parent.glob("*.py") if p.name != "__init__.py"]
        )
        for package in PRODUCT
        for path in (ROOT / package).rglob("__init__.py")
    }
    assert packages["actors/core"] > 5  # the walk found the packages
    assert {name: n for name, n in packages.items() if n > MAX_MODULES} == {}


CIRCLES_LEFT: dict[str, str] = {}
"""Top packages whose folders still import each other in a circle."""


def folder_of(module: str) -> str:
    """The folder a module is in: itself for a package, its parent for a plain module."""
    return module if (ROOT / module.replace(".", "/")).is_dir() else module.rpartition(".")[0]


def folder_circles(imports: dict[str, set[str]], top: str) -> list[list[str]]:
    """The circles between the folders under ``top``: each strongly connected set of two or
    more folders, where a folder imports another when any of its modules imports one of the
    other's (a folder's subfolders are folders of their own)."""
    edges: dict[str, set[str]] = {}
    for module, targets in imports.items():
        if not _within(module, (top,)):
            continue
        for target in targets:
            if _within(target, (top,)) and folder_of(target) != folder_of(module):
                edges.setdefault(folder_of(module), set()).add(folder_of(target))
    reach = {folder: _reached(edges, folder) for folder in edges}
    circles = {
        frozenset(other for other in reach if other in reach[folder] and folder in reach[other])
        | {folder}
        for folder in reach
        if folder in reach[folder]
    }
    return sorted(sorted(circle) for circle in circles)


def _reached(edges: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(edges.get(start, ()))
    while todo:
        folder = todo.pop()
        if folder not in seen:
            seen.add(folder)
            todo.extend(edges.get(folder, ()))
    return seen


@pytest.mark.parametrize(
    "top",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=CIRCLES_LEFT[name]))
        if name in CIRCLES_LEFT
        else name
        for name in PRODUCT
    ],
)
def test_no_two_folders_import_each_other_even_through_others(top: str) -> None:
    assert folder_circles(product_imports(), top) == []


def test_a_circle_between_folders_is_found() -> None:
    imports = {"actors.tree": {"actors.agent.ticker"}, "actors.agent.ticker": {"actors.tree"}}
    assert folder_circles(imports, "actors") == [["actors", "actors.agent"]]
