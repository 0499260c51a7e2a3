"""What ``/openapi.json`` says of answers and request bodies, checked in code.

:class:`Contract` holds the document: its operations, a ``jsonschema`` (2020-12) validator for
any schema in it (``$ref`` resolved as a client would), what is wrong with an answer
(:meth:`~Contract.check`, :meth:`~Contract.exchange`) and whether the answer to a request body
agrees with its schema (:meth:`~Contract.body_verdict`), for ``test_openapi.py`` and the fuzz.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import httpx
import orjson
import requests
import schemathesis
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from schemathesis import Response, checks
from schemathesis.core.failures import FailureGroup

from actors.core.bodies import MAX_NESTING
from config.common.errors import ConfigError
from config.common.setting_types import Regex, decode
from transport.shell.openapi_schemas import JSON, SSE

URI = "urn:sinain-relay:openapi"
METHODS = ("get", "post", "put", "patch", "delete", "head", "options")
CHECKS = [
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,  # last: not for an answer without a body
]
FORMATS = FormatChecker(())
"""``regex`` as ``RELAY_EXCLUDE_TITLES`` is judged: what the relay cannot read is none."""
FORMATS.checks("regex", (ConfigError, AttributeError))(lambda x: decode(Regex, "", x) is not None)


def pointer(*parts: str) -> str:
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


ERROR = pointer("components", "schemas", "Error")


class Operation(NamedTuple):
    method: str
    path: str
    spec: Mapping[str, Any]


class Contract:
    """The OpenAPI document and what it says of answers."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        self.paths: Mapping[str, Mapping[str, Any]] = document["paths"]
        self._registry: Registry[Any] = Registry().with_resource(
            URI, Resource.from_contents(document, default_specification=DRAFT202012)
        )
        self._validators: dict[str, Draft202012Validator] = {}
        self.schemathesis = schemathesis.openapi.from_dict(dict(document))

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

    def resolve(self, node: Mapping[str, Any]) -> Mapping[str, Any]:
        """``node``, a local ``$ref`` followed."""
        while "$ref" in node:
            node = self.at(node["$ref"].removeprefix("#"))
        return node

    def at(self, pointer: str) -> Any:
        return self._registry.resolver().lookup(f"{URI}#{pointer}").contents

    def validator(self, pointer: str) -> Draft202012Validator:
        """A validator for the schema at ``pointer`` in the document."""
        if pointer not in self._validators:
            self._validators[pointer] = Draft202012Validator(
                {"$ref": f"{URI}#{pointer}"}, registry=self._registry, format_checker=FORMATS
            )
        return self._validators[pointer]

    def check(
        self, method: str, path: str, status: int, headers: Mapping[str, str], body: bytes
    ) -> list[str]:
        """What is wrong with this answer, in words (empty: it matches the document).

        Schemathesis checks a described operation's answer (status, content type, required
        headers, body schema). A path or method the document does not describe may get a JSON
        error: 401, 403, 404 (no such path, or one turned off) or 405 (a path it describes).
        """
        what, op = f"{method.upper()} {path} -> {status}", self.operation(method, path)
        if op is None:
            item = self.paths.get(path)
            specs = [spec for name, spec in (item or {}).items() if name != "options"]
            off = item is None or all("404" in spec["responses"] for spec in specs)
            due = {401, 403} | ({404} if off else set()) | ({405} if item else set())
            fine = status in due and self.is_error(body)
            return [] if fine else [f"{what}: undescribed, expected a JSON error of {due}"]
        documented = self.resolve(op.spec["responses"].get(str(status), {}))
        if body and documented and "content" not in documented:
            return [f"{what}: documented without a body, got {body[:80]!r}"]
        sent = requests.Request(method.upper(), f"http://relay{path}").prepare()
        answer = Response(status, {k: [v] for k, v in headers.items()}, body, sent, 0, True)
        checks = CHECKS[:-1] if method.upper() == "HEAD" or not body else CHECKS
        try:
            self.schemathesis[op.path][op.method.upper()].Case().validate_response(answer, checks)
        except FailureGroup as exc:
            return [f"{what}: {str(failure)[:400]}" for failure in exc.exceptions]
        return []

    def exchange(
        self, client: httpx.Client, request: httpx.Request
    ) -> tuple[httpx.Response, list[str]]:
        """Send ``request``; its answer and what is wrong with it (:meth:`check`). Of an
        event stream only the head is read: its events are checked where they are read."""
        path = request.url.path  # as sent: httpx resolves dot segments
        op = self.operation(request.method, path)
        streams = op is not None and SSE in op.spec["responses"].get("200", {}).get("content", {})
        answer = client.send(request, stream=streams)
        try:
            body = b"" if answer.headers.get("content-type", "").startswith(SSE) else answer.read()
        finally:
            answer.close()
        return answer, self.check(request.method, path, answer.status_code, answer.headers, body)

    def is_error(self, body: bytes) -> bool:
        """Whether ``body`` is an error of the relay's shape, the ``Error`` component."""
        try:
            return self.validator(ERROR).is_valid(orjson.loads(body))
        except orjson.JSONDecodeError:
            return False

    def body_verdict(self, method: str, path: str, body: bytes, status: int) -> str | None:
        """What is wrong with ``status`` as the answer to a JSON ``body`` (``None``: nothing).

        A body the schema accepts, read exactly as the relay reads it, must get a 2xx; one it
        refuses (or that is no JSON) a 4xx. Answers that are not about the body are not
        judged: 401, 403, 404, 413 and 5xx (the 5xx are failures of their own).
        """
        op = self.operation(method, path)
        content = {} if op is None else op.spec.get("requestBody", {}).get("content", {})
        if op is None or JSON not in content or status in (401, 403, 404, 413) or status >= 500:
            return None
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            valid = False
        else:
            if _beyond_schema(value):
                return None
            where = pointer("paths", op.path, op.method, "requestBody", "content", JSON, "schema")
            valid = self.validator(where).is_valid(value)
        if valid != (200 <= status < 300):
            return f"a body {'valid' if valid else 'invalid'} by its schema got {status}"
        return None


def _beyond_schema(value: Any, depth: int = 1) -> bool:
    """What JSON Schema cannot judge as the relay does, and the document says in words: a
    whole float (``maxTokens`` takes 1, not 1.0), nesting deeper than a sense event may have,
    an ``until`` before its ``since`` (a schema compares no two fields)."""
    if isinstance(value, float):
        return value.is_integer()
    if not isinstance(value, dict | list):
        return False
    children = value.values() if isinstance(value, dict) else value
    since, until = (value.get(k) if isinstance(value, dict) else None for k in ("since", "until"))
    inverted = isinstance(since, int) and isinstance(until, int) and until < since
    return inverted or depth > MAX_NESTING or any(_beyond_schema(c, depth + 1) for c in children)
