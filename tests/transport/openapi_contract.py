"""Real HTTP answers checked against ``/openapi.json``, and requests fuzzed from it.

Used by ``tests/transport/test_openapi.py`` (bounded, with a fixed seed) and by
``bench/fuzz_api.py`` (a larger run that prints its figures).

:class:`Contract` says what is wrong with one answer: a status the operation does not list,
a content type it does not list, a body that does not match the schema, a required header
missing. JSON bodies are checked with ``jsonschema`` (2020-12) against the document itself,
so ``$ref`` resolves exactly as a client's would.

:func:`fuzz` sends requests built by Hypothesis from the document: for each operation,
query and header parameters from their schemas or junk, and bodies that are valid (from the
schema, by ``hypothesis-jsonschema``), valid ones with a field replaced, removed or nested
junk, arbitrary JSON (non-objects too), and raw bytes (malformed JSON, invalid UTF-8, lone
surrogates, huge numbers, deep nesting, a BOM), some of them chunked. Besides, every
operation gets a fixed corpus of nasty bodies, every path the methods it does not answer,
and a few unknown paths. Every answer must be documented, no answer may be a 5xx, and for a
request body the verdict must agree with the schema: valid (as the relay parses it) -> 2xx,
invalid -> 4xx.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import httpx
import orjson
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from actors.sense_buffer import MAX_NESTING
from transport.openapi import JSON, SSE

URI = "urn:sinain-relay:openapi"
METHODS = ("get", "post", "put", "patch", "delete", "head", "options")
LONG_POLL_CAP_S = 0.05
"""A ``wait`` the schema allows is scaled down to this at most, so a long-poll that waits
its whole time costs a fuzz case no more than this."""

Json = Any


def _pointer(*parts: str) -> str:
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
        return self.validator(_pointer("components", "schemas", name))

    def expected(self, method: str, path: str) -> tuple[Mapping[str, Any], str]:
        """The responses object that applies and its pointer: the operation's, else the
        document's 405 (described path) or 404 (any other), or the 401 and 403 that any
        request may get."""
        op = self.operation(method, path)
        if op is not None:
            return op.spec["responses"], _pointer("paths", path, op.method, "responses")
        statuses = {"401": "Unauthorized", "403": "Forbidden"}
        item = self.paths.get(path)
        specs = [spec for name, spec in (item or {}).items() if name != "options"]
        if item is None or all("404" in spec["responses"] for spec in specs):
            statuses["404"] = "NotFound"  # no such path, or one that may be turned off
        if item is not None:
            statuses["405"] = "MethodNotAllowed"
        return {
            status: {"$ref": "#" + _pointer("components", "responses", name)}
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
        answer, where = self.resolve(answer, _pointer_join(where, str(status)))
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
        validator = self.validator(_pointer_join(where, "content", JSON, "schema"))
        problems.extend(
            f"{what}: {'/'.join(map(str, e.absolute_path)) or 'body'}: {e.message[:300]}"
            for e in validator.iter_errors(value)
        )
        return problems


def _pointer_join(base: str, *parts: str) -> str:
    return base + _pointer(*parts)


# -- strategies ------------------------------------------------------------------------------

ODD_STRINGS = (
    "",
    " ",
    "\t\n",
    "\x00",
    "\x1c",
    "\u00a0",
    "\u2028",
    "\u202e\u202dreversed",
    "\ufeffbom",
    "e\u0301\u0301\u0301",
    "👩\u200d👩\u200d👧",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "\U0010ffff",
    "\ud800",
    "\udfff\ud800",
    "日本語",
    "null",
    "true",
    "0",
    "-1",
    "1e999",
    "[🧠] hud",
    "'; DROP TABLE feed; --",
    "x" * 5000,
)
HUGE_NUMBERS = (
    0,
    -0.0,
    1,
    -1,
    1.0,
    0.5,
    5e-324,
    2**31,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**64 - 1,
    2**64,
    -(2**63) - 1,
    10**30,
    -(10**30),
    1.7976931348623157e308,
    -1.7976931348623157e308,
)
NASTY_VALUES: tuple[Json, ...] = (
    None,
    True,
    False,
    [],
    {},
    [None],
    {"": None},
    {"data": "x"},
    *HUGE_NUMBERS,
    *ODD_STRINGS,
)
NASTY_PARAMS = (
    "",
    " ",
    " 7 ",
    "+7",
    "1_000",
    "٣",
    "１２",
    "-1",
    "0",
    "1.5",
    "0x10",
    "1e3",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "1e309",
    "9" * 20,
    "-" + "9" * 20,
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "9" * 4400,  # more digits than int() takes; a request line under aiohttp's 8190 bytes
    "true",
    "null",
    "\x00",
    "💥",
    "%",
    "&after=1",
)
NASTY_BODIES = (
    b"",
    b" ",
    b"null",
    b"true",
    b"0",
    b"-1",
    b"1e999",
    b'"text"',
    b"[]",
    b"[{}]",
    b"{",
    b"}",
    b"{}",
    b'{"text":',
    b'{"text": "x"',
    b"{'text': 'x'}",
    b'{"text": "x",}',
    b'{"text": "x"} trailing',
    b'{"text": "x"}{"text": "y"}',
    b'{"text": "x", "text": 5}',
    b"NaN",
    b'{"type": "text", "ts": NaN}',
    b'{"type": "text", "ts": Infinity}',
    b'{"type": "text", "ts": 1e999}',
    b'{"type": "text", "ts": -1e999}',
    b'{"type": "text", "ts": 123456789012345678901234567890}',
    b'{"type": "text", "ts": 1, "meta": {"ssim": 1e400}}',
    b'{"intervalMs": 1e999}',
    b'{"intervalMs": 123456789012345678901234567890}',
    b'{"maxTokens": 18446744073709551616}',
    b"\xef\xbb\xbf{}",
    b"\xff\xfe{\x00}\x00",
    b'{"text": "\\ud800"}',
    b'{"text": "\xff"}',
    b'{"text": "\xed\xa0\x80"}',
    b"\x00",
    b"[" * 5000 + b"]" * 5000,
    b'{"a":' * 2000 + b"1" + b"}" * 2000,
    b'{"type": "text", "ts": 1, "meta": ' + b'{"a":' * 1000 + b"1" + b"}" * 1001,
)

_text = st.text(max_size=30) | st.sampled_from(ODD_STRINGS)
json_values: st.SearchStrategy[Json] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text
    | st.sampled_from(NASTY_VALUES),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_text, children, max_size=4),
    max_leaves=12,
)


def inline(node: Json, contract: Contract) -> Json:
    """``node`` with every local ``$ref`` replaced by its target (hypothesis-jsonschema
    resolves references only within one schema)."""
    if isinstance(node, list):
        return [inline(item, contract) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: inline(value, contract) for key, value in node.items() if key != "$ref"}
    if "$ref" in node:
        target = inline(contract.at(node["$ref"].removeprefix("#")), contract)
        return {**out, "allOf": [*out.get("allOf", []), target]} if out else target
    return out


def property_names(node: Json) -> set[str]:
    """Every property name a schema mentions, at any depth."""
    if isinstance(node, list):
        return set().union(*(property_names(item) for item in node))
    if not isinstance(node, dict):
        return set()
    names = set(node.get("properties", {})) | set(node.get("required", []))
    return names.union(*(property_names(value) for value in node.values()))


@st.composite
def _mutated(draw: st.DrawFn, base: st.SearchStrategy[Json], names: tuple[str, ...]) -> Json:
    """A valid body with one field set to junk or removed, maybe one level down."""
    value = copy.deepcopy(draw(base))
    if not isinstance(value, dict):
        return value
    target = value
    children = sorted(k for k, v in value.items() if isinstance(v, dict))
    descend = draw(st.booleans())
    if children and descend:
        target = value[draw(st.sampled_from(children))]
    if target and draw(st.integers(0, 3)) == 0:
        del target[draw(st.sampled_from(sorted(target)))]
    else:
        key = draw(st.sampled_from(sorted({*target, *names})) | _text)
        target[key] = draw(json_values)
    return value


@st.composite
def _encoded(draw: st.DrawFn, values: st.SearchStrategy[Json]) -> bytes:
    """A JSON value as bytes, escaped or raw (lone surrogates become invalid UTF-8)."""
    text = json.dumps(draw(values), ensure_ascii=draw(st.booleans()))
    return text.encode("utf-8", "surrogatepass")


@st.composite
def _truncated(draw: st.DrawFn, bodies: st.SearchStrategy[bytes]) -> bytes:
    body = draw(bodies)
    return body[: draw(st.integers(0, max(len(body) - 1, 0)))]


@dataclass(frozen=True, slots=True)
class Case:
    """One request."""

    method: str
    path: str
    params: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    chunked: bool = False
    kind: str = "schema"
    """How it was made: ``schema``, ``mutated``, ``arbitrary``, ``raw``, ``corpus``, ..."""

    def describe(self) -> str:
        shown = self.body if self.body is None or len(self.body) < 300 else self.body[:300]
        return (
            f"{self.method.upper()} {self.path} params={self.params} headers={self.headers} "
            f"body={shown!r} chunked={self.chunked} ({self.kind})"
        )


def _to_param(value: Json) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _cap_wait(op: Operation, params: dict[str, str]) -> dict[str, str]:
    """A long-poll ``wait`` the relay accepts is scaled down to :data:`LONG_POLL_CAP_S`."""
    raw = params.get("wait")
    if op.path != "/agent/digest" or raw is None:
        return params
    try:
        wait = float(raw)
    except ValueError:
        return params
    if 0 < wait <= 60:
        return {**params, "wait": repr(wait * LONG_POLL_CAP_S / 60)}
    return params


def _fits_request_line(query: Mapping[str, str]) -> bool:
    """Whether the query leaves the request line under aiohttp's 8190 bytes: a longer one is
    refused by its HTTP parser (a plain-text 400) before it reaches the API."""
    return sum(len(k) + len(v.encode()) * 3 for k, v in query.items()) < 7000


def _param_values(parameter: Mapping[str, Any], contract: Contract) -> st.SearchStrategy[str]:
    schema = inline(parameter["schema"], contract)
    values = (
        from_schema(schema).map(_to_param) | st.sampled_from(NASTY_PARAMS) | st.text(max_size=12)
    )
    if parameter["in"] == "header":  # what HTTP can carry in a header at all
        return values.filter(lambda v: v.isascii() and v.isprintable() and v == v.strip())
    return values


@st.composite
def _auth(draw: st.DrawFn, token: str) -> dict[str, str]:
    # Hypothesis leans to the first choices (small integers): the token, most of the time.
    choice = draw(st.sampled_from(("token",) * 18 + ("none", "wrong")))
    if choice == "none":
        return {}
    if choice == "wrong":
        return {
            "Authorization": draw(st.sampled_from(["Bearer", "Bearer wrong", token, "Basic x"]))
        }
    return {"Authorization": f"Bearer {token}"}


def case_strategy(op: Operation, contract: Contract, token: str) -> st.SearchStrategy[Case]:
    """Requests for ``op``: its parameters and body, valid and not."""
    params = [p for p in op.spec.get("parameters", []) if p["in"] in ("query", "header")]
    query = st.fixed_dictionaries(
        {},
        optional={p["name"]: _param_values(p, contract) for p in params if p["in"] == "query"},
    ).filter(_fits_request_line)
    header_params = st.fixed_dictionaries(
        {},
        optional={p["name"]: _param_values(p, contract) for p in params if p["in"] == "header"},
    )
    body_spec = op.spec.get("requestBody", {}).get("content", {}).get(JSON)
    bodies: st.SearchStrategy[tuple[str, bytes | None]] = st.just(("schema", None))
    if body_spec is not None:
        schema = inline(body_spec["schema"], contract)
        valid = from_schema(schema)
        names = tuple(sorted(property_names(schema)))
        bodies = st.one_of(
            _encoded(valid).map(lambda b: ("schema", b)),
            _encoded(_mutated(valid, names)).map(lambda b: ("mutated", b)),
            _encoded(json_values).map(lambda b: ("arbitrary", b)),
            st.sampled_from(NASTY_BODIES).map(lambda b: ("raw", b)),
            _truncated(_encoded(valid)).map(lambda b: ("truncated", b)),
            st.binary(max_size=40).map(lambda b: ("bytes", b)),
        )

    @st.composite
    def build(draw: st.DrawFn) -> Case:
        kind, body = draw(bodies)
        headers = {**draw(header_params), **draw(_auth(token))}
        if body is not None:
            headers["Content-Type"] = draw(
                st.sampled_from([JSON, JSON, JSON, "text/plain", "application/x-www-form"])
            )
        return Case(
            method=op.method,
            path=op.path,
            params=_cap_wait(op, draw(query)),
            headers=headers,
            body=body,
            chunked=body is not None and draw(st.sampled_from((False, False, False, True))),
            kind=kind,
        )

    return build()


# -- the run ---------------------------------------------------------------------------------


@dataclass
class FuzzReport:
    """What a fuzz run sent and found."""

    cases: int = 0
    by_operation: Counter[str] = field(default_factory=Counter)
    by_status: Counter[int] = field(default_factory=Counter)
    by_kind: Counter[str] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)
    """Answers with a 5xx (503 included: nothing here should make an actor slow)."""
    problems: list[str] = field(default_factory=list)
    """Answers the document does not describe, or a body verdict against the schema."""
    unsendable: int = 0
    """Cases the client could not put into an HTTP request (not counted in ``cases``)."""

    def summary(self) -> str:
        statuses = ", ".join(f"{s}: {n}" for s, n in sorted(self.by_status.items()))
        return (
            f"fuzz: {self.cases} cases, {len(self.server_errors)} 5xx, "
            f"{len(self.problems)} contract problems; statuses {statuses}"
            + (f"; {self.unsendable} unsendable" if self.unsendable else "")
        )


class Fuzzer:
    """Sends cases to a live relay and checks each answer against the contract."""

    def __init__(
        self, client: httpx.Client, contract: Contract, token: str, report: FuzzReport
    ) -> None:
        self.client = client
        self.contract = contract
        self.token = token
        self.report = report

    def send(self, case: Case) -> None:
        """One request; its answer checked and counted."""
        content: bytes | Iterator[bytes] | None = case.body
        if case.body is not None and case.chunked:
            content = _chunks(case.body)
        request = self.client.build_request(
            case.method.upper(),
            case.path,
            params=case.params,
            headers=case.headers,
            content=content,
        )
        path = request.url.path  # as sent: httpx resolves dot segments
        op = self.contract.operation(case.method, path)
        streaming = op is not None and SSE in _success_types(op)
        try:
            response = self.client.send(request, stream=streaming)
        except httpx.LocalProtocolError:  # HTTP itself cannot carry it: nothing was sent
            self.report.unsendable += 1
            return
        try:
            body = _stream_head(response) if streaming else response.content
        finally:
            response.close()
        self._record(replace(case, path=path), response.status_code, response.headers, body)

    def _record(self, case: Case, status: int, headers: Mapping[str, str], body: bytes) -> None:
        report = self.report
        report.cases += 1
        report.by_operation[f"{case.method.upper()} {case.path}"] += 1
        report.by_status[status] += 1
        report.by_kind[case.kind] += 1
        if status >= 500:
            report.server_errors.append(f"{status} {body[:200]!r} for {case.describe()}")
        problems = self.contract.check(case.method, case.path, status, headers, body)
        problems.extend(self._verdict(case, status))
        report.problems.extend(f"{p} for {case.describe()}" for p in problems)

    def _verdict(self, case: Case, status: int) -> list[str]:
        """A body the schema accepts must be accepted, one it refuses refused."""
        op = self.contract.operation(case.method, case.path)
        if op is None or case.body is None or status in (401, 403, 404, 413) or status >= 500:
            return []
        if case.headers.get("Authorization") != f"Bearer {self.token}":
            return []
        try:
            value = orjson.loads(case.body)  # what the relay sees, exactly as it parses it
        except orjson.JSONDecodeError:
            valid = False
        else:
            if _has_whole_float(value) or _nests_deeper(value, MAX_NESTING):
                # What JSON Schema cannot say: 1 is not 1.0 (maxTokens takes only 1), and the
                # nesting limit of a sense event (documented in words).
                return []
            pointer = _pointer("paths", op.path, op.method, "requestBody", "content", JSON)
            valid = self.contract.validator(pointer + "/schema").is_valid(value)
        if valid and not 200 <= status < 300:
            return [f"schema-valid body refused with {status}"]
        if not valid and 200 <= status < 300:
            return [f"schema-invalid body accepted with {status}"]
        return []


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


def _success_types(op: Operation) -> set[str]:
    ok = op.spec["responses"].get("200", {})
    return set(ok.get("content", {}))


def _chunks(body: bytes) -> Iterator[bytes]:
    for start in range(0, len(body), 7):
        yield body[start : start + 7]


def _stream_head(response: httpx.Response) -> bytes:
    """Nothing of a stream but its first block (``retry: ...``, read to see that it flows;
    its content type is checked, its events elsewhere); a whole answer that is no stream."""
    if response.headers.get("content-type", "").split(";")[0] != SSE:
        return response.read()
    received = b""
    for chunk in response.iter_raw():
        received += chunk
        if b"\n\n" in received:
            break
    return b""


def fixed_cases(contract: Contract, token: str) -> list[Case]:
    """The same every run: the nasty bodies for each operation with a body, every method a
    path does not answer, ``HEAD`` on each ``GET``, and unknown paths."""
    auth = {"Authorization": f"Bearer {token}"}
    cases: list[Case] = []
    for op in contract.operations():
        if "requestBody" in op.spec:
            cases += [
                Case(op.method, op.path, headers=auth, body=b, kind="corpus") for b in NASTY_BODIES
            ]
            cases += [
                Case(op.method, op.path, headers=auth, body=body, kind="corpus")
                for body in _field_bodies(op, contract)
            ]
    for path, item in contract.paths.items():
        for method in ("put", "patch", "delete", "post", "get"):
            if method not in item:
                cases.append(Case(method, path, headers=auth, body=b"{}", kind="method"))
        if "get" in item:
            cases.append(Case("head", path, headers=auth, kind="method"))
    for path in ("/", "/nowhere", "/feed/", "/FEED", "/agent", "/feed/../health", "/%00", "/💥"):
        cases.append(Case("get", path, headers=auth, kind="path"))
    return cases


def _field_bodies(op: Operation, contract: Contract) -> list[bytes]:
    """An example body of ``op`` with each of its fields set to each nasty value in turn."""
    pointer = _pointer("paths", op.path, op.method, "requestBody", "content", JSON, "schema")
    schema, _ = contract.resolve(contract.at(pointer), pointer)
    base: dict[str, Json] = dict(_EXAMPLES.get(op.path, {}))
    bodies: list[bytes] = []
    for name in sorted(schema.get("properties", {})):
        bodies += [json.dumps({**base, name: value}).encode() for value in NASTY_VALUES]
    return bodies


_EXAMPLES: dict[str, dict[str, Json]] = {
    "/feed": {"text": "hello"},
    "/sense": {"type": "text", "ts": 1769901200000, "ocr": "x", "meta": {"app": "Code"}},
    "/agent/config": {"enabled": True},
    "/debug/fault": {"actor": "context", "kind": "crash"},
}


def fuzz(
    base_url: str,
    contract: Contract,
    *,
    token: str,
    examples: int,
    seed: int,
    skip: frozenset[tuple[str, str]] = frozenset(),
) -> FuzzReport:
    """Fuzz every operation of ``contract`` but ``skip`` ((method, path) pairs) on the relay at
    ``base_url``: :func:`fixed_cases`, then ``examples`` generated cases per operation,
    deterministic for a ``seed``."""
    report = FuzzReport()
    with httpx.Client(base_url=base_url, timeout=10) as client:
        fuzzer = Fuzzer(client, contract, token, report)
        for case in fixed_cases(contract, token):
            if (case.method, case.path) not in skip:
                fuzzer.send(case)
        for op in contract.operations():
            if op.method == "options" or (op.method, op.path) in skip:
                continue
            _generate(fuzzer, case_strategy(op, contract, token), examples, seed)
        for op in contract.operations():  # the preflights take no input worth generating
            if op.method == "options":
                fuzzer.send(Case("options", op.path, kind="preflight"))
    return report


def _generate(fuzzer: Fuzzer, cases: st.SearchStrategy[Case], examples: int, seed: int) -> None:
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(cases)
    def run(case: Case) -> None:
        fuzzer.send(case)

    hypothesis_seed(seed)(run)()
