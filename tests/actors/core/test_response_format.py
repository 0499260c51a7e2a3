"""The response-format negotiation's pure rules: levels, refusals, memory, what /health shows."""

from __future__ import annotations

import pytest

from actors.core.response_format import (
    ANSWER_SCHEMA,
    LEVELS,
    NO_LEVELS,
    body_field,
    first_level,
    is_refusal,
    shown_url,
    step_down,
)
from config.settings import RESPONSE_FORMATS


def test_auto_starts_at_the_top_or_at_what_answered_last() -> None:
    assert first_level("auto", None) == "json_schema"
    assert first_level("auto", "json_object") == "json_object"
    assert first_level("off", "json_schema") == "off"  # a named level wins over the memory
    assert first_level("json_object", None) == "json_object"


def test_only_auto_steps_down_and_off_is_the_floor() -> None:
    assert step_down("auto", "json_schema") == "json_object"
    assert step_down("auto", "json_object") == "off"
    assert step_down("auto", "off") is None
    assert step_down("json_schema", "json_schema") is None


def test_the_body_field_of_each_level() -> None:
    schema = body_field("json_schema")
    assert schema is not None
    assert schema["type"] == "json_schema"
    assert schema["json_schema"]["strict"] is True
    assert schema["json_schema"]["schema"] == ANSWER_SCHEMA
    assert body_field("json_object") == {"type": "json_object", "schema": ANSWER_SCHEMA}
    assert body_field("off") is None
    assert ANSWER_SCHEMA["required"] == ["hud", "digest"]
    assert ANSWER_SCHEMA["additionalProperties"] is False


@pytest.mark.parametrize(
    ("status", "body", "refused"),
    [
        (400, '{"error": "response_format json_schema unsupported"}', True),
        (400, '{"error": "invalid request"}', True),  # any 4xx about the body
        (422, "unprocessable", True),
        (500, "{'loc': ('body', 'response_format', 'type')}", True),  # llama-cpp-python
        (500, '{"error": "upstream exploded"}', False),
        (503, "overloaded", False),
        (401, "response_format", False),  # the key, not the body
        (403, "", False),
        (404, "no such model", False),
        (429, "slow down", False),
    ],
)
def test_what_counts_as_a_refusal(status: int, body: str, refused: bool) -> None:
    assert is_refusal(status, body) is refused


def test_the_memory_is_per_model_and_base_url_and_shown_without_credentials() -> None:
    a = NO_LEVELS.with_level("m", "http://127.0.0.1:8000/v1", "json_object")
    b = a.with_level("m", "https://user:pw@api.example/v1?k=1", "off")
    assert NO_LEVELS.get("m", "http://127.0.0.1:8000/v1") is None  # values, never changed
    assert a.get("m", "https://user:pw@api.example/v1?k=1") is None
    assert b.get("m", "http://127.0.0.1:8000/v1") == "json_object"
    assert b.to_json() == [
        {"model": "m", "baseUrl": "http://127.0.0.1:8000/v1", "level": "json_object"},
        {"model": "m", "baseUrl": "https://api.example/v1", "level": "off"},
    ]
    assert shown_url("http://u:p@h:1/v1#x") == "http://h:1/v1"


def test_the_setting_names_every_level() -> None:
    assert ("auto", *LEVELS) == RESPONSE_FORMATS
