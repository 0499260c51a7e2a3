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
request may get the 401 and 403 of the access rules (:mod:`transport.auth`), and the 417 of an
``Expect`` other than ``100-continue``.
"""

from __future__ import annotations

import copy
import functools
from importlib import metadata
from typing import Any

import orjson

JSON = "application/json"
SSE = "text/event-stream"
TEXT = "text/plain"

Schema = dict[str, Any]


def _ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def _answer(name: str) -> Schema:
    return {"$ref": f"#/components/responses/{name}"}


def _nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, {"type": "null"}]}


def _closed(properties: dict[str, Schema], *optional: str, **extra: Any) -> Schema:
    """An object with exactly these properties; all required but ``optional``."""
    return {
        "type": "object",
        "properties": properties,
        "required": [name for name in properties if name not in optional],
        "additionalProperties": False,
        **extra,
    }


def _json_body(schema: Schema, description: str) -> Schema:
    return {"description": description, "content": {JSON: {"schema": schema}}}


def _query(name: str, schema: Schema, description: str) -> Schema:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "description": description,
    }


INT: Schema = {"type": "integer"}
ID: Schema = {"type": "integer", "minimum": 1, "description": "Monotonic, also across restarts."}
MS: Schema = {"type": "integer", "description": "Epoch milliseconds."}
STRING: Schema = {"type": "string"}
NOT_BLANK: Schema = {"type": "string", "pattern": r"\S", "description": "Not only whitespace."}
NUMBER: Schema = {"type": "number"}
BOOL: Schema = {"type": "boolean"}
EPOCH: Schema = {
    "type": "string",
    "description": "Changes only when the data is new: a client that sees a new epoch resets "
    "its `after` cursor.",
}

_AGENT_HEALTH: dict[str, Schema] = {
    "enabled": BOOL,
    "active": {"type": "boolean", "description": "Enabled and keyed."},
    "hasApiKey": BOOL,
    "model": STRING,
    "intervalMs": INT,
    "debounceMs": {"type": "integer", "description": "As applied: capped at the interval."},
    "cooldownMs": INT,
    "lastAnalysis": _nullable(MS),
    "lastDigest": _nullable({"type": "string", "maxLength": 200}),
    "totalCalls": INT,
    "totalTokens": _closed({"in": INT, "out": INT}),
    "estimatedCost": {"type": "number", "description": "USD, every model's known cost."},
    "costByModel": {
        "type": "object",
        "additionalProperties": _ref("ModelCost"),
        "description": "By model, those that answered at least once.",
    },
    "fallbacks": {"type": "integer", "description": "Ticks a fallback model answered."},
    "idleSkips": INT,
    "emptySkips": INT,
    "unchangedSkips": INT,
    "failures": INT,
    "lastError": _nullable(STRING),
    "parseFailures": INT,
    "parseSuccessRate": _nullable({"type": "number", "minimum": 0, "maximum": 1}),
    "contextFreshnessMedianMs": _nullable(INT),
    "state": {"enum": ["ok", "degraded", "open", "disabled"]},
    "consecutiveFailures": INT,
    "circuitOpenForMs": INT,
    "circuitSkips": INT,
    "inFlight": BOOL,
    "busySkips": INT,
    "pending": BOOL,
    "nextTickInMs": _nullable(INT),
}

_SCHEMAS: dict[str, Schema] = {
    "Error": _closed(
        {"ok": {"const": False}, "error": {"type": "string", "description": "What is wrong."}},
        description="Every error answer: a 4xx for bad input (which changes nothing), 503 when "
        "an actor is restarting or did not answer in time.",
    ),
    "Accepted": _closed(
        {"ok": {"const": True}, "id": ID},
        description="A stored item and its id.",
    ),
    "Dropped": _closed(
        {"ok": {"const": True}, "dropped": {"const": "excluded"}},
        description="Not stored, by design: the event's app or window is excluded "
        "(`RELAY_EXCLUDE_APPS`, `RELAY_EXCLUDE_TITLES`). No id.",
    ),
    "FeedInput": {
        "type": "object",
        "properties": {
            "text": NOT_BLANK,
            "priority": _nullable({"type": "string", "minLength": 1, "maxLength": 32}),
        },
        "required": ["text"],
        "additionalProperties": True,
        "description": "`priority` defaults to `normal` (`null` counts as absent). Other fields "
        "are ignored.",
    },
    "FeedItem": _closed(
        {
            "id": ID,
            "text": STRING,
            "priority": STRING,
            "ts": MS,
            "source": {
                "const": "agent",
                "description": "Only on the agent's own lines, whose text is `[🧠] <hud>`.",
            },
        },
        "source",
    ),
    "FeedList": _closed(
        {"messages": {"type": "array", "items": _ref("FeedItem")}, "epoch": EPOCH},
        description="Oldest first; the ring keeps the newest 100.",
    ),
    "SenseMeta": {
        "type": "object",
        "properties": {
            "app": _nullable(STRING),
            "windowTitle": _nullable(STRING),
            "ssim": _nullable(NUMBER),
            "screen": _nullable({"type": ["number", "string"]}),
        },
        "additionalProperties": True,
    },
    "Observation": {
        "type": "object",
        "properties": {
            "title": _nullable(STRING),
            "subtitle": _nullable(STRING),
            "narrative": _nullable(STRING),
            "facts": _nullable({"type": "array", "items": STRING}),
            "concepts": _nullable({"type": "array", "items": STRING}),
        },
        "additionalProperties": True,
        "description": "What the capture client says of the moment.",
    },
    "SenseInput": {
        "type": "object",
        "properties": {
            "type": {"type": "string", "minLength": 1, "examples": ["text", "context"]},
            "ts": {"type": "number", "description": "The client's clock, epoch milliseconds."},
            "ocr": _nullable(STRING),
            "meta": _nullable(_ref("SenseMeta")),
            "roi": _nullable({"type": "object", "description": "`data`: the image, base64."}),
            "diff": _nullable({"type": "object", "description": "`data`: the image, base64."}),
            "observation": _nullable(_ref("Observation")),
        },
        "required": ["type", "ts"],
        "additionalProperties": True,
        "description": "A screen event as Sinain's capture client sends it. `null` counts as "
        "absent; other fields are kept as sent; `id` and `receivedAt` are the server's and "
        "are dropped. Objects and arrays may nest 100 levels deep at most (the body is the "
        "first).",
    },
    "SenseEvent": {
        "allOf": [_ref("SenseInput")],
        "type": "object",
        "properties": {"id": ID, "receivedAt": MS},
        "required": ["id", "receivedAt"],
        "description": "The event as sent, between its `id` and the server's `receivedAt`.",
    },
    "SenseList": _closed(
        {"events": {"type": "array", "items": _ref("SenseEvent")}, "epoch": EPOCH},
        description="Oldest first; the ring keeps the newest 30.",
    ),
    "AppSwitch": _closed({"app": STRING, "ts": NUMBER}),
    "Digest": _closed(
        {
            "id": ID,
            "ts": MS,
            "digest": STRING,
            "currentApp": STRING,
            "appHistory": {"type": "array", "items": _ref("AppSwitch")},
            "latencyMs": INT,
        },
        description="The latest tick's digest.",
    ),
    "AgentEntry": _closed(
        {
            "id": ID,
            "ts": MS,
            "hud": STRING,
            "digest": STRING,
            "context": _closed(
                {
                    "currentApp": STRING,
                    "appHistory": {"type": "array", "items": STRING},
                    "audioCount": INT,
                    "screenCount": INT,
                }
            ),
            "pushed": {"type": "boolean", "description": "Whether the hud went to the feed."},
            "model": {"type": "string", "description": "The model that answered."},
            "latencyMs": INT,
            "tokensIn": INT,
            "tokensOut": INT,
            "parsedOk": {"type": "boolean", "description": "Whether the answer was JSON."},
            "contextFreshnessMs": _nullable(
                {
                    "type": "integer",
                    "description": "From the arrival of the newest event in the window to the "
                    "answer.",
                }
            ),
        },
        description="One successful tick.",
    ),
    "ContextWindow": _closed(
        {
            "currentApp": STRING,
            "appHistory": {"type": "array", "items": _ref("AppSwitch")},
            "audio": {
                "type": "array",
                "items": _closed({"ts": MS, "text": STRING}),
                "description": "Transcript chunks, newest last.",
            },
            "screen": {
                "type": "array",
                "items": _closed(
                    {
                        "ts": NUMBER,
                        "type": STRING,
                        "app": STRING,
                        "ocr": STRING,
                        "ssim": NUMBER,
                        "windowTitle": STRING,
                        "title": STRING,
                        "narrative": STRING,
                    },
                    "ssim",
                    "windowTitle",
                    "title",
                    "narrative",
                ),
                "description": "Unique screen events, newest last; `windowTitle`, `title` and "
                "`narrative` when they say more than the OCR.",
            },
            "audioCount": INT,
            "screenCount": INT,
            "windowMs": INT,
            "newestEventTs": _nullable(MS),
        },
        description="The window the next tick would see.",
    ),
    "AgentConfig": _closed(
        {
            "enabled": BOOL,
            "intervalMs": INT,
            "debounceMs": INT,
            "cooldownMs": INT,
            "model": STRING,
            "maxAgeMs": INT,
            "maxTokens": INT,
            "temperature": NUMBER,
            "pushToFeed": BOOL,
            "logVerbose": BOOL,
            "timeoutMs": INT,
            "fallbackModels": {"type": "array", "items": STRING},
            "baseUrl": STRING,
            "hasApiKey": {"type": "boolean", "description": "The key itself is never shown."},
        },
        description="The agent's runtime configuration.",
    ),
    "AgentConfigUpdate": {
        "type": "object",
        "properties": {
            "enabled": BOOL,
            "intervalMs": {"type": "integer", "description": "Raised to 5000 at least."},
            "debounceMs": {"type": "integer", "description": "Clamped to 0..86400000."},
            "cooldownMs": {"type": "integer", "description": "Clamped to 0..86400000."},
            "model": NOT_BLANK,
            "fallbackModels": {"type": "array", "items": NOT_BLANK},
            "maxAge": {"type": "integer", "description": "Milliseconds, raised to 10000."},
            "maxAgeMs": {"type": "integer", "description": "Raised to 10000 at least."},
            "maxTokens": {"type": "integer", "minimum": 1, "maximum": 32000},
            "temperature": {"type": "number", "minimum": 0, "maximum": 2},
            "pushToFeed": BOOL,
            "logVerbose": BOOL,
            "openrouterApiKey": {"type": "string", "description": "Never shown back."},
        },
        "additionalProperties": False,
        "description": "Any subset of the fields. An unknown field or a wrong type rejects "
        "the whole body.",
    },
    "Fault": {
        "type": "object",
        "properties": {
            "actor": {"enum": ["feed", "sense", "context", "llm", "digest", "ticker", "http"]},
            "kind": {"enum": ["crash", "hang"]},
            "seconds": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": 3600,
                "description": "Required for a hang.",
            },
        },
        "required": ["actor", "kind"],
        "additionalProperties": True,
    },
    "ModelCost": _closed(
        {
            "calls": INT,
            "tokensIn": INT,
            "tokensOut": INT,
            "costUsd": _nullable({"type": "number", "description": "`null` when not known."}),
            "costSource": {
                "enum": ["provider", "table", "mixed", "unknown"],
                "description": "Where the prices came from: the provider's answers, the price "
                "table, both, or neither.",
            },
            "unpricedCalls": INT,
        }
    ),
    "ActorState": _closed(
        {
            "alive": BOOL,
            "restarts": INT,
            "lastRestart": _nullable(MS),
            "state": {"enum": ["running", "backoff", "stopped"]},
        }
    ),
    "AgentHealth": _closed(
        _AGENT_HEALTH,
        # Each part comes from one actor; one that does not answer leaves its part out.
        *_AGENT_HEALTH,
        description="The agent's settings, counters and LLM path.",
    ),
    "Health": _closed(
        {
            "ok": BOOL,
            "error": {"type": "string", "description": "On a 503: which actors did not answer."},
            "epoch": EPOCH,
            "messages": _nullable(INT),
            "senseEvents": _nullable(INT),
            "agent": _ref("AgentHealth"),
            "actors": {"type": "object", "additionalProperties": _ref("ActorState")},
            "storage": _closed(
                {
                    "path": STRING,
                    "epoch": EPOCH,
                    "sync": {"enum": ["full", "normal", "off"], "description": "`off` in memory."},
                    "schemaVersions": {"type": "object", "additionalProperties": INT},
                    "recovered": BOOL,
                    "movedAside": {"type": "array", "items": STRING},
                    "problem": _nullable(STRING),
                }
            ),
            "streams": _closed({"feed": INT, "agent": INT, "dropped": INT}),
        },
        "error",
        description="Made for each request: it shows every write answered before it was asked.",
    ),
    "StreamGap": _closed(
        {"after": INT, "oldest": INT},
        description="Items after `after` and before `oldest` are gone.",
    ),
}

_ERROR_ANSWERS: dict[str, tuple[str, str]] = {
    # name: (status, description)
    "BadRequest": ("400", "Bad input: a bad body, field or parameter. Nothing changed."),
    "Unauthorized": (
        "401",
        "The relay runs with `RELAY_TOKEN` and the request has no `Authorization: Bearer "
        "<token>`, or a wrong one.",
    ),
    "Forbidden": (
        "403",
        "A web page of an origin not in `RELAY_CORS_ORIGINS` sent it (any endpoint); or, at "
        "`POST /agent/config`, `openrouterApiKey` while the relay has no token.",
    ),
    "NotFound": ("404", "No such path (or the endpoint is not enabled)."),
    "MethodNotAllowed": ("405", "The path does not answer this method; `Allow` says which do."),
    "PayloadTooLarge": (
        "413",
        "The body is larger than the endpoint's limit, as sent or, compressed, as decoded.",
    ),
    "UnsupportedMediaType": (
        "415",
        "The body's `Content-Encoding` is not one the relay reads (it reads gzip, deflate and "
        "identity, one coding at most; `Accept-Encoding` lists them), or the body is not JSON "
        "and its `Content-Type` names another media type (a form, plain text). Nothing changed.",
    ),
    "ExpectationFailed": (
        "417",
        "The request has an `Expect` other than `100-continue`; it was not run.",
    ),
    "Unavailable": ("503", "An actor is restarting or did not answer in time; try again."),
}


def _responses() -> dict[str, Schema]:
    answers: dict[str, Schema] = {
        name: _json_body(_ref("Error"), description)
        for name, (_, description) in _ERROR_ANSWERS.items()
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
        **_json_body(
            _ref("Error"),
            "Every stream slot (`RELAY_MAX_STREAMS`, both endpoints together) is taken, or the "
            "relay is stopping.",
        ),
        "headers": {"Retry-After": {"schema": INT, "required": True}},
    }
    answers["Preflight"] = {
        "description": "CORS preflight: `Access-Control-Allow-*` headers, no body.",
    }
    return answers


def _errors(*names: str) -> dict[str, Schema]:
    return {_ERROR_ANSWERS[name][0]: _answer(name) for name in names}


def _ok(schema: Schema, description: str) -> Schema:
    return {"200": _json_body(schema, description)}


def _envelope(key: str, schema: Schema, **more: Schema) -> Schema:
    return _closed({"ok": {"const": True}, key: schema, **more})


AFTER = _query("after", INT, "Only items with an id above this one (0 by default).")
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
            _query("after", INT, "Resume after this id when there is no `Last-Event-ID`."),
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
                        "x-events": {event: _ref(item), "gap": _ref("StreamGap")},
                    }
                },
            },
            **_errors("BadRequest"),
            "503": _answer("StreamUnavailable"),
        },
    }


def _paths() -> dict[str, dict[str, Schema]]:
    history_item = {"type": "array", "items": _ref("AgentEntry"), "description": "Newest first."}
    paths: dict[str, dict[str, Schema]] = {
        "/feed": {
            "post": {
                "summary": "Store a feed message (what the user hears: transcripts, messages)",
                "requestBody": {
                    "required": True,
                    "description": "At most 256 KiB." + _BODY_NOTE,
                    "content": {JSON: {"schema": _ref("FeedInput")}},
                },
                "responses": {
                    **_ok(_ref("Accepted"), "Stored (committed) with this id."),
                    **_errors(
                        "BadRequest", "PayloadTooLarge", "UnsupportedMediaType", "Unavailable"
                    ),
                },
            },
            "get": {
                "summary": "Feed messages after an id",
                "parameters": [AFTER],
                "responses": {
                    **_ok(_ref("FeedList"), "The messages, oldest first."),
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
                    "description": "At most 2 MiB." + _BODY_NOTE,
                    "content": {JSON: {"schema": _ref("SenseInput")}},
                },
                "responses": {
                    **_ok(
                        {"oneOf": [_ref("Accepted"), _ref("Dropped")]},
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
                    _query(
                        "meta_only",
                        BOOL,
                        "`true` (or `1`) drops `roi.data` and `diff.data`; any other value "
                        "reads as false.",
                    ),
                ],
                "responses": {
                    **_ok(_ref("SenseList"), "The events, oldest first."),
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
                    _query(
                        "wait",
                        {"type": "number", "exclusiveMinimum": 0, "maximum": 60},
                        "Seconds to wait for a newer digest (long-poll).",
                    ),
                    _query("after", INT, "With `wait`: the id to wait past (0 by default)."),
                ],
                "responses": {
                    **_ok(
                        _envelope("digest", _nullable(_ref("Digest"))),
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
                        _envelope("result", _nullable(_ref("AgentEntry"))),
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
                "(`limit` 10 by default, 50 at most). With any of them: entries with "
                "`since <= ts < until` and `id < before` from the whole retention (`limit` 50 "
                "by default, 500 at most), and `next`, the `before` of the next page.",
                "parameters": [
                    _query("limit", {"type": "integer", "minimum": 1}, "Larger is capped."),
                    _query("since", INT, "Epoch ms, inclusive."),
                    _query("until", INT, "Epoch ms, exclusive; not before `since`."),
                    _query("before", INT, "Entries with an id below this one (a `next`)."),
                ],
                "responses": {
                    **_ok(
                        {
                            **_envelope(
                                "results",
                                history_item,
                                epoch=EPOCH,
                                next=_nullable(
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
                    **_ok(_envelope("context", _ref("ContextWindow")), "The window."),
                    **_errors("Unavailable"),
                },
            },
        },
        "/agent/config": {
            "get": {
                "summary": "The agent's runtime configuration",
                "responses": {
                    **_ok(_envelope("config", _ref("AgentConfig")), "The configuration."),
                    **_errors("Unavailable"),
                },
            },
            "post": {
                "summary": "Change the agent's configuration at runtime",
                "requestBody": {
                    "required": True,
                    "description": "At most 16 KiB." + _BODY_NOTE,
                    "content": {JSON: {"schema": _ref("AgentConfigUpdate")}},
                },
                "responses": {
                    **_ok(_envelope("config", _ref("AgentConfig")), "The configuration applied."),
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
                    "content": {JSON: {"schema": _ref("Fault")}},
                },
                "responses": {
                    **_ok(_closed({"ok": {"const": True}}), "The fault is on its way."),
                    **_errors("BadRequest", "NotFound", "PayloadTooLarge", "UnsupportedMediaType"),
                },
            },
        },
        "/health": {
            "get": {
                "summary": "Counts, agent statistics, every actor's state, storage and streams",
                "security": [],
                "responses": {
                    "200": _json_body(_ref("Health"), "Every actor answered."),
                    "503": _json_body(
                        _ref("Health"),
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
                answers["401"] = _answer("Unauthorized")
            answers["403"] = _answer("Forbidden")  # a refused origin, whatever the endpoint
            answers["417"] = _answer("ExpectationFailed")  # whatever the endpoint
            operation["responses"] = dict(sorted(answers.items()))
        operations["options"] = {
            "summary": "CORS preflight",
            "operationId": _operation_id("options", path),
            "security": [],
            "responses": {"204": _answer("Preflight"), "417": _answer("ExpectationFailed")},
        }
    return paths


def _operation_id(method: str, path: str) -> str:
    words = path.replace(".", "/").strip("/").split("/")
    return method + "".join(word[:1].upper() + word[1:] for word in words)


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
            "(with `Allow`) to other methods; any other path is a 404. With `RELAY_TOKEN` set, "
            "a request without the token gets 401 on any path but `/health` and preflights; "
            "a request from a web page of an origin not in `RELAY_CORS_ORIGINS` gets 403. A "
            "request body may be gzip or deflate (`Content-Encoding`); another coding is a 415. "
            "A request with an `Expect` other than `100-continue` gets 417. A request the HTTP "
            "parser refuses before it reaches the API (a bad or repeated `Content-Length`, "
            "`Content-Length` with `Transfer-Encoding`, a request line or "
            "header longer than 8190 bytes, a missing `Host`) gets a JSON 400 whose error "
            "starts `malformed HTTP request:`, and the connection is closed. Only a `CONNECT` "
            "(its target is no path) gets the HTTP server's own plain-text 404.",
        },
        "servers": [{"url": "/", "description": "Where this document is served."}],
        "security": [{"bearerAuth": []}],
        "paths": _paths(),
        "components": {
            "schemas": _SCHEMAS,
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
