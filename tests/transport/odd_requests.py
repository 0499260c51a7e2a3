"""Requests no generator makes from ``/openapi.json``, sent to a relay and checked: ours.

Schemathesis (``api_fuzz.py``) sends what the document describes, as a client encodes it.
These are the rest, from ``tests/data/odd_requests.json``: bodies no JSON encoder writes
(:func:`fixed_cases`), headers whose value decides the answer (:func:`header_cases`) and
HTTP/1.1 no client library writes (:func:`raw_cases`). :class:`Sender` checks each answer
against the document and its status or body verdict; a refused request must change nothing.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.transport.openapi_contract import Contract, Json, body_verdict
from tests.transport.raw_http import gzip_bomb, raw_exchange
from transport.openapi_schemas import JSON, SSE

CORPUS = json.loads((Path(__file__).parents[1] / "data" / "odd_requests.json").read_text())


def as_bytes(spec: str | list[list[Any]]) -> bytes:
    """A corpus body: a string (each character a byte), or ``[piece, times]`` pairs."""
    text = spec if isinstance(spec, str) else "".join(piece * times for piece, times in spec)
    return text.encode("latin-1")


NASTY_BODIES = tuple(as_bytes(body) for body in CORPUS["bodies"])
EXAMPLES: dict[str, dict[str, Json]] = CORPUS["examples"]
HEADER_PATHS = ("/feed", "/sense", "/agent/config", "/profiling/sense")
"""Where :func:`header_cases` posts (not ``/debug/fault``: a valid drill crashes an actor)."""
UNKNOWN_PATHS = ("/", "/nowhere", "/feed/", "/FEED", "/agent", "/feed/../health", "/%00", "/💥")


_bomb = functools.cache(gzip_bomb)


def _raw_deflate(body: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(body) + compressor.flush()


ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "zlib": zlib.compress,
    "raw-deflate": _raw_deflate,
    "same": lambda body: body,
    "cut-gzip": lambda body: gzip.compress(body)[:-12],
    "gzip-and-junk": lambda body: gzip.compress(body) + b"junk",
    "gzip-twice": lambda body: gzip.compress(gzip.compress(body)),
    "bomb": lambda _: _bomb(1024),  # a gibibyte of zeros in a megabyte
}
"""How a ``headers`` entry of the corpus really encodes its body (``null``: it does not)."""


@dataclass(frozen=True, slots=True)
class Case:
    """One request, and the status it is due when its headers decide it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes | None = None
    """The body as the relay reads it (decoded): what the schema verdict is about."""
    wire: bytes | None = None
    """What is sent when it is not ``body`` as it is: compressed, or mislabelled."""
    chunked: bool = False
    expect: int | None = None

    def describe(self) -> str:
        sent = self.body if self.wire is None else self.wire
        return f"{self.method.upper()} {self.path} {self.headers} {(sent or b'')[:300]!r}"


def fixed_cases(contract: Contract, token: str) -> list[Case]:
    """The nasty bodies for each operation with a body (a 415 where it is not JSON), the
    preflight of each path, ``HEAD`` on each ``GET``, and :data:`UNKNOWN_PATHS`."""
    auth = {"Authorization": f"Bearer {token}"}
    cases: list[Case] = []
    for op in contract.operations():
        if "requestBody" in op.spec:
            due = None if JSON in op.spec["requestBody"]["content"] else 415
            cases += [Case(op.method, op.path, auth, body, expect=due) for body in NASTY_BODIES]
    for path, item in contract.paths.items():
        cases += [Case("options", path, {})] + ([Case("head", path, auth)] if "get" in item else [])
    return cases + [Case("get", path, auth) for path in UNKNOWN_PATHS]


def header_cases(token: str) -> list[Case]:
    """Posts to :data:`HEADER_PATHS` whose headers decide the answer, each with its status:
    each ``contentTypes`` value with a JSON body (read whatever the type) and a form body
    (400 under a JSON type or none, else 415), and each ``headers`` entry of the corpus
    (codings real and not, a gzip bomb, chunked bodies, ``Expect``, ``Host``, Fetch Metadata)."""
    cases: list[Case] = []
    auth = {"Authorization": f"Bearer {token}"}
    for path in HEADER_PATHS:
        valid = json.dumps(EXAMPLES[path]).encode()
        for content_type in CORPUS["contentTypes"]:
            typed = {**auth, **({} if content_type is None else {"Content-Type": content_type})}
            media = (content_type or "").partition(";")[0].strip().lower()
            refused = 400 if not media or "json" in media else 415
            cases += [Case("post", path, typed, valid, expect=200)]
            cases += [Case("post", path, typed, b"text=hello", expect=refused)]
        for headers, encoder, status, is_chunked in CORPUS["headers"]:
            wire = None if encoder is None else ENCODERS[encoder](valid)
            cases.append(Case("post", path, {**auth, **headers}, valid, wire, is_chunked, status))
    return cases


@dataclass(frozen=True, slots=True)
class RawCase:
    """Bytes no HTTP client library would send, and the statuses its answers may have."""

    name: str
    data: bytes
    expect: tuple[int, ...] = (400,)
    then: str = "read"
    """How the client ends (:data:`tests.transport.raw_http.RAW_ENDINGS`)."""
    timeout_s: float = 2.0


def raw_cases(token: str) -> list[RawCase]:
    """The corpus' ``raw`` requests, byte for byte (``{token}``: the token)."""
    return [
        RawCase(
            spec["name"],
            as_bytes(spec["request"]).replace(b"{token}", token.encode()),
            tuple(spec.get("expect", (400,))),
            spec.get("then", "read"),
            spec.get("timeout", 2.0),
        )
        for spec in CORPUS["raw"]
    ]


_SERVER_ERRORS = re.compile(r'^relay_http_requests_total\{[^}]*status="5\d\d"[^}]*\} (\S+)$', re.M)


class Sender:
    """Sends odd requests to a live relay and collects what is wrong with the answers."""

    def __init__(self, client: httpx.Client, contract: Contract, token: str) -> None:
        self.client = client
        self.contract = contract
        self.auth = {"Authorization": f"Bearer {token}"}
        self.problems: list[str] = []
        self.sent = 0

    def send(self, case: Case) -> None:
        """One request; its answer checked (and when it is refused, that it changed nothing)."""
        before = self.state() if case.expect is not None and case.expect >= 400 else None
        sent = case.body if case.wire is None else case.wire
        content: bytes | Iterator[bytes] | None = sent
        if sent is not None and case.chunked:
            content = (sent[i : i + 7] for i in range(0, len(sent), 7))
        request = self.client.build_request(
            case.method.upper(), case.path, headers=case.headers, content=content
        )
        path = request.url.path  # as sent: httpx resolves dot segments
        op = self.contract.operation(case.method, path)
        streaming = op is not None and SSE in op.spec["responses"].get("200", {}).get("content", {})
        response = self.client.send(request, stream=streaming)
        try:  # of a stream, only its head: its events are checked elsewhere
            is_stream = response.headers.get("content-type", "").startswith(SSE)
            body = b"" if is_stream else response.read()
        finally:
            response.close()
        self.sent += 1
        status, what = response.status_code, case.describe()
        problems = self.contract.check(case.method, path, status, response.headers, body)
        if case.expect is not None and status != case.expect:
            problems.append(f"expected {case.expect}, got {status}")
        elif case.expect is None and case.body is not None and "Authorization" in case.headers:
            problems.append(body_verdict(self.contract, case.method, path, case.body, status) or "")
        self.problems += [f"{p} for {what}" for p in problems if p]
        if before is not None:
            self._unchanged(before, what)

    def send_raw(self, host: str, port: int, case: RawCase) -> None:
        """A :class:`RawCase` over a socket: every answer JSON (a 100 and a 204 have no body),
        of a status it may get; one that is refused changes nothing."""
        before = self.state() if all(status >= 400 for status in case.expect) else None
        answers = raw_exchange(host, port, case.data, then=case.then, timeout_s=case.timeout_s)
        self.sent += 1
        what = f"raw {case.name!r}"
        for answer in answers:
            if answer.status >= 200 and answer.status != 204 and not answer.is_json:
                self.problems.append(f"{what}: not JSON: {answer.headers} {answer.body[:80]!r}")
        statuses = [a.status for a in answers if a.status >= 200]
        if case.then == "read" and not statuses:
            self.problems.append(f"{what}: no answer")
        elif any(status not in case.expect for status in statuses):
            self.problems.append(f"{what}: got {statuses}, expected one of {case.expect}")
        if before is not None:
            self._unchanged(before, what)

    def state(self) -> tuple[Any, ...]:
        """What a refused request must not change: the newest feed and sense ids, the agent's
        configuration and the clients' reported figures."""
        get = self.client.get
        feed = get("/feed", headers=self.auth).json()["messages"]
        sense = get("/sense?meta_only=true", headers=self.auth).json()["events"]
        config = get("/agent/config", headers=self.auth).json()["config"]
        profiling = get("/health", headers=self.auth).json()["profiling"]
        return (feed[-1]["id"] if feed else 0, sense[-1]["id"] if sense else 0, config, profiling)

    def _unchanged(self, before: tuple[Any, ...], what: str) -> None:
        if self.state() != before:
            self.problems.append(f"refused, yet it changed what is stored: {what}")
        health = self.client.get("/health").status_code
        if health != 200:
            self.problems.append(f"/health answered {health} after {what}")

    def server_side_5xx(self) -> int:
        """Requests the relay counted with a 5xx (``GET /metrics``), answered or not: a client
        that left mid-body gets no answer, but its request is counted."""
        text = self.client.get("/metrics", headers=self.auth).text
        return sum(int(float(n)) for n in _SERVER_ERRORS.findall(text))
