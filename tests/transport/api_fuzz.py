"""The relay's HTTP API fuzzed from ``/openapi.json`` by Schemathesis, with our own checks.

Schemathesis generates each operation's requests (the document's examples, edge values,
valid and invalid data at random), sends them to a relay on loopback and checks each
answer: no 5xx, a documented status, content type, headers and body, 405 for a method not
described, 401 without the token. Ours on top: a refusal is a JSON error (:func:`error_shape`)
and a JSON body is accepted exactly when its schema says so (:func:`schema_verdict`; the
relay reads query parameters more leniently than Schemathesis' verdicts, by design and as
their descriptions say: ``meta_only=x`` is false, ``q`` needs a word).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import schemathesis
from hypothesis import strategies as st
from schemathesis import Case, CheckContext, Response

from actors.audio.core.wav import wav_bytes
from tests.transport.openapi_contract import Contract, pointer
from transport.openapi import openapi_document
from transport.shell.openapi_schemas import SSE

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "5"))
"""Generated cases per operation and phase (``FUZZ_EXAMPLES=500`` for a longer run)."""
SEED = int(os.environ.get("FUZZ_SEED", "20260401"))
LONG_POLL_CAP_S = 0.05
"""A long-poll's ``wait`` the schema allows (up to 60 s) is scaled down to this at most, so
a long-poll that waits its whole time costs a case no more than this."""
STREAM_TIMEOUT_S = 1.0
"""How long a stream is read when no event comes; its head must come within it, loaded or not."""
CONTRACT = Contract(openapi_document())
STREAMS = f"{pointer('responses', '200', 'content', SSE, 'schema', 'type')} == string"
"""The operations whose answer is an event stream (its events are strings on the wire)."""

schemathesis.openapi.media_type(
    "audio/wav",
    st.binary(max_size=3200).map(lambda b: wav_bytes(b[: len(b) // 2 * 2])) | st.binary(),
    aliases=("audio/x-wav", "audio/wave", "audio/vnd.wave", "audio/L16"),
)


def api_schema(token: str) -> Any:
    """The document as Schemathesis reads it: the token sent, deterministic, bounded.

    The streams are read for :data:`STREAM_TIMEOUT_S` and their events are not checked by
    Schemathesis (it reads the stream's schema, a string, as each event's; the tests check
    events against ``x-events``); ``/debug/fault`` answers 404 to any method unless drills
    are on, so no 405 is due there. The token goes with every request to a public path too:
    the methods it does not describe need it, as on any other path.
    """
    off = {"enabled": False}
    config = schemathesis.Config.from_dict(
        {
            "auth": {
                "openapi": {"bearerAuth": {"bearer": token}, "streamToken": {"api_key": token}}
            },
            "seed": SEED,
            "request-timeout": 5,
            "generation": {
                "max-examples": EXAMPLES,
                "deterministic": True,
                "database": "none",
                "allow-extra-parameters": False,  # an unnamed header is read as nothing
            },
            # these two judge parameters too: schema_verdict judges the body
            "checks": {"positive_data_acceptance": off, "negative_data_rejection": off},
            "operations": [
                {
                    "include-by": STREAMS,
                    "request-timeout": STREAM_TIMEOUT_S,
                    "max-stream-events": 1,
                    "checks": {"response_schema_conformance": off},
                },
                {"include-path": "/debug/fault", "checks": {"unsupported_method": off}},
                {"include-by": "/security == []", "headers": {"Authorization": f"Bearer {token}"}},
            ],
        }
    )
    schema = schemathesis.openapi.from_dict(_plain(openapi_document()), config=config)
    return schema.exclude(method="OPTIONS")  # a preflight takes no input: odd_requests.py


def _plain(node: Any) -> Any:
    """The document less ``format: regex`` (:data:`CONTRACT` judges it): Schemathesis searches
    for expressions of 999 to 1,001 characters, which its generator never makes."""
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items() if (k, v) != ("format", "regex")}
    return [_plain(v) for v in node] if isinstance(node, list) else node


def error_shape(ctx: CheckContext, response: Response, case: Case[Any]) -> bool | None:
    """A 4xx is ``{"ok": false, "error": "<what>"}`` in JSON (but a ``HEAD``'s)."""
    if response.status_code < 400 or case.method.upper() == "HEAD":
        return None
    assert CONTRACT.is_error(response.content), response.content[:300]
    return True


def schema_verdict(ctx: CheckContext, response: Response, case: Case[Any]) -> bool | None:
    """A JSON body its schema accepts gets a 2xx, one it refuses a 4xx."""
    sent = response.request.body
    sent = sent.encode() if isinstance(sent, str) else sent
    if not isinstance(sent, bytes) or "Authorization" not in response.request.headers:
        return None
    problem = CONTRACT.body_verdict(case.method, case.path, sent, response.status_code)
    assert problem is None, problem
    return True


def call_and_check(case: Case[Any], base_url: str) -> None:
    """Send ``case`` (a long-poll's ``wait`` scaled down) and run every check on its answer."""
    with contextlib.suppress(KeyError, TypeError, ValueError):  # no wait, or no number: as it is
        if 0 < (wait := float(case.query["wait"])) <= 60:
            case.query["wait"] = wait * LONG_POLL_CAP_S / 60
    case.call_and_validate(base_url=base_url, additional_checks=[error_shape, schema_verdict])
