"""Requests no generator makes from ``/openapi.json``, sent to a relay and checked: ours.

Schemathesis (``api_fuzz.py``) sends what the document describes, as a client encodes it.
These are the rest, from ``tests/data/odd_requests.json``: bodies no JSON encoder writes,
headers whose value decides the answer (:func:`odd_cases`) and HTTP/1.1 no client library
writes (``raw``, :meth:`Sender.send_raw`). :class:`Sender` checks each answer against the
document and its status or body verdict; a refused request must change nothing.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import httpx

from tests.transport.openapi_contract import Contract
from tests.transport.raw_http import gzip_bomb, raw_exchange
from transport.shell.openapi_schemas import JSON

CORPUS = json.loads((Path(__file__).parents[1] / "data" / "odd_requests.json").read_text())


def as_bytes(spec: str | list[list[Any]]) -> bytes:
    """A corpus body: a string (each character a byte), or ``[piece, times]`` pairs."""
    text = spec if isinstance(spec, str) else "".join(piece * times for piece, times in spec)
    return text.encode("latin-1")


NASTY_BODIES = tuple(as_bytes(body) for body in CORPUS["bodies"])
_bomb = functools.cache(gzip_bomb)
ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "zlib": zlib.compress,
    "raw-deflate": lambda body: zlib.compress(body, wbits=-zlib.MAX_WBITS),
    "cut-gzip": lambda body: gzip.compress(body)[:-12],
    "gzip-and-junk": lambda body: gzip.compress(body) + b"junk",
    "gzip-twice": lambda body: gzip.compress(gzip.compress(body)),
    "bomb": lambda _: _bomb(1024),  # a gibibyte of zeros in a megabyte
}
"""How a ``headers`` entry of the corpus really encodes its body (``null``: it does not)."""


class Case(NamedTuple):
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


def odd_cases(contract: Contract, token: str) -> Iterator[Case]:
    """The nasty bodies for each operation with a body (a 415 where it is not JSON), the
    preflight of each path, ``HEAD`` on each ``GET``, ``GET`` on ``unknownPaths``; then,
    to each path of ``examples``, posts whose headers decide the answer, each with its
    status: each ``contentTypes`` entry with the example (read whatever the type) and with a
    form body, and the example under each ``headers`` entry (codings real and not, a gzip
    bomb, chunked bodies, ``Expect``, ``Host``, Fetch Metadata)."""
    auth = {"Authorization": f"Bearer {token}"}
    for op in contract.operations():
        if "requestBody" in op.spec:
            due = None if JSON in op.spec["requestBody"]["content"] else 415
            yield from (Case(op.method, op.path, auth, body, expect=due) for body in NASTY_BODIES)
    for path, item in contract.paths.items():
        yield Case("options", path, {})
        yield from [Case("head", path, auth)] if "get" in item else []
    yield from (Case("get", path, auth) for path in CORPUS["unknownPaths"])
    for path, example in CORPUS["examples"].items():
        valid = json.dumps(example).encode()
        for content_type, refused in CORPUS["contentTypes"]:
            typed = {**auth, **({} if content_type is None else {"Content-Type": content_type})}
            yield Case("post", path, typed, valid, expect=200)
            yield Case("post", path, typed, b"text=hello", expect=refused)
        for headers, encoder, status, is_chunked in CORPUS["headers"]:
            wire = None if encoder is None else ENCODERS[encoder](valid)
            yield Case("post", path, {**auth, **headers}, valid, wire, is_chunked, status)


_SERVER_ERRORS = re.compile(r'^relay_http_requests_total\{[^}]*status="5\d\d"[^}]*\} (\S+)$', re.M)


class Sender:
    """Sends odd requests to a live relay and collects what is wrong with the answers."""

    def __init__(self, client: httpx.Client, contract: Contract, token: str) -> None:
        self.client, self.contract, self.token = client, contract, token
        self.auth = {"Authorization": f"Bearer {token}"}
        self.problems: list[str] = []

    def send(self, case: Case) -> None:
        """One request; its answer checked (and when it is refused, that it changed nothing)."""
        before = self.state() if case.expect is not None and case.expect >= 400 else None
        sent = case.body if case.wire is None else case.wire
        content: bytes | Iterator[bytes] | None = sent
        if sent is not None and case.chunked:
            content = (sent[i : i + 7] for i in range(0, len(sent), 7))
        request = self.client.build_request(
            case.method, case.path, headers=case.headers, content=content
        )
        response, problems = self.contract.exchange(self.client, request)
        status, path = response.status_code, request.url.path  # dot segments resolved
        if case.expect is not None and status != case.expect:
            problems.append(f"expected {case.expect}, got {status}")
        elif case.expect is None and case.body is not None and "Authorization" in case.headers:
            problems.append(self.contract.body_verdict(case.method, path, case.body, status) or "")
        what = f"{case.method.upper()} {case.path} {case.headers} {(sent or b'')[:300]!r}"
        self._report(problems, what, before)

    def send_raw(self, host: str, port: int, raw: dict[str, Any]) -> None:
        """A corpus ``raw`` request, byte for byte (``{token}``: the token), over a socket
        that ends as ``then`` says (:data:`tests.transport.raw_http.RAW_ENDINGS`). Every
        answer is JSON (a 100 and a 204 have no body) of a status in ``expect`` (400 unless
        it says); one that is refused changes nothing."""
        expect, then = raw.get("expect", [400]), raw.get("then", "read")
        data = as_bytes(raw["request"]).replace(b"{token}", self.token.encode())
        before = self.state() if all(status >= 400 for status in expect) else None
        answers = raw_exchange(host, port, data, then=then, timeout_s=raw.get("timeout", 2.0))
        bad = [a for a in answers if a.status >= 200 and a.status != 204 and not a.is_json]
        problems = [f"not JSON: {a.headers} {a.body[:80]!r}" for a in bad]
        statuses = [a.status for a in answers if a.status >= 200]
        if then == "read" and not statuses:
            problems.append("no answer")
        elif any(status not in expect for status in statuses):
            problems.append(f"got {statuses}, expected one of {expect}")
        self._report(problems, f"raw {raw['name']!r}", before)

    def _report(self, problems: list[str], what: str, before: tuple[Any, ...] | None) -> None:
        """Keeps ``problems``; when the request was refused (``before``: the state before
        it), checks that it changed nothing and that ``/health`` still answers 200."""
        self.problems += [f"{p} for {what}" for p in problems if p]
        if before is not None and self.state() != before:
            self.problems.append(f"refused, yet it changed what is stored: {what}")
        if before is not None and (health := self.client.get("/health").status_code) != 200:
            self.problems.append(f"/health answered {health} after {what}")

    def state(self) -> tuple[Any, ...]:
        """What a refused request must not change: the newest feed and sense ids, the agent's
        configuration and the clients' reported figures."""
        get = self.client.get
        feed = get("/feed", headers=self.auth).json()["messages"]
        sense = get("/sense?meta_only=true", headers=self.auth).json()["events"]
        config = get("/agent/config", headers=self.auth).json()["config"]
        profiling = get("/health", headers=self.auth).json()["profiling"]
        return (feed[-1]["id"] if feed else 0, sense[-1]["id"] if sense else 0, config, profiling)

    def server_side_5xx(self) -> int:
        """Requests the relay counted with a 5xx (``GET /metrics``), answered or not: a client
        that left mid-body gets no answer, but its request is counted."""
        text = self.client.get("/metrics", headers=self.auth).text
        return sum(int(float(n)) for n in _SERVER_ERRORS.findall(text))
