"""No import circles among the product's modules (``actors/``, ``transport/``, ``config/``,
``run.py``).

Every import counts, wherever it is written: at the top of a module, under
``if TYPE_CHECKING:``, or inside a function (an import moved into a function still makes
the two modules need each other, it only hides it from the interpreter until run time).
``from x import y`` is an edge to ``x.y`` when ``y`` is a module of ours, else to ``x``.
Importing ``a.b`` is not counted as importing the package ``a`` (Python runs ``a``'s
``__init__`` first, but that is the package's surface, not a dependency of the module).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("actors", "transport", "config")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def product_modules() -> dict[str, Path]:
    """Every product module by its dotted name."""
    paths = [ROOT / "run.py"]
    for package in PACKAGES:
        paths.extend(sorted((ROOT / package).rglob("*.py")))
    return {_module_name(path): path for path in paths}


def _imported(node: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    """The dotted names an import statement asks for (``x`` or ``x.y`` of ``from x import y``)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = module.split(".")
            anchor = anchor if is_package else anchor[:-1]
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, *([base] if base else [])])
        for alias in node.names:
            yield f"{base}.{alias.name}"
        yield base


def import_graph() -> dict[str, set[str]]:
    """Each product module and the product modules it imports."""
    modules = product_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            wanted = list(_imported(node, name, is_package))
            if isinstance(node, ast.ImportFrom):
                base, names = wanted[-1], wanted[:-1]
                submodules = [n for n in names if n in modules]
                # ``from x import y, z``: the submodules among y and z; x itself for the rest
                edges.update(submodules)
                if len(submodules) < len(names) and base in modules:
                    edges.add(base)
            else:
                edges.update(n for n in wanted if n in modules)
        edges.discard(name)
        graph[name] = edges
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def shortest_circle(graph: dict[str, set[str]], start: str, within: set[str]) -> list[str]:
    """The shortest import path from ``start`` back to itself, inside one component."""
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & within):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    return [start]


def test_graph_sees_type_checking_and_function_imports() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from actors.agent.ticker import Ticker\n"
        "def f():\n    from transport import openapi\n"
    )
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    asked = {name for node in imports for name in _imported(node, "actors.x", False)}
    assert {"actors.agent.ticker", "transport.openapi"} <= asked


def test_no_import_circles() -> None:
    graph = import_graph()
    assert len(graph) > 50, "the product's modules were found"
    circles = []
    for component in strongly_connected(graph):
        path = shortest_circle(graph, component[0], set(component))
        circles.append(f"{' -> '.join(path)}  (all of: {', '.join(component)})")
    assert not circles, "import circles among product modules:\n" + "\n".join(circles)
