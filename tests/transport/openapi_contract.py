"""What ``/openapi.json`` says of an answer and of a request body, checked in code.

:class:`Contract` says what is wrong with one answer: a status the operation does not list,
a content type it does not list, a body that does not match the schema, a required header
missing. JSON bodies are checked with ``jsonschema`` (2020-12) against the document itself,
so ``$ref`` resolves exactly as a client's would. :func:`body_verdict` says whether a
request body's answer agrees with its schema.

The real answers of ``tests/transport/test_openapi.py`` are checked with it, and so are the
odd requests of the fuzz (``odd_requests.py``); Schemathesis checks the generated ones
(``api_fuzz.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from actors.core.bodies import MAX_NESTING
from transport.openapi_schemas import JSON

URI = "urn:sinain-relay:openapi"
METHODS = ("get", "post", "put", "patch", "delete", "head", "options")

Json = Any


def pointer(*parts: str) -> str:
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


@dataclass(frozen=True, slots=True)
class Operation:
    method: str
    path: str
    spec: Mapping[str, Any]


class Contract:
    """The OpenAPI document and what it says of answers."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        self._registry: Registry[Any] = Registry().with_resource(
            URI, Resource.from_contents(document, default_specification=DRAFT202012)
        )
        self._validators: dict[str, Draft202012Validator] = {}

    @property
    def paths(self) -> Mapping[str, Mapping[str, Any]]:
        paths: Mapping[str, Mapping[str, Any]] = self.document["paths"]
        return paths

    def operations(self) -> list[Operation]:
        """Every described operation, ``options`` included."""
        return [
            Operation(method, path, spec)
            for path, item in self.paths.items()
            for method, spec in item.items()
            if method in METHODS
        ]

    def operation(self, method: str, path: str) -> Operation | None:
        """The operation answering ``method`` on ``path`` (``HEAD`` is ``GET``'s)."""
        method = method.lower()
        item = self.paths.get(path, {})
        if method == "head" and "head" not in item:
            method = "get"
        return Operation(method, path, item[method]) if method in item else None

    def resolve(self, node: Mapping[str, Any], where: str) -> tuple[Mapping[str, Any], str]:
        """Follow a local ``$ref``; returns the target and its JSON pointer."""
        while "$ref" in node:
            where = node["$ref"].removeprefix("#")
            node = self.at(where)
        return node, where

    def at(self, pointer: str) -> Any:
        node: Any = self.document
        for part in pointer.split("/")[1:]:
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def validator(self, pointer: str) -> Draft202012Validator:
        """A validator for the schema at ``pointer`` in the document."""
        if pointer not in self._validators:
            self._validators[pointer] = Draft202012Validator(
                {"$ref": f"{URI}#{pointer}"}, registry=self._registry
            )
        return self._validators[pointer]

    def schema(self, name: str) -> Draft202012Validator:
        """A validator for ``components.schemas.<name>``."""
        return self.validator(pointer("components", "schemas", name))

    def expected(self, method: str, path: str) -> tuple[Mapping[str, Any], str]:
        """The responses object that applies and its pointer: the operation's, else the
        document's 405 (described path) or 404 (any other), or the 401 and 403 that any
        request may get."""
        op = self.operation(method, path)
        if op is not None:
            return op.spec["responses"], pointer("paths", path, op.method, "responses")
        statuses = {"401": "Unauthorized", "403": "Forbidden"}
        item = self.paths.get(path)
        specs = [spec for name, spec in (item or {}).items() if name != "options"]
        if item is None or all("404" in spec["responses"] for spec in specs):
            statuses["404"] = "NotFound"  # no such path, or one that may be turned off
        if item is not None:
            statuses["405"] = "MethodNotAllowed"
        return {
            status: {"$ref": "#" + pointer("components", "responses", name)}
            for status, name in statuses.items()
        }, ""

    def check(
        self, method: str, path: str, status: int, headers: Mapping[str, str], body: bytes
    ) -> list[str]:
        """What is wrong with this answer, in words (empty: it matches the document)."""
        what = f"{method.upper()} {path} -> {status}"
        responses, where = self.expected(method, path)
        answer = responses.get(str(status)) or responses.get(f"{str(status)[0]}XX")
        if answer is None:
            return [f"{what}: status not documented (documented: {', '.join(responses)})"]
        answer, where = self.resolve(answer, _join(where, str(status)))
        problems = [
            f"{what}: header {name} missing"
            for name, header in answer.get("headers", {}).items()
            if header.get("required") and name not in headers
        ]
        content = answer.get("content")
        ctype = headers.get("content-type", "").split(";")[0].strip().lower()
        if not content:
            if body:
                problems.append(f"{what}: documented without a body, got {body[:80]!r}")
            return problems
        if ctype not in content:
            return [*problems, f"{what}: content type {ctype!r} not in {sorted(content)}"]
        if method.upper() == "HEAD" or ctype != JSON:
            return problems
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            return [*problems, f"{what}: body is not JSON ({exc}): {body[:80]!r}"]
        validator = self.validator(_join(where, "content", JSON, "schema"))
        problems.extend(
            f"{what}: {'/'.join(map(str, e.absolute_path)) or 'body'}: {e.message[:300]}"
            for e in validator.iter_errors(value)
        )
        return problems


def _join(base: str, *parts: str) -> str:
    return base + pointer(*parts)


def body_verdict(
    contract: Contract, method: str, path: str, body: bytes, status: int
) -> str | None:
    """What is wrong with ``status`` as the answer to a JSON ``body`` (``None``: nothing).

    A body the schema accepts, read exactly as the relay reads it, must get a 2xx; one it
    refuses (or that is no JSON) a 4xx. Answers that are not about the body are not judged:
    401, 403, 404, 413 and 5xx (the 5xx are failures of their own).
    """
    op = contract.operation(method, path)
    if op is None or JSON not in op.spec.get("requestBody", {}).get("content", {}):
        return None
    if status in (401, 403, 404, 413) or status >= 500:
        return None
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        valid = False
    else:
        if _has_whole_float(value) or _nests_deeper(value, MAX_NESTING):
            # What JSON Schema cannot say: 1 is not 1.0 (maxTokens takes only 1), and the
            # nesting limit of a sense event (documented in words).
            return None
        where = pointer("paths", op.path, op.method, "requestBody", "content", JSON, "schema")
        valid = contract.validator(where).is_valid(value)
    if valid != (200 <= status < 300):
        return f"a body {'valid' if valid else 'invalid'} by its schema got {status}"
    return None


def _nests_deeper(value: Json, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list) and depth > limit:
            return True
        children = (
            node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        )
        stack.extend((child, depth + 1) for child in children)
    return False


def _has_whole_float(value: Json) -> bool:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, float) and node.is_integer():
            return True
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False
