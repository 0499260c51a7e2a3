"""The error answers' descriptions of the OpenAPI description, and the helpers they share
with :mod:`transport.openapi`.

JSON Schema 2020-12 (the dialect of OpenAPI 3.1). Every component schema is generated from the
struct that decodes or encodes it; only the error answers' words are written here.
"""

from __future__ import annotations

from typing import Any

from transport.shell.connections import BODY_MIN_RATE, BODY_RATE_GRACE_S

JSON = "application/json"
SSE = "text/event-stream"
TEXT = "text/plain"
HTML = "text/html"

Schema = dict[str, Any]


def kib(size: int) -> str:
    """``256 KiB``, ``2 MiB``: a byte limit as the description says it."""
    return f"{size // 1024 // 1024} MiB" if size % (1024 * 1024) == 0 else f"{size // 1024} KiB"


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, {"type": "null"}]}


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
        f"request head), or came below {kib(BODY_MIN_RATE)} a second after its first "
        f"{BODY_RATE_GRACE_S:g} s; the connection is closed. Nothing changed.",
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
    "Unavailable": (
        "503",
        "An actor is restarting or did not begin the request in time, or the request bodies "
        "held at once are at `RELAY_BODY_MEMORY_MB`, or this body was the slowest arriving and "
        "was cut for another (with `Retry-After`). Nothing was stored; try again.",
    ),
    "PollUnavailable": (
        "503",
        "An actor is restarting or did not answer in time; or, with `wait`, the long-poll "
        "would wait while every slot that streams and waiting long-polls share "
        "(`RELAY_MAX_STREAMS`) is taken, or the relay is stopping: then it answers at once, "
        "with `Retry-After` (seconds to wait before polling again).",
    ),
    "BadGateway": ("502", "A service the relay asks (the speech service) failed or timed out."),
}
