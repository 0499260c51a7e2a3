"""The request bodies' schemas in the OpenAPI document are the structs that decode them: at
each limit, the document and the decoder say the same (the fuzz says so at random; this, at
the edges, every run)."""

from __future__ import annotations

from typing import Any

import msgspec
import orjson
import pytest

from actors.agent.core.config_update import MAX_TOKENS, AgentConfigUpdate
from actors.core import bodies, control_bodies
from actors.core.bodies import (
    MAX_EXTRA_FIELDS,
    MAX_EXTRA_NAME_CHARS,
    MAX_PRIORITY_CHARS,
    MAX_SOURCE_CHARS,
)
from actors.core.control_bodies import MAX_HANG_S, MAX_PAUSE_MINUTES
from actors.core.errors import BadRequest
from tests.transport.openapi_contract import Contract, pointer
from transport.openapi import REQUEST_TYPES, openapi_document

FIGURES = {"rssMb": 1, "uptimeS": 1, "ts": 1}

EDGES: list[tuple[type[Any], dict[str, Any], bool]] = [
    (bodies.FeedInput, {"text": "t", "priority": "p" * MAX_PRIORITY_CHARS}, True),
    (bodies.FeedInput, {"text": "t", "priority": "p" * (MAX_PRIORITY_CHARS + 1)}, False),
    (bodies.FeedInput, {"text": "t", "priority": ""}, False),
    (bodies.FeedInput, {"text": "t", "source": "s" * MAX_SOURCE_CHARS}, True),
    (bodies.FeedInput, {"text": "t", "source": "s" * (MAX_SOURCE_CHARS + 1)}, False),
    (bodies.FeedInput, {"text": "t", "channel": "agent", "priority": None}, True),
    (bodies.FeedInput, {"text": "t", "channel": "Agent"}, False),
    (bodies.FeedInput, {"text": " \n\t"}, False),
    (bodies.FeedInput, {"text": " x ", "anything": [1, {"else": None}]}, True),
    (bodies.SenseInput, {"type": "", "ts": 1}, False),
    (bodies.SenseInput, {"type": "t", "ts": 1.5, "meta": {"screen": "2"}, "x": 1}, True),
    (bodies.SenseInput, {"type": "t", "ts": 1, "meta": {"screen": [2]}}, False),
    (bodies.SenseInput, {"type": "t", "ts": 1, "observation": {"facts": ["a", 1]}}, False),
    (bodies.ProcessReport, FIGURES | {"extra": {str(n): n for n in range(MAX_EXTRA_FIELDS)}}, True),
    (
        bodies.ProcessReport,
        FIGURES | {"extra": {str(n): n for n in range(MAX_EXTRA_FIELDS + 1)}},
        False,
    ),
    (bodies.ProcessReport, FIGURES | {"extra": {"n" * MAX_EXTRA_NAME_CHARS: 1}}, True),
    (bodies.ProcessReport, FIGURES | {"extra": {"n" * (MAX_EXTRA_NAME_CHARS + 1): 1}}, False),
    (bodies.ProcessReport, FIGURES | {"rssMb": 0}, True),
    (bodies.ProcessReport, FIGURES | {"rssMb": -0.5}, False),
    (AgentConfigUpdate, {"maxTokens": MAX_TOKENS}, True),
    (AgentConfigUpdate, {"maxTokens": MAX_TOKENS + 1}, False),
    (AgentConfigUpdate, {"intervalMs": 6000.0}, True),
    (AgentConfigUpdate, {"intervalMs": 6000.5}, False),
    (AgentConfigUpdate, {"temperature": 2}, True),
    (AgentConfigUpdate, {"temperature": 2.01}, False),
    (AgentConfigUpdate, {"fallbackModels": ["a/b", " "]}, False),
    (AgentConfigUpdate, {"colour": "red"}, False),
    (control_bodies.Fault, {"actor": "llm", "kind": "hang", "seconds": MAX_HANG_S}, True),
    (control_bodies.Fault, {"actor": "llm", "kind": "hang", "seconds": MAX_HANG_S + 0.5}, False),
    (control_bodies.Fault, {"actor": "llm", "kind": "crash", "seconds": 0}, False),
    (control_bodies.Fault, {"actor": "root", "kind": "crash"}, False),
    (control_bodies.EscalationReply, {"id": "3f9c0a1b2c3d4e5f", "response": "x", "more": 1}, True),
    (control_bodies.EscalationReply, {"id": "", "response": "x"}, False),
    (control_bodies.EscalationReply, {"id": "a", "response": " \n"}, False),
    (control_bodies.EscalationReply, {"id": "a"}, False),
    (AgentConfigUpdate, {"escalationMode": "focus", "escalationStaleMs": 0}, True),
    (AgentConfigUpdate, {"escalationMode": "loud"}, False),
    (AgentConfigUpdate, {"escalationCooldownMs": 5000.5}, False),
    (control_bodies.PrivacyUpdate, {"pauseMinutes": MAX_PAUSE_MINUTES}, True),
    (control_bodies.PrivacyUpdate, {"pauseMinutes": MAX_PAUSE_MINUTES + 1}, False),
    (control_bodies.PrivacyUpdate, {"pauseMinutes": 0}, False),
    (control_bodies.PrivacyUpdate, {"retentionDays": 0.01, "excludeApps": []}, True),
    (control_bodies.PrivacyUpdate, {"retentionDays": 0}, False),
    (control_bodies.PrivacyUpdate, {"excludeTitles": ["x"] * 51}, False),
    (control_bodies.PrivacyUpdate, {"paused": None}, False),
]


@pytest.fixture(scope="module")
def contract() -> Contract:
    return Contract(openapi_document())


@pytest.mark.parametrize(("kind", "body", "valid"), EDGES)
def test_the_document_and_the_decoder_agree_at_the_edges(
    contract: Contract, kind: type[Any], body: dict[str, Any], valid: bool
) -> None:
    assert (
        contract.validator(pointer("components", "schemas", kind.__name__)).is_valid(body) is valid
    )
    raw = orjson.dumps(body)
    if valid:
        bodies.decode(raw, kind)
    else:
        with pytest.raises(BadRequest):
            bodies.decode(raw, kind)


def test_each_request_body_is_described_by_its_struct(contract: Contract) -> None:
    _, generated = msgspec.json.schema_components(
        REQUEST_TYPES, ref_template="#/components/schemas/{name}"
    )
    components = openapi_document()["components"]["schemas"]
    assert set(generated) == {
        "FeedInput",
        "SenseInput",
        "SenseMeta",
        "Observation",
        "AgentConfigUpdate",
        "Fault",
        "ProcessReport",
        "EscalationReply",
        "Span",
        "PrivacyUpdate",
    }
    for name, schema in generated.items():
        assert components[name]["properties"].keys() == schema["properties"].keys(), name
        assert components[name].get("required") == schema.get("required"), name
