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

:class:`SocketFuzzer` does the same for what the overlay sends on its WebSocket: messages
made from the document's ``x-messages`` (valid, mutated, arbitrary JSON, raw bytes), a fixed
corpus of malformed ones (each field of each type set to junk or left out, binary frames,
messages over the size the relay reads, unknown types). The socket must stay open, the
relay must act on a message exactly when its schema says it is valid, and ``/health`` must
answer 200 after each.
"""

from __future__ import annotations

import copy
import gzip
import json
import re
import socket
import struct
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
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

from actors.audio.core.wav import wav_bytes
from actors.core.bodies import MAX_NESTING
from tests.transport.overlay_client import BINARY, TEXT, Closed, Feed, OverlayClient, Raw
from transport.audio.handler import WAV_TYPES
from transport.openapi_schemas import JSON, SSE
from transport.overlay.messages import COMMAND_NOTICES, MAX_MESSAGE_BYTES, CommandAction

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
    # text made to be slow (tests/data/adversarial_text.json): a page of tokens, a line each;
    # a minified stack trace; a window title a backtracking pattern would never finish
    b'{"text": "' + b"xoxb-1a2b3c4d5e6f\\n" * 2000 + b'"}',
    b'{"type": "text", "ts": 1, "ocr": "TypeError: x\\n   at ' + b"." * 200_000 + b'"}',
    b'{"type": "text", "ts": 1, "ocr": "'
    + b"sk-1a2b3c4d5e6f7g8h\\n" * 3000
    + b'", "meta": {"windowTitle": "'
    + b"a" * 60
    + b'!"}}',
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
    """The body as the relay reads it (decoded): what the schema verdict is about."""
    chunked: bool = False
    kind: str = "schema"
    """How it was made: ``schema``, ``mutated``, ``arbitrary``, ``raw``, ``corpus``, ..."""
    wire: bytes | None = None
    """What is sent when it is not ``body`` as it is: compressed, or mislabelled."""
    expect: int | None = None
    """The status it must get, when its headers decide it rather than its body's schema."""

    def describe(self) -> str:
        sent = self.body if self.wire is None else self.wire
        shown = sent if sent is None or len(sent) < 300 else sent[:300]
        return (
            f"{self.method.upper()} {self.path} params={self.params} headers={self.headers} "
            f"body={shown!r} chunked={self.chunked} ({self.kind})"
        )


GENERATED_CONTENT_TYPES: tuple[str | None, ...] = (
    JSON,
    JSON,
    JSON,
    None,
    "application/json; charset=utf-8",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
)
"""``Content-Type`` of a generated body (``None``: no header). A body is read as JSON whatever
it says; one that is not JSON under a type that is not JSON is a 415 (a 4xx, as the verdict
wants of an invalid body)."""
GENERATED_CODINGS: tuple[str | None, ...] = (
    *(None,) * 8,
    "gzip",
    "deflate",
    "identity",
    "br",
    "mislabelled",
)
"""``Content-Encoding`` of a generated body: none most of the time; a coding it really has
(the verdict is the decoded body's); one the relay does not read (415); or ``gzip`` on a
body that is not (400)."""


def _coded(coding: str, body: bytes) -> tuple[str, bytes, int | None]:
    """The ``Content-Encoding``, the bytes sent and the status due (``None``: the body's
    verdict decides) for a generated body in ``coding``."""
    if coding == "gzip":
        return "gzip", gzip.compress(body), None
    if coding == "deflate":
        return "deflate", zlib.compress(body), None
    if coding == "identity":
        return "identity", body, None
    if coding == "br":
        return "br", body, 415
    return "gzip", body, 400  # not gzip at all (an empty body: "empty", a 400 as well)


def _to_param(value: Json) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


LONG_POLLS = ("/agent/digest", "/escalation/pending")
"""The paths whose ``wait`` is a long-poll."""


def _cap_wait(op: Operation, params: dict[str, str]) -> dict[str, str]:
    """A long-poll ``wait`` the relay accepts is scaled down to :data:`LONG_POLL_CAP_S`."""
    raw = params.get("wait")
    if op.path not in LONG_POLLS or raw is None:
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
    content = op.spec.get("requestBody", {}).get("content", {})
    body_spec = content.get(JSON)
    bodies: st.SearchStrategy[tuple[str, bytes | None]] = st.just(("schema", None))
    if AUDIO_WAV in content:
        bodies = _audio_bodies()
    elif body_spec is not None:
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
        wire: bytes | None = None
        expect: int | None = None
        if body is not None:
            media = AUDIO_CONTENT_TYPES if AUDIO_WAV in content else GENERATED_CONTENT_TYPES
            content_type = draw(st.sampled_from(media))
            if content_type is not None:
                headers["Content-Type"] = content_type
            coding = draw(st.sampled_from(GENERATED_CODINGS))
            if coding is not None:
                label, wire, expect = _coded(coding, body)
                headers["Content-Encoding"] = label
            if AUDIO_WAV in content and _audio_media(content_type) is None:
                expect = 415  # /audio refuses another media type before it reads the body
        return Case(
            method=op.method,
            path=op.path,
            params=_cap_wait(op, draw(query)),
            headers=headers,
            body=body,
            chunked=body is not None and draw(st.sampled_from((False, False, False, True))),
            kind=kind,
            wire=wire,
            expect=expect,
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
    """Answers the document does not describe, a body verdict against the schema, a status
    other than the one a header case is due, a non-JSON answer to a raw HTTP case, a refused
    request that changed something, or a ``/health`` that is not 200 after one."""
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
        sent = case.body if case.wire is None else case.wire
        content: bytes | Iterator[bytes] | None = sent
        if sent is not None and case.chunked:
            content = _chunks(sent)
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

    def send_refusal(self, case: Case) -> None:
        """:meth:`send`, and when ``case`` is due a 4xx, check that it changed nothing."""
        before = self.state() if case.expect is not None and case.expect >= 400 else None
        self.send(case)
        if before is not None:
            self._unchanged(before, case.describe())

    def send_raw(self, host: str, port: int, case: RawCase) -> None:
        """A :class:`RawCase` over a socket: its answers are counted and checked (JSON, a
        status it may get, no 5xx); a refused one must change nothing."""
        before = self.state() if case.refused else None
        answers = raw_exchange(
            host, port, case.data, then=case.then, answers=case.answers, timeout_s=case.timeout_s
        )
        report = self.report
        report.cases += 1
        report.by_operation["raw HTTP"] += 1
        report.by_kind["raw-http"] += 1
        what = f"raw {case.name!r}"
        for answer in answers:
            report.by_status[answer.status] += 1
            if answer.status >= 500:
                report.server_errors.append(f"{answer.status} {answer.body[:200]!r} for {what}")
            if answer.status >= 200 and answer.status != 204 and not answer.is_json:
                report.problems.append(f"{what}: not JSON: {answer.headers} {answer.body[:80]!r}")
        statuses = [a.status for a in answers if a.status >= 200]
        if case.then == "read" and not statuses:
            report.problems.append(f"{what}: no answer")
        elif any(status not in case.expect for status in statuses):
            report.problems.append(f"{what}: got {statuses}, expected one of {case.expect}")
        if before is not None:
            self._unchanged(before, what)

    def state(self) -> tuple[Any, ...]:
        """What a refused request must not change: the newest feed and sense ids, the agent's
        configuration and the clients' reported figures."""
        auth = {"Authorization": f"Bearer {self.token}"}
        feed = self.client.get("/feed", headers=auth).json()["messages"]
        sense = self.client.get("/sense?meta_only=true", headers=auth).json()["events"]
        config = self.client.get("/agent/config", headers=auth).json()["config"]
        profiling = self.client.get("/health", headers=auth).json()["profiling"]
        newest = (feed[-1]["id"] if feed else 0, sense[-1]["id"] if sense else 0)
        return (*newest, config, profiling)

    def _unchanged(self, before: tuple[Any, ...], what: str) -> None:
        if self.state() != before:
            self.report.problems.append(f"refused, yet it changed what is stored: {what}")
        health = self.client.get("/health").status_code
        if health != 200:
            self.report.problems.append(f"/health answered {health} after {what}")

    def server_side_5xx(self) -> int:
        """Requests the relay counted with a 5xx (``GET /metrics``), answered or not: a client
        that left mid-body gets no answer, but its request is counted."""
        text = self.client.get("/metrics", headers={"Authorization": f"Bearer {self.token}"})
        return sum(int(float(n)) for n in _SERVER_ERRORS.findall(text.text))

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
        if op is None or case.body is None or status in (401, 403, 404) or status >= 500:
            return []
        if case.headers.get("Authorization") != f"Bearer {self.token}":
            return []
        if case.expect is not None:
            return [] if status == case.expect else [f"expected {case.expect}, got {status}"]
        if status == 413:
            return []
        if AUDIO_WAV in op.spec["requestBody"]["content"]:
            return _audio_verdict(case, status)
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


def _audio_media(content_type: str | None) -> str | None:
    """The audio media type ``/audio`` reads in ``content_type`` (lower case), or ``None``."""
    media = (content_type or "").partition(";")[0].strip().lower()
    return media if media in (*WAV_TYPES, "audio/l16") else None


def _audio_verdict(case: Case, status: int) -> list[str]:
    """An audio body: a media type the relay does not read is a 415, ``audio/L16`` of another
    rate or channel count a 400, a WAV made whole of 16 kHz mono samples (the ``schema``
    kind, as long as the samples are) a 200; anything else a 200 or a 400."""
    header = case.headers.get("Content-Type", "")
    media = _audio_media(header)
    if media is None:
        expected = {415}
    elif media == "audio/l16" and "rate=16000" not in header.replace(" ", "").lower():
        expected = {400}
    elif case.kind == "schema" and case.wire is None and media in WAV_TYPES:
        expected = {200}
    else:
        expected = {200, 400}
    return [] if status in expected else [f"audio answered {status}, expected {expected}"]


_SERVER_ERRORS = re.compile(r'^relay_http_requests_total\{[^}]*status="5\d\d"[^}]*\} (\S+)$', re.M)


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


AUDIO_WAV = "audio/wav"
AUDIO_CONTENT_TYPES = (
    "audio/wav",
    "audio/x-wav",
    "audio/L16; rate=16000; channels=1",
    "audio/L16; rate=16000",
    "audio/L16; rate=8000",
    "audio/L16",
    "audio/mpeg",
    "application/json",
    None,
)
"""What a generated audio body is sent as: the types the relay reads, and others."""


def _audio_bodies() -> st.SearchStrategy[tuple[str, bytes | None]]:
    """Audio bodies: WAVs of generated samples (valid, cut short, with a header byte
    changed), raw samples, and bytes of any kind."""
    samples = st.binary(min_size=2, max_size=3200).map(lambda b: b[: len(b) // 2 * 2])
    wavs = samples.map(wav_bytes)
    return st.one_of(
        wavs.map(lambda b: ("schema", b)),
        samples.map(lambda b: ("raw", b)),
        _truncated(wavs).map(lambda b: ("truncated", b)),
        st.tuples(wavs, st.integers(0, 43), st.integers(0, 255))
        .map(lambda t: t[0][: t[1]] + bytes([t[2]]) + t[0][t[1] + 1 :])
        .map(lambda b: ("mutated", b)),
        st.binary(max_size=80).map(lambda b: ("bytes", b)),
    )


def _field_bodies(op: Operation, contract: Contract) -> list[bytes]:
    """An example body of ``op`` with each of its fields set to each nasty value in turn
    (none for a body that is not JSON)."""
    if JSON not in op.spec["requestBody"]["content"]:
        return []
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
    "/profiling/sense": {"rssMb": 212.4, "uptimeS": 60, "ts": 1769901200000},
}


# -- headers -----------------------------------------------------------------------------------

HEADER_PATHS = ("/feed", "/sense", "/agent/config", "/profiling/sense")
"""Where :func:`header_cases` posts (not ``/debug/fault``: a valid drill crashes an actor)."""
CONTENT_TYPES: tuple[str | None, ...] = (
    None,
    "",
    JSON,
    "application/json; charset=utf-8",
    "APPLICATION/JSON",
    "application/vnd.api+json",
    "text/plain",
    "text/plain;charset=UTF-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/octet-stream",
    "text/html",
    "garbage/;;;",
)
"""``Content-Type`` values sent with a JSON body (read, whatever the type) and with a form
body (a 400 under no type or a JSON type, else a 415)."""


def _same(body: bytes) -> bytes:
    return body


def _raw_deflate(body: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(body) + compressor.flush()


def _cut_gzip(body: bytes) -> bytes:
    return gzip.compress(body)[:-12]


def _gzip_and_junk(body: bytes) -> bytes:
    return gzip.compress(body) + b"junk"


def _gzip_twice(body: bytes) -> bytes:
    return gzip.compress(gzip.compress(body))


CODINGS: tuple[tuple[str, Callable[[bytes], bytes], int], ...] = (
    ("gzip", gzip.compress, 200),
    ("x-gzip", gzip.compress, 200),
    ("GZIP", gzip.compress, 200),
    ("deflate", zlib.compress, 200),
    ("deflate", _raw_deflate, 200),
    ("identity", _same, 200),
    ("", _same, 200),
    ("gzip, identity", gzip.compress, 200),
    ("gzip", _same, 400),
    ("deflate", _same, 400),
    ("gzip", _cut_gzip, 400),
    ("gzip", _gzip_and_junk, 400),
    ("gzip", zlib.compress, 400),
    ("deflate", gzip.compress, 400),
    ("br", _same, 415),
    ("br", gzip.compress, 415),
    ("zstd", _same, 415),
    ("compress", _same, 415),
    ("x-compress", _same, 415),
    ("unknown-coding", _same, 415),
    ("gzip, gzip", _gzip_twice, 415),
    ("gzip, br", _same, 415),
    ("deflate, gzip", _same, 415),
)
"""``Content-Encoding``, how the body is really encoded, and the status due."""


def _media_is_json(content_type: str | None) -> bool:
    media = (content_type or "").partition(";")[0].strip().lower()
    return not media or "json" in media


BROWSER_HEADERS: tuple[tuple[dict[str, str], int], ...] = (
    ({"Host": "evil.example:18791", "Origin": "http://evil.example:18791"}, 421),  # rebound
    ({"Host": "evil.example", "Sec-Fetch-Site": "same-origin"}, 421),
    ({"Host": "127.0.0.1.evil.example"}, 421),
    ({"Host": "localhost:1"}, 421),
    ({"Host": ""}, 421),
    ({"Host": "LOCALHOST."}, 200),  # a loopback name, without a port
    ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, 403),  # an <img>, a form
    ({"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "navigate"}, 403),  # localhost:3000
    ({"Sec-Fetch-Site": "cross-site", "Origin": "http://page.example"}, 403),
    ({"Sec-Fetch-Site": "not-a-site"}, 403),
    ({"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"}, 200),
    ({"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate"}, 200),  # typed in
)
"""Headers a browser sends (or a page rebinding its name makes it send), and the status due:
a ``Host`` the relay does not serve is a 421 (DNS rebinding), a fetch for a page of another
site (``Sec-Fetch-Site``) is a 403; same-origin and typed-in requests pass."""


def header_cases(contract: Contract, token: str) -> list[Case]:
    """Requests whose headers decide the answer, each with the status it is due: every
    :data:`CONTENT_TYPES` value with a JSON body and with a form body; every :data:`CODINGS`
    entry; a gzip bomb (a gibibyte of zeros in a megabyte: 413); chunked compressed bodies;
    ``Expect``; :data:`BROWSER_HEADERS` (``Host``, Fetch Metadata). For the operations of
    :data:`HEADER_PATHS`."""
    auth = {"Authorization": f"Bearer {token}"}
    bomb = gzip_bomb(1024)
    cases: list[Case] = []
    for op in contract.operations():
        if op.method != "post" or op.path not in HEADER_PATHS:
            continue
        valid = json.dumps(_EXAMPLES[op.path]).encode()
        sent: list[tuple[dict[str, str], bytes, bytes | None, int, bool]] = []
        for content_type in CONTENT_TYPES:
            typed = {} if content_type is None else {"Content-Type": content_type}
            form = 400 if _media_is_json(content_type) else 415
            sent += [(typed, valid, None, 200, False), (typed, b"text=hello", None, form, False)]
        for label, encode, status in CODINGS:
            sent.append(({"Content-Encoding": label}, valid, encode(valid), status, False))
        sent += [
            ({"Content-Encoding": "gzip"}, valid, bomb, 413, False),
            ({"Content-Encoding": "gzip"}, valid, gzip.compress(valid), 200, True),
            ({"Content-Encoding": "br"}, valid, valid, 415, True),
            ({}, valid, None, 200, True),
            ({"Expect": "100-continue"}, valid, None, 200, False),
            ({"Expect": "100-continue", "Content-Encoding": "gzip"}, valid, bomb, 413, False),
            ({"Expect": "something-else"}, valid, None, 417, False),
            *((headers, valid, None, status, False) for headers, status in BROWSER_HEADERS),
        ]
        cases += [
            Case(
                op.method,
                op.path,
                headers={**auth, **headers},
                body=body,
                wire=wire,
                chunked=is_chunked,
                kind="header",
                expect=status,
            )
            for headers, body, wire, status, is_chunked in sent
        ]
    return cases


@dataclass(frozen=True, slots=True)
class RawCase:
    """Bytes no HTTP client library would send, and what may come back."""

    name: str
    data: bytes
    expect: tuple[int, ...] = (400,)
    """The statuses its final answers may have."""
    then: str = "read"
    """How the client ends (:data:`RAW_ENDINGS`)."""
    answers: int = 1
    timeout_s: float = 2.0

    @property
    def refused(self) -> bool:
        return all(status >= 400 for status in self.expect)


def raw_cases(token: str) -> list[RawCase]:
    """Requests over a plain socket, with the token: lengths that are wrong, repeated or not
    numbers; ``Content-Length`` with ``Transfer-Encoding``; broken and odd chunks; lines too
    long; no ``Host``; bytes that are not UTF-8 in ``Origin`` and ``Content-Type``; bytes
    that are not HTTP; ``Expect``; a body shorter than its length, then the client closes,
    resets, or only stops sending; a client that closes mid-chunk; a ``Host`` the relay does
    not serve (with ``Expect: 100-continue``, in bytes beyond UTF-8), and HTTP/1.0 without one.
    Every answer must be JSON (a 100 and a 204 have no body), none a 5xx."""
    auth = ("Authorization", f"Bearer {token}")
    body = b'{"text": "raw"}'
    size = str(len(body))

    def feed(headers: list[tuple[str, str]], payload: bytes = body) -> bytes:
        return raw_request("POST", "/feed", [auth, *headers], payload)

    cut = feed([("Content-Length", "100")])  # 100 announced, 15 sent
    return [
        RawCase("two equal lengths", feed([("Content-Length", size), ("Content-Length", size)])),
        RawCase("two lengths", feed([("Content-Length", size), ("Content-Length", "3")])),
        RawCase("length not a number", feed([("Content-Length", "abc")])),
        RawCase("negative length", feed([("Content-Length", "-1")])),
        RawCase("length with a sign", feed([("Content-Length", "+" + size)])),
        RawCase("length list", feed([("Content-Length", f"{size}, {size}")])),
        RawCase("length overflow", feed([("Content-Length", "9" * 30)])),
        RawCase(
            "length and chunked",
            feed([("Content-Length", size), ("Transfer-Encoding", "chunked")], chunked(body)),
        ),
        RawCase("transfer-encoding gzip", feed([("Transfer-Encoding", "gzip")])),
        RawCase("bad chunk size", feed([("Transfer-Encoding", "chunked")], b"zz\r\n" + body)),
        RawCase(
            "chunk extension",
            feed(
                [("Transfer-Encoding", "chunked")], chunked(body).replace(b"\r\n", b";x=1\r\n", 1)
            ),
            expect=(200,),
        ),
        RawCase(
            "trailer",
            feed([("Transfer-Encoding", "chunked")], chunked(body)[:-2] + b"X-Trailer: 1\r\n\r\n"),
            expect=(200,),
        ),
        RawCase(
            "chunked gzip",
            feed(
                [("Transfer-Encoding", "chunked"), ("Content-Encoding", "gzip")],
                chunked(gzip.compress(body)),
            ),
            expect=(200,),
        ),
        RawCase("header too long", feed([("X-Long", "a" * 9000), ("Content-Length", size)])),
        RawCase("too many headers", feed([(f"X-{n}", "v") for n in range(200)])),
        RawCase("NUL in a header", feed([("X-Nul", "a\x00b"), ("Content-Length", size)])),
        RawCase(
            "Origin not UTF-8",
            feed([("Origin", "http://app\xff.test"), ("Content-Length", size)]),
        ),
        RawCase(
            "Content-Type not UTF-8, a body not JSON",
            feed([("Content-Type", "text/\xffplain"), ("Content-Length", "5")], b"hello"),
        ),
        RawCase(
            "Content-Type not UTF-8, a JSON body",
            feed([("Content-Type", "\xff/json"), ("Content-Length", size)]),
            expect=(200,),
        ),
        RawCase("no Host", raw_request("GET", "/health", host=None)),
        RawCase("bare LF", b"GET /health HTTP/1.1\nHost: relay\n\n"),
        RawCase("not HTTP", b"GARBAGE\r\n\r\n"),
        RawCase("TLS hello", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(40)),
        RawCase("request target *", raw_request("GET", "*")),
        RawCase("OPTIONS *", raw_request("OPTIONS", "*"), expect=(204,)),
        RawCase(
            "expect 100-continue",
            feed([("Content-Length", size), ("Expect", "100-continue")]),
            expect=(200,),
        ),
        RawCase("expect other", feed([("Content-Length", size), ("Expect", "x")]), expect=(417,)),
        RawCase(
            "expect 100-continue, rebound Host",
            raw_request(
                "POST",
                "/feed",
                [auth, ("Content-Length", size), ("Expect", "100-continue")],
                body,
                host="evil.example:18791",
            ),
            expect=(421,),
        ),
        RawCase(
            "Host beyond UTF-8",
            b"GET /feed HTTP/1.1\r\nHost: \xe9vil.example\r\nAuthorization: "
            + f"Bearer {token}".encode()
            + b"\r\n\r\n",
            expect=(421,),
        ),
        RawCase("HTTP/1.0 without Host", b"GET /health HTTP/1.0\r\n\r\n", expect=(200,)),
        RawCase("length shorter than the body", feed([("Content-Length", "5")]) + b"\r\n\r\n"),
        RawCase("cut short, then close", cut, then="close"),
        RawCase("cut short, then reset", cut, then="reset"),
        RawCase("cut short, then half-close", cut, then="half-close", timeout_s=0.3),
        RawCase(
            "closed mid-chunk",
            feed([("Transfer-Encoding", "chunked")], b"40\r\n" + body),
            then="close",
        ),
    ]


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
    ``base_url``: :func:`fixed_cases`, :func:`header_cases`, :func:`raw_cases`, then
    ``examples`` generated cases per operation, deterministic for a ``seed``; then the overlay's
    socket (:class:`SocketFuzzer`, unless ``skip`` has ``("get", "/")``): :func:`socket_frames`
    and a quarter of ``examples`` generated messages of each inbound type. At the end, the
    relay's own count of 5xx answers (``GET /metrics``) must be 0 too: it includes requests
    whose client left before the answer."""
    report = FuzzReport()
    url = httpx.URL(base_url)
    host, port = url.host, url.port or 80
    with httpx.Client(base_url=base_url, timeout=10) as client:
        fuzzer = Fuzzer(client, contract, token, report)
        for case in fixed_cases(contract, token):
            if (case.method, case.path) not in skip:
                fuzzer.send(case)
        for case in header_cases(contract, token):
            if (case.method, case.path) not in skip:
                fuzzer.send_refusal(case)
        for raw in raw_cases(token):
            fuzzer.send_raw(host, port, raw)
        for op in contract.operations():
            if op.method == "options" or (op.method, op.path) in skip:
                continue
            _generate(fuzzer.send, case_strategy(op, contract, token), examples, seed)
        for op in contract.operations():  # the preflights take no input worth generating
            if op.method == "options":
                fuzzer.send(Case("options", op.path, kind="preflight"))
        if ("get", SOCKET_PATH) not in skip:
            with SocketFuzzer(fuzzer, host, port) as sockets:
                for frame in socket_frames(contract):
                    sockets.send(frame)
                per_kind = max(1, examples // SOCKET_SHARE)
                for kind in sockets.inbound:
                    _generate(sockets.send, frame_strategy(contract, kind), per_kind, seed)
        counted = fuzzer.server_side_5xx()
        if counted:
            report.server_errors.append(f"/metrics counts {counted} requests with a 5xx")
    return report


def _generate(
    send: Callable[[Any], None], cases: st.SearchStrategy[Any], examples: int, seed: int
) -> None:
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(cases)
    def run(case: Any) -> None:
        send(case)

    hypothesis_seed(seed)(run)()


# -- the overlay's socket ----------------------------------------------------------------------

SOCKET_PATH = "/"
SOCKET_SHARE = 4
"""Generated messages per inbound type: this share of the cases per operation (four types)."""
INBOUND = _pointer("paths", SOCKET_PATH, "get", "responses", "101", "x-messages", "overlayToRelay")
"""Where the document lists what the overlay may send, by ``type``."""
_INBOUND_EXAMPLES: dict[str, dict[str, Json]] = {
    "pong": {"type": "pong", "ts": 1769901200000},
    "profiling": {"type": "profiling", "rssMb": 180, "uptimeS": 30, "ts": 1769901200000},
    "command": {"type": "command", "action": "toggle_audio"},
    "message": {"type": "message", "text": "hello"},
}
NOTICES = frozenset(COMMAND_NOTICES.values())
FIELD_VALUES: tuple[Json, ...] = (
    None,
    True,
    0,
    -1,
    0.5,
    2**64,
    -(10**30),
    "",
    " ",
    "\u2028",
    "\ud800",
    "x" * 5000,
    [],
    {},
    [None],
    {"data": "x"},
)
"""What each field of an inbound message is set to in turn: a share of :data:`NASTY_VALUES`,
one of each kind (each case costs a round trip on the socket and four requests)."""


def _dump(value: Json) -> bytes:
    """``value`` as JSON, huge numbers and lone surrogates included (as a client may send)."""
    return json.dumps(value).encode()


@dataclass(frozen=True, slots=True)
class Frame:
    """One message to the overlay socket: its bytes, and how it was made."""

    data: bytes
    kind: str
    opcode: int = TEXT

    def describe(self) -> str:
        shown = self.data if len(self.data) < 300 else self.data[:300]
        return f"WS {SOCKET_PATH} opcode={self.opcode} {shown!r} ({self.kind})"


def socket_frames(contract: Contract) -> list[Frame]:
    """The fixed corpus: the nasty bodies as text, each field of each inbound message set to
    each nasty value or left out, a type of each kind, binary frames, and messages just over
    the size the relay reads."""
    inbound = contract.at(INBOUND)
    frames = [Frame(body, "ws-corpus") for body in NASTY_BODIES]
    for kind, example in _INBOUND_EXAMPLES.items():
        schema, _ = contract.resolve(inbound[kind], INBOUND)
        names = sorted(property_names(inline(schema, contract)) | set(example))
        for name in names:
            frames += [Frame(_dump({**example, name: value}), "ws-field") for value in FIELD_VALUES]
            rest = {k: v for k, v in example.items() if k != name}
            frames.append(Frame(_dump(rest), "ws-missing"))
        frames.append(Frame(_dump(example), "ws-binary", BINARY))
    padding = "x" * MAX_MESSAGE_BYTES
    frames += [
        Frame(_dump({**_INBOUND_EXAMPLES["message"], "text": padding}), "ws-oversize"),
        Frame(_dump({**_INBOUND_EXAMPLES["pong"], "pad": padding}), "ws-oversize"),
        Frame(_dump({"type": "spawn_command", "text": "x"}), "ws-unknown"),
        Frame(_dump({"type": "app_focus", "app": "Code"}), "ws-unknown"),
        Frame(b"", "ws-corpus"),
    ]
    return frames


def frame_strategy(contract: Contract, kind: str) -> st.SearchStrategy[Frame]:
    """Messages of one inbound ``kind``: valid (from its schema), valid with a field replaced
    or removed, arbitrary JSON, raw bytes; as text frames mostly, some binary."""
    schema = inline(contract.at(INBOUND)[kind], contract)
    valid = from_schema(schema)
    names = tuple(sorted(property_names(schema)))
    bodies = st.one_of(
        _encoded(valid).map(lambda b: ("ws-schema", b)),
        _encoded(_mutated(valid, names)).map(lambda b: ("ws-mutated", b)),
        _encoded(json_values).map(lambda b: ("ws-arbitrary", b)),
        st.sampled_from(NASTY_BODIES).map(lambda b: ("ws-raw", b)),
        st.binary(max_size=40).map(lambda b: ("ws-bytes", b)),
    )
    opcodes = st.sampled_from((TEXT,) * 7 + (BINARY,))
    return st.builds(lambda body, opcode: Frame(body[1], body[0], opcode), bodies, opcodes)


class SocketFuzzer:
    """Sends frames to one overlay socket and checks what each did.

    After each frame, a ``command`` probe: its answer must come (the socket is open and read
    in order), preceded by one more notice only when the frame was a valid ``command``. What
    the relay holds must change only as the document says: a valid ``message`` stores one
    feed item (``source: "overlay"``), a valid ``profiling`` becomes
    ``/health.profiling.overlay``, anything else changes nothing; ``/health`` stays 200. The
    verdict is the schema's (``x-messages``) on the frame as the relay parses it.
    """

    def __init__(self, fuzzer: Fuzzer, host: str, port: int) -> None:
        self.fuzzer = fuzzer
        self.contract = fuzzer.contract
        self.host = host
        self.port = port
        self.inbound: Mapping[str, Any] = self.contract.at(INBOUND)
        self.newest = 0
        """The newest feed id seen."""
        self.last = self._state()
        """What the relay held after the last frame."""
        self.ws = self._open()

    def _open(self) -> OverlayClient:
        auth = {"Authorization": f"Bearer {self.fuzzer.token}"}
        ws = OverlayClient(self.host, self.port, SOCKET_PATH, headers=auth)
        if ws.refusal is not None:
            msg = f"the overlay socket was refused: {ws.refusal}"
            raise RuntimeError(msg)
        return ws

    def __enter__(self) -> SocketFuzzer:
        return self

    def __exit__(self, *_: object) -> None:
        self.ws.close()

    def verdict(self, frame: Frame) -> tuple[str | None, Json]:
        """The inbound type the relay must act on (``None``: it must ignore the frame), and
        the message as the relay parses it."""
        if frame.opcode != TEXT or len(frame.data) > MAX_MESSAGE_BYTES:
            return None, None
        try:
            value = orjson.loads(frame.data)
        except orjson.JSONDecodeError:
            return None, None
        kind = value.get("type") if isinstance(value, dict) else None
        if not isinstance(kind, str) or kind not in self.inbound:
            return None, value
        pointer = _pointer_join(INBOUND, kind)
        return (kind if self.contract.validator(pointer).is_valid(value) else None), value

    def send(self, frame: Frame) -> None:
        report = self.fuzzer.report
        report.cases += 1
        report.by_operation[f"WS {SOCKET_PATH}"] += 1
        report.by_kind[frame.kind] += 1
        acted, value = self.verdict(frame)
        feed_before, profiling_before, _ = self.last  # only these frames change it
        problems = self._exchange(frame, acted, value)
        self.last = feed_after, profiling_after, health = self._state()
        if acted == "message":
            if feed_after != feed_before + 1:
                problems.append(f"a valid message was not stored (newest {feed_after})")
        elif acted == "profiling":
            shown = profiling_after and [profiling_after[k] for k in ("rssMb", "uptimeS", "ts")]
            if shown != [value[k] for k in ("rssMb", "uptimeS", "ts")]:
                problems.append(f"a valid profiling is not shown: {profiling_after}")
        if acted != "message" and feed_after != feed_before:
            problems.append("the feed changed")
        if acted != "profiling" and profiling_after != profiling_before:
            problems.append("/health.profiling.overlay changed")
        if health != 200:
            problems.append(f"/health answered {health}")
        report.problems.extend(f"{p} for {frame.describe()}" for p in problems)

    def _state(self) -> tuple[int, Json, int]:
        """The newest feed id, ``/health.profiling.overlay`` and the status of ``/health``."""
        auth = {"Authorization": f"Bearer {self.fuzzer.token}"}
        client = self.fuzzer.client
        health = client.get("/health", headers=auth)
        after = self.newest
        newer = client.get("/feed", params={"after": after}, headers=auth).json()["messages"]
        self.newest = newer[-1]["id"] if newer else after
        return self.newest, health.json()["profiling"]["overlay"], health.status_code

    def _exchange(self, frame: Frame, acted: str | None, value: Json) -> list[str]:
        """Send ``frame`` and a probe; what went wrong (the socket reopened if it closed)."""
        action = value.get("action") if acted == "command" else None
        probe: CommandAction = "toggle_screen" if action != "toggle_screen" else "toggle_audio"
        notices: list[str] = []
        try:
            self.ws.send_frame(frame.opcode, frame.data)
            self.ws.send({"type": "command", "action": probe})
            while True:
                shown = self.ws.read()
                if isinstance(shown, Raw):
                    return [f"the overlay could not parse {shown.text[:200]!r}: {shown.error}"]
                if isinstance(shown, Feed) and shown.text in NOTICES:
                    if shown.text == COMMAND_NOTICES[probe]:
                        break
                    notices.append(shown.text)
        except (Closed, OSError) as exc:
            self.ws.close()
            self.ws = self._open()
            return [f"the socket did not stay open ({exc})"]
        expected = [COMMAND_NOTICES[action]] if action else []
        return [] if notices == expected else [f"notices {notices}, expected {expected}"]


# -- raw HTTP/1.1 ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RawAnswer:
    """One HTTP answer as it came off the socket (header names in lower case)."""

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def is_json(self) -> bool:
        return self.headers.get("content-type", "").split(";")[0].strip() == JSON


RAW_ENDINGS = ("read", "half-close", "close", "reset")
"""How :func:`raw_exchange` ends its side: read the answers; shut down its sending side,
then read; close at once; or close with a TCP reset (``SO_LINGER`` 0)."""


def raw_exchange(
    host: str,
    port: int,
    data: bytes,
    *,
    then: str = "read",
    answers: int = 1,
    timeout_s: float = 2.0,
) -> list[RawAnswer]:
    """Send ``data`` exactly as given over a new connection and return the answers read.

    An HTTP client library would refuse to send what this is for (two ``Content-Length``
    headers, a length the body does not have, a broken chunk), so this speaks HTTP/1.1 over a
    plain socket. Reading stops at ``answers`` final (non-1xx) answers, when the server closes
    the connection, or after ``timeout_s`` without data; ``then`` is one of
    :data:`RAW_ENDINGS`.
    """
    with socket.create_connection((host, port), timeout=timeout_s) as conn:
        conn.sendall(data)
        if then in ("close", "reset"):
            if then == "reset":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return []
        if then == "half-close":
            conn.shutdown(socket.SHUT_WR)
        received = b""
        parsed: list[RawAnswer] = []
        while sum(1 for a in parsed if a.status >= 200) < answers:
            try:
                chunk = conn.recv(65536)
            except (TimeoutError, ConnectionResetError):
                break
            if not chunk:
                break
            received += chunk
            parsed = parse_answers(received)
        return parse_answers(received)


def parse_answers(data: bytes) -> list[RawAnswer]:
    """The complete answers at the start of ``data`` (an incomplete last one is left out).

    A body is read by ``Content-Length`` (the relay's answers always have one); without it,
    to the end of ``data``.
    """
    answers: list[RawAnswer] = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            break
        status_line, *lines = head.decode("latin-1").split("\r\n")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[1].isdigit():
            break
        headers: dict[str, str] = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        status = int(parts[1])
        length = 0 if status < 200 else int(headers.get("content-length", len(rest)))
        if len(rest) < length:
            break
        answers.append(RawAnswer(status, headers, rest[:length]))
        data = rest[length:]
    return answers


def raw_request(
    method: str,
    target: str,
    headers: list[tuple[str, str]] | None = None,
    body: bytes = b"",
    *,
    host: str | None = "localhost",
) -> bytes:
    """The bytes of a request: the request line, ``Host: <host>`` (none if ``host`` is
    ``None``; ``localhost`` without a port is a name the relay serves), the headers as given
    (repeats and odd values included), a blank line and ``body``."""
    lines = [f"{method} {target} HTTP/1.1", *([f"Host: {host}"] if host is not None else [])]
    lines += [f"{name}: {value}" for name, value in headers or []]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def chunked(body: bytes, size: int = 7) -> bytes:
    """``body`` in the chunked transfer coding, ``size`` bytes a chunk."""
    out = b"".join(
        f"{len(body[i : i + size]):x}\r\n".encode() + body[i : i + size] + b"\r\n"
        for i in range(0, len(body), size)
    )
    return out + b"0\r\n\r\n"


def gzip_bomb(inflated_mib: int) -> bytes:
    """A valid gzip stream of ``inflated_mib`` MiB of zeros, about a thousandth of that.

    Each MiB is compressed after a full flush, which leaves the compressor with no history
    and the output byte-aligned, so every MiB after the first compresses to the same bytes:
    one is repeated, instead of compressing a gibibyte for each test run.
    """
    zeros = bytes(1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    end = compressor.flush()[:-8]  # the last block; the trailer is made for the whole below
    crc = 0
    for _ in range(inflated_mib):
        crc = zlib.crc32(zeros, crc)
    trailer = struct.pack("<II", crc, (inflated_mib << 20) & 0xFFFFFFFF)
    return first + again * (inflated_mib - 1) + end + trailer
