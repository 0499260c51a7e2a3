"""The component schemas of the OpenAPI description, and the helpers that write them.

JSON Schema 2020-12 (the dialect of OpenAPI 3.1). Objects the relay makes are closed
(``additionalProperties: false``); what clients send may carry more, as each schema says.
The request bodies' schemas are generated from the structs that decode them
(:data:`actors.core.bodies.REQUEST_TYPES`), so the document says what the decoder does.
"""

from __future__ import annotations

from typing import Any

import msgspec

from actors.core.bodies import REQUEST_TYPES
from actors.core.records import CHANNELS
from actors.core.response_format import LEVELS
from actors.digest_store import DIGEST_PREVIEW_CHARS
from config.settings import RESPONSE_FORMATS

JSON = "application/json"
SSE = "text/event-stream"
TEXT = "text/plain"

Schema = dict[str, Any]


def kib(size: int) -> str:
    """``256 KiB``, ``2 MiB``: a byte limit as the description says it."""
    return f"{size // 1024 // 1024} MiB" if size % (1024 * 1024) == 0 else f"{size // 1024} KiB"


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def answer(name: str) -> Schema:
    return {"$ref": f"#/components/responses/{name}"}


def nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, {"type": "null"}]}


def closed(properties: dict[str, Schema], *optional: str, **extra: Any) -> Schema:
    """An object with exactly these properties; all required but ``optional``."""
    return {
        "type": "object",
        "properties": properties,
        "required": [name for name in properties if name not in optional],
        "additionalProperties": False,
        **extra,
    }


def json_body(schema: Schema, description: str) -> Schema:
    return {"description": description, "content": {JSON: {"schema": schema}}}


def query(name: str, schema: Schema, description: str) -> Schema:
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
    "lastAnalysis": nullable(MS),
    "lastDigest": nullable({"type": "string", "maxLength": DIGEST_PREVIEW_CHARS}),
    "totalCalls": INT,
    "totalTokens": closed({"in": INT, "out": INT}),
    "estimatedCost": {"type": "number", "description": "USD, every model's known cost."},
    "costByModel": {
        "type": "object",
        "additionalProperties": ref("ModelCost"),
        "description": "By model, those that answered at least once.",
    },
    "fallbacks": {"type": "integer", "description": "Ticks a fallback model answered."},
    "idleSkips": INT,
    "emptySkips": INT,
    "unchangedSkips": INT,
    "minorSkips": INT,
    "deferredTicks": INT,
    "failures": INT,
    "lastError": nullable(STRING),
    "parseFailures": INT,
    "parseSuccessRate": nullable({"type": "number", "minimum": 0, "maximum": 1}),
    "contextFreshnessMedianMs": nullable(INT),
    "hudsWithheld": {
        "type": "object",
        "additionalProperties": INT,
        "description": "Answers whose hud was not pushed because it was no line a user can "
        "read, by reason: `echo` (our instructions), `fragment` (JSON pieces), `markup`, "
        "`placeholder` (the prompt's), `empty`.",
    },
    "responseFormats": {
        "type": "array",
        "items": closed(
            {"model": STRING, "baseUrl": STRING, "level": {"enum": list(LEVELS)}},
        ),
        "description": "The `response_format` level that last answered, per model and base "
        "URL (`AGENT_RESPONSE_FORMAT`); empty before the first answer.",
    },
    "situationWriteFailures": {
        "type": "integer",
        "description": "SITUATION.md writes that failed (`RELAY_SITUATION_FILE`).",
    },
    "state": {"enum": ["ok", "degraded", "open", "disabled"]},
    "consecutiveFailures": INT,
    "circuitOpenForMs": INT,
    "circuitSkips": INT,
    "inFlight": BOOL,
    "busySkips": INT,
    "pending": BOOL,
    "nextTickInMs": nullable(INT),
}

SCHEMAS: dict[str, Schema] = {
    "Error": closed(
        {"ok": {"const": False}, "error": {"type": "string", "description": "What is wrong."}},
        description="Every error answer: a 4xx for bad input (which changes nothing), 503 when "
        "an actor is restarting or did not answer in time.",
    ),
    "Accepted": closed(
        {"ok": {"const": True}, "id": ID},
        description="A stored item and its id.",
    ),
    "Dropped": closed(
        {"ok": {"const": True}, "dropped": {"const": "excluded"}},
        description="Not stored, by design: the event's app or window is excluded "
        "(`RELAY_EXCLUDE_APPS`, `RELAY_EXCLUDE_TITLES`). No id.",
    ),
    "FeedItem": closed(
        {
            "id": ID,
            "text": STRING,
            "priority": STRING,
            "ts": MS,
            "source": {
                **STRING,
                "description": "`agent` on the agent's own lines, whose text is "
                "`[🧠] <hud>`; `overlay` on what the user typed in the overlay; otherwise what "
                "the client posted, absent when it gave none.",
            },
            "channel": {"enum": list(CHANNELS)},
        },
        "source",
    ),
    "FeedList": closed(
        {"messages": {"type": "array", "items": ref("FeedItem")}, "epoch": EPOCH},
        description="Oldest first; the ring keeps the newest 100.",
    ),
    "SenseEvent": {
        "allOf": [ref("SenseInput")],
        "type": "object",
        "properties": {"id": ID, "receivedAt": MS},
        "required": ["id", "receivedAt"],
        "description": "The event as sent, between its `id` and the server's `receivedAt`.",
    },
    "SenseList": closed(
        {"events": {"type": "array", "items": ref("SenseEvent")}, "epoch": EPOCH},
        description="Oldest first; the ring keeps the newest 30.",
    ),
    "AppSwitch": closed({"app": STRING, "ts": NUMBER}),
    "Digest": closed(
        {
            "id": ID,
            "ts": MS,
            "digest": STRING,
            "currentApp": STRING,
            "appHistory": {
                "type": "array",
                "items": ref("AppSwitch"),
                "description": "Each app switch in the tick's window, with its time.",
            },
            "latencyMs": INT,
            "hud": {"type": "string", "description": "The tick's hud line."},
            "context": ref("EntryContext"),
            "model": {"type": "string", "description": "The model that answered."},
        },
        description="The latest tick's digest. `hud`, `context` and `model` are the entry's "
        "own (as `/agent/last` gives them), for clients that read them from the digest.",
    ),
    "EntryContext": closed(
        {
            "currentApp": STRING,
            "appHistory": {
                "type": "array",
                "items": STRING,
                "description": "The apps of the tick's window, in the order they were used.",
            },
            "audioCount": {"type": "integer", "description": "Transcripts in the window."},
            "screenCount": {"type": "integer", "description": "Screen events in the window."},
        },
        description="What the tick's window held.",
    ),
    "AgentEntry": closed(
        {
            "id": ID,
            "ts": MS,
            "hud": STRING,
            "digest": STRING,
            "context": ref("EntryContext"),
            "pushed": {"type": "boolean", "description": "Whether the hud went to the feed."},
            "model": {"type": "string", "description": "The model that answered."},
            "latencyMs": INT,
            "tokensIn": INT,
            "tokensOut": INT,
            "parsedOk": {"type": "boolean", "description": "Whether the answer was JSON."},
            "contextFreshnessMs": nullable(
                {
                    "type": "integer",
                    "description": "From the arrival of the newest event in the window to the "
                    "answer.",
                }
            ),
        },
        description="One successful tick.",
    ),
    "ContextWindow": closed(
        {
            "currentApp": STRING,
            "appHistory": {"type": "array", "items": ref("AppSwitch")},
            "audio": {
                "type": "array",
                "items": closed({"ts": MS, "text": STRING}),
                "description": "Transcript chunks, newest last.",
            },
            "screen": {
                "type": "array",
                "items": closed(
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
            "newestEventTs": nullable(MS),
        },
        description="The window the next tick would see.",
    ),
    "AgentConfig": closed(
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
            "economy": BOOL,
            "timeoutMs": INT,
            "fallbackModels": {"type": "array", "items": STRING},
            "responseFormat": {"enum": list(RESPONSE_FORMATS)},
            "baseUrl": STRING,
            "hasApiKey": {"type": "boolean", "description": "The key itself is never shown."},
        },
        description="The agent's runtime configuration.",
    ),
    "ModelCost": closed(
        {
            "calls": INT,
            "tokensIn": INT,
            "tokensOut": INT,
            "costUsd": nullable({"type": "number", "description": "`null` when not known."}),
            "costSource": {
                "enum": ["provider", "table", "mixed", "unknown"],
                "description": "Where the prices came from: the provider's answers, the price "
                "table, both, or neither.",
            },
            "unpricedCalls": INT,
        }
    ),
    "ActorState": closed(
        {
            "alive": BOOL,
            "restarts": INT,
            "lastRestart": nullable(MS),
            "state": {"enum": ["running", "backoff", "stopped"]},
        }
    ),
    "AgentHealth": closed(
        _AGENT_HEALTH,
        # Each part comes from one actor; one that does not answer leaves its part out.
        *_AGENT_HEALTH,
        description="The agent's settings, counters and LLM path.",
    ),
    "Health": closed(
        {
            "ok": BOOL,
            "error": {"type": "string", "description": "On a 503: which actors did not answer."},
            "epoch": EPOCH,
            "messages": nullable(INT),
            "senseEvents": nullable(INT),
            "agent": ref("AgentHealth"),
            "actors": {"type": "object", "additionalProperties": ref("ActorState")},
            "storage": closed(
                {
                    "path": STRING,
                    "epoch": EPOCH,
                    "sync": {"enum": ["full", "normal", "off"], "description": "`off` in memory."},
                    "schemaVersions": {"type": "object", "additionalProperties": INT},
                    "recovered": BOOL,
                    "movedAside": {"type": "array", "items": STRING},
                    "problem": nullable(STRING),
                }
            ),
            "streams": closed(
                {"feed": INT, "agent": INT, "overlay": INT, "dropped": INT},
                description="Clients open per stream (`overlay`: overlay sockets), and clients "
                "dropped for falling behind since the transport started.",
            ),
            "profiling": closed(
                {
                    "sense": nullable(ref("ClientFigures")),
                    "overlay": nullable(ref("ClientFigures")),
                },
                description="The capture client's and the overlay's newest reports of their "
                "own figures (`null` before the first); kept in memory, not history.",
            ),
        },
        "error",
        description="Made for each request: it shows every write answered before it was asked.",
    ),
    "ClientFigures": closed(
        {
            "rssMb": NUMBER,
            "uptimeS": NUMBER,
            "ts": {"type": "number", "description": "The client's clock, epoch milliseconds."},
            "receivedAt": {"type": "integer", "description": "The relay's clock, epoch ms."},
            "extra": nullable(
                {
                    "type": "object",
                    "additionalProperties": NUMBER,
                    "description": "The client's counters, by name (a secret in a name "
                    "redacted); `null` for a caller without the token, when one is set.",
                }
            ),
        },
        description="A client's newest report, as it sent it, and when it arrived.",
    ),
    "OverlayStatus": closed(
        {
            "type": {"const": "status"},
            "audio": {
                "enum": ["active", "muted"],
                "description": "`active` while transcripts arrive, `muted` after a quiet spell.",
            },
            "screen": {
                "enum": ["active", "off"],
                "description": "`active` while screen events arrive, `off` after a quiet spell.",
            },
            "connection": {"const": "connected"},
        },
        description="Relay → overlay: on connect, and again whenever it changes.",
    ),
    "OverlayFeed": closed(
        {
            "type": {"const": "feed"},
            "text": STRING,
            "priority": STRING,
            "ts": MS,
            "channel": {"enum": list(CHANNELS)},
            "sender": {"const": "user", "description": "On what the user typed in the overlay."},
        },
        "sender",
        description="Relay → overlay: a feed item (on connect the newest 20, oldest first, then "
        "each one committed), or a line for this overlay alone. Never an `id`.",
    ),
    "OverlayPing": closed(
        {"type": {"const": "ping"}, "ts": MS},
        description="Relay → overlay: the heartbeat; the overlay answers `pong`.",
    ),
    "OverlayPong": {
        "type": "object",
        "properties": {"type": {"const": "pong"}, "ts": NUMBER},
        "required": ["type"],
        "additionalProperties": True,
        "description": "Overlay → relay: the answer to a `ping`.",
    },
    "OverlayProfiling": {
        "allOf": [ref("ProcessReport")],
        "type": "object",
        "properties": {"type": {"const": "profiling"}},
        "required": ["type"],
        "description": "Overlay → relay: its process's figures, every 30 s; shown in "
        "`/health.profiling.overlay` and `/metrics`.",
    },
    "OverlayCommand": {
        "type": "object",
        "properties": {
            "type": {"const": "command"},
            "action": {"enum": ["toggle_audio", "toggle_screen", "switch_device"]},
        },
        "required": ["type", "action"],
        "additionalProperties": True,
        "description": "Overlay → relay: a capture switch. The relay captures nothing itself: it "
        "answers this overlay alone with a feed line saying the capture clients own the switch. "
        "Other actions are ignored.",
    },
    "OverlayMessage": {
        "type": "object",
        "properties": {"type": {"const": "message"}, "text": NOT_BLANK},
        "required": ["type", "text"],
        "additionalProperties": True,
        "description": "Overlay → relay: what the user typed. Stored in the feed with "
        '`source: "overlay"` (validated, redacted and batched as `POST /feed`), so it '
        "reaches every overlay and `GET /feed`.",
    },
    "StreamGap": closed(
        {"after": INT, "oldest": INT},
        description="Items after `after` and before `oldest` are gone.",
    ),
}


def _flowed(node: Any) -> Any:
    """``node`` with each description in one line: a struct's docstring is its description,
    and a docstring breaks its lines and indents them."""
    if isinstance(node, dict):
        return {
            k: " ".join(v.split()) if k == "description" else _flowed(v) for k, v in node.items()
        }
    if isinstance(node, list):
        return [_flowed(v) for v in node]
    return node


SCHEMAS.update(
    _flowed(
        msgspec.json.schema_components(REQUEST_TYPES, ref_template="#/components/schemas/{name}")[1]
    )
)

ERROR_ANSWERS: dict[str, tuple[str, str]] = {
    # name: (status, description)
    "BadRequest": ("400", "Bad input: a bad body, field or parameter. Nothing changed."),
    "Unauthorized": (
        "401",
        "The relay runs with `RELAY_TOKEN` and the request has no `Authorization: Bearer "
        "<token>`, or a wrong one.",
    ),
    "Forbidden": (
        "403",
        "A web page of an origin not in `RELAY_CORS_ORIGINS` sent it (any endpoint); a "
        "browser sent it for a page of another site (`Sec-Fetch-Site` `cross-site` or "
        "`same-site`) and no listed `Origin` vouches for it (any endpoint but `/health`); or, "
        "at `POST /agent/config`, `openrouterApiKey` while the relay has no token.",
    ),
    "NotFound": ("404", "No such path (or the endpoint is not enabled)."),
    "MethodNotAllowed": ("405", "The path does not answer this method; `Allow` says which do."),
    "RequestTimeout": (
        "408",
        "The body stopped coming before it was whole (`RELAY_BODY_TIMEOUT_S` after the "
        "request head); the connection is closed. Nothing changed.",
    ),
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
    "Misdirected": (
        "421",
        "The `Host` is not a name the relay serves (`127.0.0.1`, `localhost`, `[::1]`, the "
        "address the request arrived at, or one of `RELAY_ALLOWED_HOSTS`, with the relay's "
        "port or none): a web page that points its own name at this machine (DNS rebinding). "
        "Nothing ran.",
    ),
    "ExpectationFailed": (
        "417",
        "The request has an `Expect` other than `100-continue`; it was not run.",
    ),
    "Unavailable": ("503", "An actor is restarting or did not answer in time; try again."),
}
