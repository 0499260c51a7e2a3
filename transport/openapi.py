"""The OpenAPI 3.1 description of the relay's HTTP API, served at ``GET /openapi.json``.

The document is made from the route table (:data:`transport.registry.ROUTE_TABLE`): each route's
summary, parameters, request body and answers. The answers' component schemas are generated
from their structs (:mod:`transport.shell.answers`, :mod:`actors.core.shapes`) by msgspec, in JSON
Schema 2020-12 (the dialect of OpenAPI 3.1); the request bodies' are in
:mod:`transport.shell.openapi_schemas`. :func:`openapi_document` returns it as a dict,
:func:`openapi_json` as the bytes the handler sends, both built once. Objects the relay makes
are closed (``additionalProperties: false``), so a field added to an answer's struct is in
the document, and ``tests/transport/test_openapi.py`` checks real answers against it and
fuzzes the request bodies from it; what clients send may carry more (the relay ignores or
keeps it, as each schema says).

Paths have no templates; every path also answers ``OPTIONS`` (a CORS preflight, described
for each path) and ``HEAD`` where it answers ``GET`` (not described: the ``GET``'s headers
without a body). Another method on a described path is a 405 with ``Allow``
(``components.responses.MethodNotAllowed``); any other path is a 404 (``NotFound``); any
request may get the 421, 401 and 403 of the access rules (:mod:`transport.shell.auth`), and the 417
of an ``Expect`` other than ``100-continue``.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable
from typing import Any, Literal

import msgspec
import orjson

from transport.host.route import Answer, Param, Route
from transport.overlay.messages import INBOUND_TYPES, MAX_MESSAGE_BYTES
from transport.overlay.socket import (
    PING_INTERVAL_S,
    QUIET_SPELL_S,
    READ_LIMIT_BYTES,
    REPLAY_ITEMS,
    SILENCE_LIMIT_S,
)
from transport.registry import ROUTE_TABLE
from transport.shell.answers import Error, OverlayFeed, OverlayPing, OverlayStatus
from transport.shell.connections import SMALL_BODY_BYTES, SMALL_BODY_RESERVE
from transport.shell.openapi_schemas import ERROR_ANSWERS, JSON, SSE, Schema, kib, ref
from transport.streams.answers import StreamGap

REF = "#/components/schemas/{name}"
REQUEST_TYPES = tuple(dict.fromkeys(route.body for route in ROUTE_TABLE if route.body is not None))
"""The structs that decode the request bodies, each once, in the route table's order: their
schemas are the components of the same names."""
EXTENDS = {"SenseEvent": "SenseInput"}
"""Answers that are a request body as sent, with the server's fields around it."""
_BODY_NOTE = (
    " JSON, read as JSON whatever the `Content-Type` (none, or `text/plain`, are fine). It "
    "may be compressed (`Content-Encoding: gzip` or `deflate`); the limit then applies to the "
    "decoded body too."
)
_SSE_DESCRIPTION = (
    "Server-Sent Events. The stream starts with `retry: 3000`; each event has `id:` (the "
    "item's id), `event:` and one `data:` line of JSON (the schema in `x-events`). A comment "
    "line `: keepalive` follows 15 s without an event. With `Last-Event-ID` (or, without it, "
    "`after`) it first replays what came after that id, then goes live; when items the client "
    "missed are gone a `gap` event (no `id`) comes first. A client that falls behind is "
    "dropped (its stream ends) and can resume with `Last-Event-ID`."
)
_RESUME = (
    Param(
        "Last-Event-ID",
        int,
        "Resume after this id (an `EventSource` sends it when it reconnects); takes precedence "
        "over `after`. Below 0 counts as 0; above the newest id means live only.",
        "header",
    ),
    Param("after", int, "Resume after this id when there is no `Last-Event-ID`."),
)
_SOCKET_DESCRIPTION = (
    "The overlay's WebSocket: Sinain's HUD connects here as it does to Sinain's server "
    "(`ws://<relay>/`, or `/ws`). The upgrade is a `GET` with `Connection: Upgrade`, `Upgrade: "
    "websocket`, `Sec-WebSocket-Version: 13` and a `Sec-WebSocket-Key`, answered 101; then "
    "JSON text messages go both ways, their schemas in the 101's `x-messages`. On connect the "
    f"relay sends a `status`, then the newest {REPLAY_ITEMS} feed items, oldest first, as "
    "`feed`; then each committed feed item (never an `id`), a new `status` whenever it "
    "changes (`audio`: `active` while transcripts arrive, `muted` after "
    f"{QUIET_SPELL_S:g} s without one; `screen` likewise, `off`), and a `ping` every "
    f"{PING_INTERVAL_S:g} s with a WebSocket ping. An overlay that has answered neither kind "
    f"of ping for {SILENCE_LIMIT_S:g} s is dropped, and so is one that falls behind, as a "
    "stream client is. The overlay may send `pong`, `profiling`, `command` and `message`; "
    f"anything else (malformed, binary, over {kib(MAX_MESSAGE_BYTES)}, an unknown type) is "
    "ignored and the socket stays open, but a message over "
    f"{kib(READ_LIMIT_BYTES)} closes it (1009). The sockets share `RELAY_MAX_STREAMS` with the "
    "streams (503 when all are taken). When the relay stops, each socket is closed with 1001, "
    "`going away`. Browsers apply no CORS to WebSockets: an upgrade from a page of an origin "
    "not in `RELAY_CORS_ORIGINS` is a 403; a native client sends no `Origin`."
)


class _Components:
    """The component schemas the answers refer to, gathered while the paths are made."""

    def __init__(self) -> None:
        self.schemas: dict[str, Schema] = {}

    def schema(self, answer_type: Any) -> Schema:
        """``answer_type``'s schema: a ``$ref`` for a struct, whose components are kept."""
        (schema,), found = msgspec.json.schema_components([answer_type], ref_template=REF)
        for name, component in found.items():
            self.schemas[name] = _component(component)
        plain: Schema = _plain(schema)
        return plain

    def finished(self) -> dict[str, Schema]:
        """The answers' components and the request bodies' (generated from the structs that
        decode them: :data:`REQUEST_TYPES` and the overlay's messages,
        :data:`transport.overlay.messages.INBOUND_TYPES`), by name."""
        out = dict(self.schemas)
        sent = (*REQUEST_TYPES, *INBOUND_TYPES)
        _, bodies = msgspec.json.schema_components(sent, ref_template=REF)
        out.update((name, _component(component)) for name, component in bodies.items())
        for name, base in EXTENDS.items():
            out[name] = {"allOf": [ref(base)], **out[name]}
        return dict(sorted(out.items()))


def _component(schema: Schema) -> Schema:
    """A struct's schema as the document states it: no title (the name says it), and its
    docstring on one line."""
    out = {key: _plain(value) for key, value in schema.items() if key != "title"}
    if "description" in out:
        out["description"] = " ".join(out["description"].split())
    return out


def _plain(node: Any) -> Any:
    """``node`` with each one-value ``enum`` (msgspec's ``Literal``) said as a ``const``."""
    if isinstance(node, list):
        return [_plain(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _plain(value) for key, value in node.items()}
    enum = out.get("enum")
    if isinstance(enum, list) and len(enum) == 1:
        del out["enum"]
        out["const"] = enum[0]
    return out


def _header(header_type: Any, c: _Components, *, required: bool = False, **more: str) -> Schema:
    return {"schema": c.schema(header_type), **({"required": True} if required else {}), **more}


def _answer(name: str) -> Schema:
    return {"$ref": f"#/components/responses/{name}"}


def _body(answer: Answer, c: _Components) -> Schema:
    if answer.type is None:
        return {"description": answer.description}
    if isinstance(answer.type, tuple):  # msgspec takes no union of untagged structs
        schema = {"oneOf": [c.schema(one) for one in answer.type]}
    else:
        schema = c.schema(answer.type)
    return {"description": answer.description, "content": {answer.media: {"schema": schema}}}


def _responses(c: _Components) -> dict[str, Schema]:
    """``components.responses``: the refusals a route lists by name, and the preflight's."""
    answers = {
        name: _body(Answer(Error, description), c)
        for name, (_, description) in ERROR_ANSWERS.items()
    }
    answers["Unauthorized"]["headers"] = {
        "WWW-Authenticate": _header(str, c, required=True, description="`Bearer ...`")
    }
    answers["UnsupportedMediaType"]["headers"] = {
        "Accept-Encoding": _header(
            str,
            c,
            description="When the coding is what is refused: the codings read (`gzip, deflate`).",
        )
    }
    answers["MethodNotAllowed"]["headers"] = {
        "Allow": _header(str, c, required=True, description="The methods it answers.")
    }
    answers["PollUnavailable"]["headers"] = {
        "Retry-After": _header(
            int, c, description="When every slot is taken: seconds to wait before polling again."
        )
    }
    answers["StreamUnavailable"] = {
        **_body(
            Answer(
                Error,
                "Every stream slot (`RELAY_MAX_STREAMS`, the streams, the overlay's sockets "
                "and waiting long-polls together) is taken, or the relay is stopping.",
            ),
            c,
        ),
        "headers": {"Retry-After": _header(int, c, required=True)},
    }
    answers["UpgradeRequired"] = {
        **_body(Answer(Error, "Not an upgrade request: this path is a WebSocket."), c),
        "headers": {"Upgrade": _header(Literal["websocket"], c, required=True)},
    }
    answers["Preflight"] = {
        "description": "CORS preflight: `Access-Control-Allow-*` headers, no body."
    }
    return answers


_STATUS = {name: status for name, (status, _) in ERROR_ANSWERS.items()}
_STATUS.update(StreamUnavailable="503", UpgradeRequired="426")


def _refusals(names: Iterable[str]) -> dict[str, Schema]:
    return {_STATUS[name]: _answer(name) for name in names}


def _param(param: Param, c: _Components) -> Schema:
    return {
        "name": param.name,
        "in": param.where,
        "required": param.required,
        "schema": c.schema(param.type),
        "description": param.description,
    }


def _stream(route: Route, c: _Components) -> Schema:
    """A Server-Sent Events route: its events' schemas in ``x-events``."""
    assert route.stream is not None
    event, item = route.stream
    pairs = route.events or ((event, item), ("gap", StreamGap))
    events = {name: c.schema(kind) for name, kind in pairs}
    stream = {"schema": c.schema(str), "x-events": events}
    return {
        "description": _SSE_DESCRIPTION,
        "security": [{"bearerAuth": []}, {"streamToken": []}],
        "parameters": [_param(p, c) for p in _RESUME],
        "responses": {
            "200": {
                "description": "The event stream; it ends when the relay stops.",
                "headers": {
                    "Cache-Control": _header(Literal["no-cache"], c),
                    "X-Accel-Buffering": _header(Literal["no"], c),
                },
                "content": {SSE: stream},
            },
            **_refusals(("BadRequest", "StreamUnavailable")),
        },
    }


def _socket(c: _Components) -> Schema:
    """The overlay's WebSocket: the messages both ways in the 101's ``x-messages``."""
    outbound = {"status": OverlayStatus, "feed": OverlayFeed, "ping": OverlayPing}
    return {
        "description": _SOCKET_DESCRIPTION,
        "security": [{"bearerAuth": []}, {"streamToken": []}],
        "responses": {
            "101": {
                "description": "Switching Protocols: the socket is open.",
                "headers": {
                    "Upgrade": _header(Literal["websocket"], c, required=True),
                    "Sec-WebSocket-Accept": _header(str, c, required=True),
                },
                "x-messages": {
                    "relayToOverlay": {k: c.schema(t) for k, t in outbound.items()},
                    "overlayToRelay": {
                        str(t.__struct_config__.tag): ref(t.__name__) for t in INBOUND_TYPES
                    },
                },
            },
            **_refusals(("BadRequest", "StreamUnavailable")),
        },
    }


def _operation(route: Route, c: _Components) -> Schema:
    """One route as the document describes it, before the answers every route may get."""
    if route.stream is not None:
        operation = _stream(route, c)
    elif route.socket:
        operation = _socket(c)
    else:
        operation = {"responses": {}}
        if route.description:
            operation["description"] = route.description
        if route.params:
            operation["parameters"] = [_param(p, c) for p in route.params]
        if route.body is not None:
            body: Schema = {
                "required": True,
                "content": {JSON: {"schema": ref(route.body.__name__)}},
            }
            if route.body_limit:
                body["description"] = f"At most {kib(route.body_limit)}." + _BODY_NOTE
            operation["requestBody"] = body
        if route.body_media:
            body = {"required": True, "content": {media: {} for media in route.body_media}}
            if route.body_limit:
                body["description"] = f"At most {kib(route.body_limit)}."
            operation["requestBody"] = body
    operation["summary"] = route.summary
    if route.public:
        operation["security"] = []
    elif route.socket and "200" in route.answers:  # not upgraded, it needs no token
        operation["security"] = [{}, *operation["security"]]
    operation["responses"].update(
        {status: _body(answer, c) for status, answer in route.answers.items()}
    )
    operation["responses"].update(_refusals(route.errors))
    return operation


def _paths(c: _Components) -> dict[str, dict[str, Schema]]:
    paths: dict[str, dict[str, Schema]] = {}
    for route in ROUTE_TABLE:
        operation = _operation(route, c)
        operation["operationId"] = _operation_id(route.method, route.path)
        answers = operation["responses"]
        if not route.public:
            answers["401"] = _answer("Unauthorized")
        answers["403"] = _answer("Forbidden")  # a refused origin, whatever the endpoint
        answers["417"] = _answer("ExpectationFailed")  # whatever the endpoint
        answers["421"] = _answer("Misdirected")  # whatever the endpoint
        if "413" in answers:  # an endpoint that reads a body
            answers["408"] = _answer("RequestTimeout")
        operation["responses"] = dict(sorted(answers.items()))
        paths.setdefault(route.path, {})[route.method.lower()] = operation
    for path, operations in paths.items():
        operations["options"] = {
            "summary": "CORS preflight",
            "operationId": _operation_id("options", path),
            "security": [],
            "responses": {
                "204": _answer("Preflight"),
                "417": _answer("ExpectationFailed"),
                "421": _answer("Misdirected"),
            },
        }
    return paths


def _operation_id(method: str, path: str) -> str:
    words = path.replace(".", "/").strip("/").split("/")
    return method.lower() + ("".join(word[:1].upper() + word[1:] for word in words) or "Root")


def _version() -> str:
    # imported when the document is first made: importlib.metadata weighs on the start
    from importlib import metadata  # noqa: PLC0415

    try:
        return metadata.version("sinain-relay")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "0.0.0"


_API_DESCRIPTION = (
    'Every error is JSON, `{"ok": false, "error": "..."}`, with a '
    "4xx status for bad input (which changes nothing) and 503 when an actor is "
    "restarting or did not answer in time. Any path answers `OPTIONS` (a CORS "
    "preflight, 204); a described path answers `HEAD` where it answers `GET`, and 405 "
    "(with `Allow`) to other methods; any other path is a 404. A request whose `Host` "
    "is not a name the relay serves gets 421 on any path, before anything else. With "
    "`RELAY_TOKEN` set, a request without the token gets 401 on any path but `/health` "
    "and preflights; a request from a web page of an origin not in "
    "`RELAY_CORS_ORIGINS`, or one a browser sent for a page of another site "
    "(`Sec-Fetch-Site`) on any path but `/health`, gets 403. A "
    "request body may be gzip or deflate (`Content-Encoding`); another coding is a 415. "
    "A request with an `Expect` other than `100-continue` gets 417. A request the HTTP "
    "parser refuses before it reaches the API (a bad or repeated `Content-Length`, "
    "`Content-Length` with `Transfer-Encoding`, a request line or "
    "header longer than 8190 bytes, a missing `Host`) gets a JSON 400 whose error "
    "starts `malformed HTTP request:`, and the connection is closed. Only a `CONNECT` "
    "(its target is no path) gets the HTTP server's own plain-text 404. A new "
    "connection beyond `RELAY_MAX_CONNECTIONS` while every open one is busy gets a "
    "JSON 503 (`Retry-After: 1`) on any path, and is closed. A request whose body would "
    "take the bodies held at once past `RELAY_BODY_MEMORY_MB` (whose last "
    f"1/{SMALL_BODY_RESERVE} is kept for bodies of {kib(SMALL_BODY_BYTES)} at most) cuts the "
    "slowest bodies still arriving, which get a JSON 503 "
    "(`Retry-After: 1`); when that cannot make room it gets that 503 itself, before the rest "
    "of it is read. Either connection is closed."
)
_SECURITY_SCHEMES: dict[str, Schema] = {
    "bearerAuth": {
        "type": "http",
        "scheme": "bearer",
        "description": "Needed only when the relay runs with `RELAY_TOKEN`: then every request "
        "but `GET`/`HEAD /health` and `OPTIONS` carries `Authorization: Bearer <RELAY_TOKEN>`, "
        "unknown paths and methods included (401 rather than 404 or 405 without it).",
    },
    "streamToken": {
        "type": "apiKey",
        "in": "query",
        "name": "access_token",
        "description": "The token on the stream endpoints only, for a browser's "
        "`EventSource`, which cannot set headers. Used when there is no `Authorization` "
        "header.",
    },
}


def _build() -> dict[str, Any]:
    components = _Components()
    paths = _paths(components)
    responses = _responses(components)
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {
            "title": "sinain-relay",
            "version": _version(),
            "summary": "Sinain's eyes: what the user hears and sees in, a hud line and a digest "
            "out.",
            "description": _API_DESCRIPTION,
        },
        "servers": [{"url": "/", "description": "Where this document is served."}],
        "security": [{"bearerAuth": []}],
        "paths": paths,
        "components": {
            "schemas": components.finished(),
            "responses": responses,
            "securitySchemes": _SECURITY_SCHEMES,
        },
    }


@functools.cache
def _document() -> dict[str, Any]:
    return _build()


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document (a copy: callers may change it)."""
    return copy.deepcopy(_document())


@functools.cache
def _encoded() -> bytes:
    return orjson.dumps(_document())


def openapi_json() -> bytes:
    """The document as ``GET /openapi.json`` sends it, made at the first call."""
    return _encoded()
