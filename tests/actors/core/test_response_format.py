"""The response-format negotiation's pure rules: levels, refusals, memory, what /health shows."""

from __future__ import annotations

import pytest

from actors.agent.core.response_format import (
    ANSWER_SCHEMA,
    CHARS_PER_TOKEN,
    LEVELS,
    MIN_BOUNDED_TOKENS,
    NO_LEVELS,
    body_field,
    bounded_schema,
    first_level,
    is_refusal,
    may_refuse_images,
    step_down,
)
from config.agent.settings import RESPONSE_FORMATS


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
    schema = body_field("json_schema", max_tokens=200)
    assert schema is not None
    assert schema["type"] == "json_schema"
    assert schema["json_schema"]["strict"] is True
    assert schema["json_schema"]["schema"] == ANSWER_SCHEMA
    sent = body_field("json_object", max_tokens=200)
    assert sent is not None
    assert sent["type"] == "json_object"
    assert sent["schema"] == bounded_schema(200)
    assert body_field("off", max_tokens=200) is None
    assert ANSWER_SCHEMA["required"] == ["hud", "digest"]
    assert ANSWER_SCHEMA["additionalProperties"] is False


def test_the_strict_schema_has_no_length_keywords() -> None:
    # Strict structured outputs refuse keywords they do not support; a refusal would cost the
    # whole level, so lengths go only where a server reads the schema as a grammar.
    for field in ANSWER_SCHEMA["properties"].values():
        assert set(field) == {"type", "description"}


@pytest.mark.parametrize("max_tokens", [60, 200, 400, 2000])
def test_the_json_object_schema_bounds_the_answer_within_max_tokens(max_tokens: int) -> None:
    """A server that constrains its output with the schema cannot be cut off by max_tokens
    mid-object: the longest answer the bounds allow fits, at three characters a token (English
    prose carries about four)."""
    schema = bounded_schema(max_tokens)
    hud = schema["properties"]["hud"]["maxLength"]
    digest = schema["properties"]["digest"]["maxLength"]
    assert 40 <= hud <= 100
    assert digest >= 80
    longest = len('{"hud": "", "digest": ""}') + hud + digest
    assert longest / CHARS_PER_TOKEN <= max(max_tokens, MIN_BOUNDED_TOKENS)
    assert CHARS_PER_TOKEN <= 3
    assert {k: v for k, v in schema.items() if k != "properties"} == {
        k: v for k, v in ANSWER_SCHEMA.items() if k != "properties"
    }


@pytest.mark.parametrize(
    ("status", "body", "refused"),
    [
        (400, '{"error": "response_format json_schema unsupported"}', True),
        (400, '{"error": {"message": "Invalid schema", "param": "response_format"}}', True),
        (400, "json_object is not supported by this model", True),
        (422, "Structured outputs are not supported", True),
        (500, "{'loc': ('body', 'response_format', 'type')}", True),  # llama-cpp-python
        (500, "failed to parse grammar", True),  # llama.cpp's server
        # any other error answer is an ordinary failure: no retry, the next model
        (400, '{"error": {"message": "primary/model-a is not a valid model ID"}}', False),
        (400, "prompt is too long: 9000 tokens > 8192 maximum", False),
        (400, "This model's maximum context length is 8192 tokens", False),
        (400, '{"error": "invalid request"}', False),
        (422, "unprocessable", False),
        (500, '{"error": "upstream exploded"}', False),
        (503, "overloaded", False),
        (401, "response_format", False),  # the key, whatever the text says
        (403, "", False),
        (404, "no such model", False),
        (429, "slow down", False),
    ],
)
def test_what_counts_as_a_refusal_of_the_format(status: int, body: str, refused: bool) -> None:
    assert is_refusal(status, body) is refused


@pytest.mark.parametrize(
    ("status", "body", "refused"),
    [
        (400, "Invalid content type. image_url is only supported by certain models.", True),
        (404, "No endpoints found that support image input", True),  # OpenRouter
        (500, 'can only concatenate str (not "list") to str', True),  # llama-cpp-python
        (500, "image input is not supported - hint: you may need to provide the mmproj", True),
        (400, "this model does not support multimodal inputs", True),
        (400, "Vision is not enabled for this model", True),
        (400, "messages[0].content must be a string", True),  # a list of content parts
        (502, "the upstream could not read the image_url", True),
        # an ordinary failure: asking again without the images would not help
        (404, "no such model: primary/model-a", False),
        (400, "primary/model-a is not a valid model ID", False),
        (400, "prompt is too long: 9000 tokens > 8192 maximum", False),
        (400, "maximum context length is 8192 tokens (900 of image input)", False),
        (400, '{"error": "invalid request"}', False),
        (503, "overloaded", False),
        (504, "gateway timeout", False),
        (500, "response_format json_schema is not supported", False),  # the format's
        (401, "image", False),  # the key, whatever the text says
        (429, "too many images per minute", False),
    ],
)
def test_what_counts_as_a_refusal_of_images(status: int, body: str, refused: bool) -> None:
    assert may_refuse_images(status, body) is refused


def test_the_models_own_name_counts_for_neither() -> None:
    # A model's name may say vision (or grammar): an error quoting it names neither.
    model = "meta-llama/llama-3.2-11b-vision-instruct"
    for status in (400, 404):
        assert may_refuse_images(status, f"{model} is not a valid model ID", model=model) is False
    assert is_refusal(400, "no-grammar-7b: no such model", model="no-grammar-7b") is False
    assert may_refuse_images(400, f"{model} does not take image_url", model=model) is True


def test_the_memory_is_per_model_and_base_url_and_shown_without_credentials() -> None:
    a = NO_LEVELS.with_level("m", "http://127.0.0.1:8000/v1", "json_object")
    b = a.with_level("m", "https://user:pw@api.example/v1?k=1", "off")
    assert NO_LEVELS.get("m", "http://127.0.0.1:8000/v1") is None  # values, never changed
    assert a.get("m", "https://user:pw@api.example/v1?k=1") is None
    assert b.get("m", "http://127.0.0.1:8000/v1") == "json_object"
    assert b.to_json() == [
        {"model": "m", "baseUrl": "http://127.0.0.1:8000/v1", "level": "json_object"},
        {"model": "m", "baseUrl": "https://[redacted:password]@api.example/v1?k=1", "level": "off"},
    ]


def test_the_setting_names_every_level() -> None:
    assert ("auto", *LEVELS) == RESPONSE_FORMATS
