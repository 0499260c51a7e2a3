"""docs/http-api.md lists every route the app serves, and only those.

The doc's route list is the first cell of its tables' rows: ``| `GET /feed?after=N` | ...``,
a method and a path (its query left out). It is compared with the routes of the app's
router, built with ``RELAY_FAULTS=1`` so the drill's route is there too; ``HEAD`` and the
preflight's ``OPTIONS``, which every path answers, are stated once in the doc's conventions.
A route added without a row, or a row left behind by a route that went, fails here with it.
The answers' shapes are not copied into the doc: it names their components, which must be the
OpenAPI document's.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.transport.shell.test_auth import served_routes
from transport.openapi import openapi_document

DOC = Path(__file__).resolve().parents[2] / "docs" / "http-api.md"
_ROW = re.compile(r"^\| `(?P<method>[A-Z]+) (?P<path>/[^`?\s]*)")
_NAME = re.compile(r"`([A-Z][a-z]+[A-Za-z]*)`")
NOT_COMPONENTS = frozenset({"Allow", "Authorization", "EventSource", "Expect", "Host", "Origin"})
"""Capitalised words the doc quotes that are headers or browser names, not components."""


def documented() -> set[tuple[str, str]]:
    """(method, path) of every row of the doc's tables that names a route."""
    rows = (_ROW.match(line) for line in DOC.read_text(encoding="utf-8").splitlines())
    return {(row["method"], row["path"]) for row in rows if row is not None}


def served() -> set[tuple[str, str]]:
    return {(method, path) for method, path in served_routes() if method != "HEAD"}


def test_every_route_the_app_serves_has_a_row_in_the_http_doc() -> None:
    missing = sorted(served() - documented())
    assert not missing, f"docs/http-api.md has no row for: {missing}"


def test_every_route_in_the_http_doc_is_served() -> None:
    stale = sorted(documented() - served())
    assert not stale, f"docs/http-api.md lists routes the app does not serve: {stale}"


def test_every_component_the_http_doc_names_is_in_the_openapi_document() -> None:
    named = set(_NAME.findall(DOC.read_text(encoding="utf-8"))) - NOT_COMPONENTS
    unknown = sorted(named - set(openapi_document()["components"]["schemas"]))
    assert not unknown, f"docs/http-api.md names components the document lacks: {unknown}"


def test_the_http_doc_points_to_the_openapi_document_for_the_answers() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert "GET /openapi.json" in text
    assert "sinain-relay openapi" in text
