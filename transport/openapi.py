"""The OpenAPI 3.1 description of the relay's HTTP API, served at ``GET /openapi.json``.

The document is data: :func:`openapi_document` returns it as a dict, :func:`openapi_json`
as the bytes the handler sends, both built once. Component schemas are JSON Schema 2020-12
(the dialect of OpenAPI 3.1). Objects the relay makes are closed (``additionalProperties:
false``), so a field added to an answer and not here fails ``tests/transport/test_openapi.py``,
which checks real answers against this document and fuzzes the request bodies from it; what
clients send may carry more (the relay ignores or keeps it, as each schema says).

Paths have no templates; every path also answers ``OPTIONS`` (a CORS preflight, described
for each path) and ``HEAD`` where it answers ``GET`` (not described: the ``GET``'s headers
without a body). Another method on a described path is a 405 with ``Allow``
(``components.responses.MethodNotAllowed``); any other path is a 404 (``NotFound``); any
request may get the 421, 401 and 403 of the access rules (:mod:`transport.auth`), and the 417
of an ``Expect`` other than ``100-continue``.
"""

from __future__ import annotations

import copy
import functools
from importlib import metadata
from typing import Any

import orjson

from actors.core.bodies import FEED_BODY_LIMIT, SENSE_BODY_LIMIT
from transport.handlers.agent import HISTORY_DEFAULT, HISTORY_MAX, RANGE_DEFAULT, RANGE_MAX
from transport.openapi_schemas import (
    BOOL,
    EPOCH,
    ERROR_ANSWERS,
    INT,
    JSON,
    SCHEMAS,
    SSE,
    STRING,
    TEXT,
    Schema,
    answer,
    closed,
    json_body,
    kib,
    nullable,
    query,
    ref,
)
from transport.overlay import (
    PING_INTERVAL_S,
    QUIET_SPELL_S,
    READ_LIMIT_BYTES,
    REPLAY_ITEMS,
    SILENCE_LIMIT_S,
)
from transport.overlay_messages import MAX_MESSAGE_BYTES
from transport.streams import LONG_POLL_MAX_S


def _responses() -> dict[str, Schema]:
    answers: dict[str, Schema] = {
        name: json_body(ref("Error"), description)
        for name, (_, description) in ERROR_ANSWERS.items()
    }
    answers["Unauthorized"]["headers"] = {
        "WWW-Authenticate": {"schema": STRING, "required": True, "description": "`Bearer ...`"}
    }
    answers["UnsupportedMediaType"]["headers"] = {
        "Accept-Encoding": {
            "schema": STRING,
            "description": "When the coding is what is refused: the codings read "
            "(`gzip, deflate`).",
        }
    }
    answers["MethodNotAllowed"]["headers"] = {
        "Allow": {"schema": STRING, "required": True, "description": "The methods it answers."}
    }
    answers["StreamUnavailable"] = {
        **json_body(
            ref("Error"),
            "Every stream slot (`RELAY_MAX_STREAMS`, both endpoints together) is taken, or the "
            "relay is stopping.",
        ),
        "headers": {"Retry-After": {"schema": INT, "required": True}},
    }
    answers["UpgradeRequired"] = {
        **json_body(ref("Error"), "Not an upgrade request: this path is a WebSocket."),
        "headers": {"Upgrade": {"schema": {"const": "websocket"}, "required": True}},
    }
    answers["Preflight"] = {
        "description": "CORS preflight: `Access-Control-Allow-*` headers, no body.",
    }
    return answers


def _errors(*names: str) -> dict[str, Schema]:
    return {ERROR_ANSWERS[name][0]: answer(name) for name in names}


def _ok(schema: Schema, description: str) -> Schema:
    return {"200": json_body(schema, description)}


def _envelope(key: str, schema: Schema, **more: Schema) -> Schema:
    return closed({"ok": {"const": True}, key: schema, **more})


AFTER = query("after", INT, "Only items with an id above this one (0 by default).")
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


def _stream(event: str, item: str, summary: str) -> Schema:
    return {
        "summary": summary,
        "description": _SSE_DESCRIPTION,
        "security": [{"bearerAuth": []}, {"streamToken": []}],
        "parameters": [
            {
                "name": "Last-Event-ID",
                "in": "header",
                "required": False,
                "schema": INT,
                "description": "Resume after this id (an `EventSource` sends it when it "
                "reconnects); takes precedence over `after`. Below 0 counts as 0; above the "
                "newest id means live only.",
            },
            query("after", INT, "Resume after this id when there is no `Last-Event-ID`."),
        ],
        "responses": {
            "200": {
                "description": "The event stream; it ends when the relay stops.",
                "headers": {
                    "Cache-Control": {"schema": {"const": "no-cache"}},
                    "X-Accel-Buffering": {"schema": {"const": "no"}},
                },
                "content": {
                    SSE: {
                        "schema": STRING,
                        "x-events": {event: ref(item), "gap": ref("StreamGap")},
                    }
                },
            },
            **_errors("BadRequest"),
            "503": answer("StreamUnavailable"),
        },
    }


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


def _socket(path: str, refusal: Schema) -> Schema:
    """The overlay's WebSocket at ``path``; ``refusal``: the answers to a request that is no
    upgrade."""
    return {
        "summary": f"The overlay's WebSocket (upgrade), at {path}",
        "description": _SOCKET_DESCRIPTION,
        "security": [{"bearerAuth": []}, {"streamToken": []}],
        "responses": {
            "101": {
                "description": "Switching Protocols: the socket is open.",
                "headers": {
                    "Upgrade": {"schema": {"const": "websocket"}, "required": True},
                    "Sec-WebSocket-Accept": {"schema": STRING, "required": True},
                },
                "x-messages": {
                    "relayToOverlay": {
                        "status": ref("OverlayStatus"),
                        "feed": ref("OverlayFeed"),
                        "ping": ref("OverlayPing"),
                    },
                    "overlayToRelay": {
                        "pong": ref("OverlayPong"),
                        "profiling": ref("OverlayProfiling"),
                        "command": ref("OverlayCommand"),
                        "message": ref("OverlayMessage"),
                    },
                },
            },
            **_errors("BadRequest"),
            **refusal,
            "503": answer("StreamUnavailable"),
        },
    }


def _paths() -> dict[str, dict[str, Schema]]:
    history_item = {"type": "array", "items": ref("AgentEntry"), "description": "Newest first."}
    paths: dict[str, dict[str, Schema]] = {
        "/feed": {
            "post": {
                "summary": "Store a feed message (what the user hears: transcripts, messages)",
                "requestBody": {
                    "required": True,
                    "description": f"At most {kib(FEED_BODY_LIMIT)}." + _BODY_NOTE,
                    "content": {JSON: {"schema": ref("FeedInput")}},
                },
                "responses": {
                    **_ok(ref("Accepted"), "Stored (committed) with this id."),
                    **_errors(
                        "BadRequest", "PayloadTooLarge", "UnsupportedMediaType", "Unavailable"
                    ),
                },
            },
            "get": {
                "summary": "Feed messages after an id",
                "parameters": [AFTER],
                "responses": {
                    **_ok(ref("FeedList"), "The messages, oldest first."),
                    **_errors("BadRequest"),
                },
            },
        },
        "/feed/stream": {"get": _stream("feed", "FeedItem", "Feed messages as they come (SSE)")},
        "/sense": {
            "post": {
                "summary": "Store a screen event (what the user sees)",
                "requestBody": {
                    "required": True,
                    "description": f"At most {kib(SENSE_BODY_LIMIT)}." + _BODY_NOTE,
                    "content": {JSON: {"schema": ref("SenseInput")}},
                },
                "responses": {
                    **_ok(
                        {"oneOf": [ref("Accepted"), ref("Dropped")]},
                        "Stored (committed) with this id, or dropped as excluded.",
                    ),
                    **_errors(
                        "BadRequest", "PayloadTooLarge", "UnsupportedMediaType", "Unavailable"
                    ),
                },
            },
            "get": {
                "summary": "Screen events after an id",
                "parameters": [
                    AFTER,
                    query(
                        "meta_only",
                        BOOL,
                        "`true` (or `1`) drops `roi.data` and `diff.data`; any other value "
                        "reads as false.",
                    ),
                ],
                "responses": {
                    **_ok(ref("SenseList"), "The events, oldest first."),
                    **_errors("BadRequest"),
                },
            },
        },
        "/agent/digest": {
            "get": {
                "summary": "The latest digest; with `wait`, a long-poll for a newer one",
                "description": "Without `wait` it answers at once. With `wait` it answers as soon "
                "as the latest digest's `id` is above `after`, at once if it already is, or "
                "after `wait` seconds with the current digest (maybe `null`, or not newer). "
                "To follow the digest, pass the last `digest.id` you got as `after`.",
                "parameters": [
                    query(
                        "wait",
                        {"type": "number", "exclusiveMinimum": 0, "maximum": LONG_POLL_MAX_S},
                        "Seconds to wait for a newer digest (long-poll).",
                    ),
                    query("after", INT, "With `wait`: the id to wait past (0 by default)."),
                ],
                "responses": {
                    **_ok(
                        _envelope("digest", nullable(ref("Digest"))),
                        "The digest, `null` before the first tick.",
                    ),
                    **_errors("BadRequest", "Unavailable"),
                },
            },
        },
        "/agent/stream": {
            "get": _stream("agent", "AgentEntry", "Agent entries as ticks record them (SSE)")
        },
        "/agent/last": {
            "get": {
                "summary": "The newest agent entry",
                "responses": {
                    **_ok(
                        _envelope("result", nullable(ref("AgentEntry"))),
                        "The entry, `null` before the first tick.",
                    ),
                    **_errors("Unavailable"),
                },
            },
        },
        "/agent/history": {
            "get": {
                "summary": "Agent entries, newest first; or a time range, page by page",
                "description": "Without `since`, `until` and `before`: the newest entries "
                f"(`limit` {HISTORY_DEFAULT} by default, {HISTORY_MAX} at most). With any of "
                "them: entries with `since <= ts < until` and `id < before` from the whole "
                f"retention (`limit` {RANGE_DEFAULT} by default, {RANGE_MAX} at most), and "
                "`next`, the `before` of the next page.",
                "parameters": [
                    query("limit", {"type": "integer", "minimum": 1}, "Larger is capped."),
                    query("since", INT, "Epoch ms, inclusive."),
                    query("until", INT, "Epoch ms, exclusive; not before `since`."),
                    query("before", INT, "Entries with an id below this one (a `next`)."),
                ],
                "responses": {
                    **_ok(
                        {
                            **_envelope(
                                "results",
                                history_item,
                                epoch=EPOCH,
                                next=nullable(
                                    {
                                        "type": "integer",
                                        "description": "`before` for the next page; `null` on "
                                        "the last. Only with a range.",
                                    }
                                ),
                            ),
                            "required": ["ok", "results", "epoch"],
                        },
                        "The entries.",
                    ),
                    **_errors("BadRequest", "Unavailable"),
                },
            },
        },
        "/agent/context": {
            "get": {
                "summary": "The context window the next tick would see",
                "responses": {
                    **_ok(_envelope("context", ref("ContextWindow")), "The window."),
                    **_errors("Unavailable"),
                },
            },
        },
        "/agent/config": {
            "get": {
                "summary": "The agent's runtime configuration",
                "responses": {
                    **_ok(_envelope("config", ref("AgentConfig")), "The configuration."),
                    **_errors("Unavailable"),
                },
            },
            "post": {
                "summary": "Change the agent's configuration at runtime",
                "requestBody": {
                    "required": True,
                    "description": "At most 16 KiB." + _BODY_NOTE,
                    "content": {JSON: {"schema": ref("AgentConfigUpdate")}},
                },
                "responses": {
                    **_ok(_envelope("config", ref("AgentConfig")), "The configuration applied."),
                    **_errors(
                        "BadRequest", "PayloadTooLarge", "UnsupportedMediaType", "Unavailable"
                    ),
                },
            },
        },
        "/debug/fault": {
            "post": {
                "summary": "Fault drill: make an actor crash or hang",
                "description": "Only with `RELAY_FAULTS=1` (a 404 otherwise). A `crash` fires on "
                "the actor's next message, a `hang` blocks it for `seconds` (for `http`, the "
                "event loop). Answers before the fault fires.",
                "requestBody": {
                    "required": True,
                    "content": {JSON: {"schema": ref("Fault")}},
                },
                "responses": {
                    **_ok(closed({"ok": {"const": True}}), "The fault is on its way."),
                    **_errors("BadRequest", "NotFound", "PayloadTooLarge", "UnsupportedMediaType"),
                },
            },
        },
        "/profiling/sense": {
            "post": {
                "summary": "The capture client's own figures: RSS, uptime, counters",
                "description": "Sinain's capture client posts them every 60 s. The newest "
                "report is shown in `/health.profiling.sense` and in `/metrics` "
                '(`relay_client_*{client="sense"}`); it is kept in memory only.',
                "requestBody": {
                    "required": True,
                    "description": "At most 16 KiB." + _BODY_NOTE,
                    "content": {JSON: {"schema": ref("ProcessReport")}},
                },
                "responses": {
                    **_ok(closed({"ok": {"const": True}}), "Kept as the newest report."),
                    **_errors("BadRequest", "PayloadTooLarge", "UnsupportedMediaType"),
                },
            },
        },
        "/": {
            "get": _socket(
                "/",
                {
                    "404": json_body(
                        ref("Error"), "Not an upgrade request: `/` serves nothing else."
                    )
                },
            )
        },
        "/ws": {"get": _socket("/ws", {"426": answer("UpgradeRequired")})},
        "/health": {
            "get": {
                "summary": "Counts, agent statistics, every actor's state, storage and streams",
                "security": [],
                "responses": {
                    "200": json_body(ref("Health"), "Every actor answered."),
                    "503": json_body(
                        ref("Health"),
                        "An actor did not answer: `ok` is false and `error` says which.",
                    ),
                },
            },
        },
        "/metrics": {
            "get": {
                "summary": "The relay's counters, in the Prometheus text format",
                "description": "Made at scrape time. An actor that does not answer in time "
                "leaves its metrics out of that scrape; `relay_scrape_source_up{source}` says "
                "which.",
                "responses": {
                    "200": {
                        "description": "The Prometheus text exposition format, version 0.0.4.",
                        "content": {TEXT: {"schema": STRING}},
                    }
                },
            },
        },
        "/openapi.json": {
            "get": {
                "summary": "This document",
                "responses": {
                    **_ok(
                        {"type": "object", "required": ["openapi", "info", "paths"]},
                        "The OpenAPI 3.1 description of the API.",
                    ),
                },
            },
        },
    }
    for path, operations in paths.items():
        for method, operation in operations.items():
            operation["operationId"] = _operation_id(method, path)
            answers = operation["responses"]
            if operation.get("security") != []:
                answers["401"] = answer("Unauthorized")
            answers["403"] = answer("Forbidden")  # a refused origin, whatever the endpoint
            answers["417"] = answer("ExpectationFailed")  # whatever the endpoint
            answers["421"] = answer("Misdirected")  # whatever the endpoint
            if "413" in answers:  # an endpoint that reads a body
                answers["408"] = answer("RequestTimeout")
            operation["responses"] = dict(sorted(answers.items()))
        operations["options"] = {
            "summary": "CORS preflight",
            "operationId": _operation_id("options", path),
            "security": [],
            "responses": {
                "204": answer("Preflight"),
                "417": answer("ExpectationFailed"),
                "421": answer("Misdirected"),
            },
        }
    return paths


def _operation_id(method: str, path: str) -> str:
    words = path.replace(".", "/").strip("/").split("/")
    return method + ("".join(word[:1].upper() + word[1:] for word in words) or "Root")


def _version() -> str:
    try:
        return metadata.version("sinain-relay")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "0.0.0"


def _build() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {
            "title": "sinain-relay",
            "version": _version(),
            "summary": "Sinain's eyes: what the user hears and sees in, a hud line and a digest "
            "out.",
            "description": 'Every error is JSON, `{"ok": false, "error": "..."}`, with a '
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
            "JSON 503 (`Retry-After: 1`) on any path, and is closed.",
        },
        "servers": [{"url": "/", "description": "Where this document is served."}],
        "security": [{"bearerAuth": []}],
        "paths": _paths(),
        "components": {
            "schemas": SCHEMAS,
            "responses": _responses(),
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "Needed only when the relay runs with `RELAY_TOKEN`: then "
                    "every request but `GET`/`HEAD /health` and `OPTIONS` carries "
                    "`Authorization: Bearer <RELAY_TOKEN>`, unknown paths and methods "
                    "included (401 rather than 404 or 405 without it).",
                },
                "streamToken": {
                    "type": "apiKey",
                    "in": "query",
                    "name": "access_token",
                    "description": "The token on the stream endpoints only, for a browser's "
                    "`EventSource`, which cannot set headers. Used when there is no "
                    "`Authorization` header.",
                },
            },
        },
    }


@functools.cache
def _document() -> dict[str, Any]:
    return _build()


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document (a copy: callers may change it)."""
    return copy.deepcopy(_document())


@functools.cache
def openapi_json() -> bytes:
    """The document as ``GET /openapi.json`` sends it."""
    return orjson.dumps(_document())
