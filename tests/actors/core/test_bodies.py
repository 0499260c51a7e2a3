"""Decoding (which validates) ``POST /feed`` and ``POST /sense`` bodies, and the records'
wire shapes."""

from __future__ import annotations

import copy

import orjson
import pytest

from actors.core import bodies
from actors.core.bodies import MAX_NESTING, MAX_PRIORITY_CHARS, MAX_SOURCE_CHARS, sense_input
from actors.core.errors import BadRequest
from actors.core.records import FeedPost, FeedRecord, SensePost, SenseRecord

MULTIBYTE = "Привет 👋 日本語"


def validate_feed(body: object) -> FeedPost:
    return bodies.convert(body, bodies.FeedInput).record()


validate_sense = sense_input

# --- FeedPost ---------------------------------------------------------------------------------


def test_feed_valid_body_returns_text_and_priority():
    assert validate_feed({"text": "hello", "priority": "high"}) == FeedPost("hello", "high")


def test_feed_priority_defaults_to_normal():
    assert validate_feed({"text": "hello"}) == FeedPost("hello", "normal")


def test_feed_null_priority_defaults_to_normal():
    assert validate_feed({"text": "hello", "priority": None}) == FeedPost("hello", "normal")


def test_feed_text_is_kept_as_sent():
    assert validate_feed({"text": "  spaced\nlines  "}).text == "  spaced\nlines  "


def test_feed_multibyte_text_is_kept_intact():
    body = orjson.loads(orjson.dumps({"text": MULTIBYTE}))
    text = validate_feed(body).text
    assert text == MULTIBYTE
    assert text.encode() == MULTIBYTE.encode("utf-8")


def test_feed_ignores_unknown_fields():
    assert validate_feed({"text": "t", "extra": [1, 2]}) == FeedPost("t", "normal")


def test_feed_priority_of_max_length_is_accepted():
    priority = "p" * MAX_PRIORITY_CHARS
    assert validate_feed({"text": "t", "priority": priority}) == FeedPost("t", priority)


@pytest.mark.parametrize("body", [None, [], "text", 42, [{"text": "t"}]])
def test_feed_body_not_an_object_is_rejected(body):
    with pytest.raises(BadRequest, match="body must be a JSON object"):
        validate_feed(body)


@pytest.mark.parametrize("body", [{}, {"text": None}, {"priority": "high"}])
def test_feed_text_missing_is_required(body):
    with pytest.raises(BadRequest, match="text is required"):
        validate_feed(body)


@pytest.mark.parametrize("body", [{"text": 5}, {"text": ["a"]}, {"text": True}])
def test_feed_text_not_a_string_is_rejected(body):
    with pytest.raises(BadRequest, match="text must be a string"):
        validate_feed(body)


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_feed_empty_text_is_rejected(text):
    with pytest.raises(BadRequest, match="text must be a string that is not blank"):
        validate_feed({"text": text})


@pytest.mark.parametrize(
    "priority",
    [5, True, ["high"], {"p": 1}, "", "p" * (MAX_PRIORITY_CHARS + 1)],
    ids=["int", "bool", "list", "object", "empty", "too-long"],
)
def test_feed_bad_priority_is_rejected(priority):
    with pytest.raises(BadRequest, match="priority must be a string"):
        validate_feed({"text": "t", "priority": priority})


# --- SensePost --------------------------------------------------------------------------------


def full_sense_body() -> dict[str, object]:
    return {
        "type": "text",
        "ts": 1_769_901_000_123,
        "ocr": "def main():\n    pass",
        "meta": {"app": "code", "ssim": 0.91, "windowTitle": "main.py"},
        "roi": {"x": 1, "y": 2, "w": 3, "h": 4, "data": "iVBORw0KGgo="},
        "diff": {"ratio": 0.2, "data": "AAAA"},
        "extra": {"nested": [1, 2, 3]},
    }


def test_sense_valid_body_round_trips():
    body = full_sense_body()
    original = copy.deepcopy(body)
    result = validate_sense(body)
    assert result == SensePost(
        type="text",
        ts=1_769_901_000_123,
        ocr="def main():\n    pass",
        app="code",
        ssim=0.91,
        payload=original,
    )
    assert body == original


def test_sense_minimal_body_has_empty_ocr_and_app_and_no_ssim():
    result = validate_sense({"type": "context", "ts": 5})
    assert result == SensePost(
        type="context", ts=5, ocr="", app="", ssim=None, payload={"type": "context", "ts": 5}
    )


def test_sense_null_optional_fields_are_accepted():
    result = validate_sense(
        {"type": "visual", "ts": 1.5, "ocr": None, "meta": None, "roi": None, "diff": None}
    )
    assert (result.ocr, result.app, result.ssim, result.ts) == ("", "", None, 1.5)


def test_sense_integer_ssim_becomes_float():
    result = validate_sense({"type": "visual", "ts": 1, "meta": {"ssim": 1}})
    assert result.ssim == 1.0
    assert isinstance(result.ssim, float)


def test_sense_zero_ssim_is_kept():
    assert validate_sense({"type": "visual", "ts": 1, "meta": {"ssim": 0}}).ssim == 0.0


def test_sense_meta_with_null_app_and_ssim_is_accepted():
    result = validate_sense({"type": "text", "ts": 1, "meta": {"app": None, "ssim": None}})
    assert (result.app, result.ssim) == ("", None)


@pytest.mark.parametrize("field", ["id", "receivedAt"])
def test_sense_client_server_field_is_dropped_from_payload(field):
    body = {"type": "text", "ts": 1, "ocr": "x", field: 999}
    result = validate_sense(body)
    assert result.payload == {"type": "text", "ts": 1, "ocr": "x"}
    assert field in body, "the client's object is not mutated"


def test_sense_both_server_fields_are_dropped_and_rest_kept():
    body = full_sense_body() | {"id": 7, "receivedAt": 8}
    result = validate_sense(body)
    assert result.payload == full_sense_body()


def test_sense_multibyte_text_is_kept_intact():
    body = orjson.loads(
        orjson.dumps({"type": "text", "ts": 1, "ocr": MULTIBYTE, "meta": {"app": MULTIBYTE}})
    )
    result = validate_sense(body)
    assert result.ocr == MULTIBYTE
    assert result.app == MULTIBYTE
    assert result.payload["ocr"] == MULTIBYTE


@pytest.mark.parametrize("body", [None, [], "text", 1.5, [{"type": "text", "ts": 1}]])
def test_sense_body_not_an_object_is_rejected(body):
    with pytest.raises(BadRequest, match="body must be a JSON object"):
        validate_sense(body)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"ts": 1}, "type is required"),
        ({"type": None, "ts": 1}, "type is required"),
        ({"type": "text"}, "ts is required"),
        ({"type": "text", "ts": None}, "ts is required"),
        ({}, "type is required"),
    ],
    ids=["no-type", "null-type", "no-ts", "null-ts", "neither"],
)
def test_sense_missing_type_or_ts_is_rejected(body, message):
    with pytest.raises(BadRequest, match=message):
        validate_sense(body)


@pytest.mark.parametrize("kind", [5, True, ["text"], {"t": 1}, ""])
def test_sense_type_not_a_non_empty_string_is_rejected(kind):
    with pytest.raises(BadRequest, match="type must be a string"):
        validate_sense({"type": kind, "ts": 1})


@pytest.mark.parametrize(
    "ts",
    [True, False, "123", [1], {"t": 1}],
    ids=["true", "false", "string", "list", "object"],
)
def test_sense_ts_not_a_number_is_rejected(ts):
    with pytest.raises(BadRequest, match="ts must be a number"):
        validate_sense({"type": "text", "ts": ts})


@pytest.mark.parametrize("ocr", [5, ["a"], {"a": 1}, True])
def test_sense_ocr_not_a_string_is_rejected(ocr):
    with pytest.raises(BadRequest, match="ocr must be a string"):
        validate_sense({"type": "text", "ts": 1, "ocr": ocr})


@pytest.mark.parametrize("meta", ["code", 5, ["app"], True])
def test_sense_meta_not_an_object_is_rejected(meta):
    with pytest.raises(BadRequest, match="meta must be an object"):
        validate_sense({"type": "text", "ts": 1, "meta": meta})


@pytest.mark.parametrize("app", [5, ["code"], {"n": "code"}, False])
def test_sense_meta_app_not_a_string_is_rejected(app):
    with pytest.raises(BadRequest, match=r"meta\.app must be a string"):
        validate_sense({"type": "text", "ts": 1, "meta": {"app": app}})


@pytest.mark.parametrize("ssim", ["0.9", True, [0.9]], ids=["string", "bool", "list"])
def test_sense_meta_ssim_not_a_number_is_rejected(ssim):
    with pytest.raises(BadRequest, match=r"meta\.ssim must be a number"):
        validate_sense({"type": "text", "ts": 1, "meta": {"ssim": ssim}})


@pytest.mark.parametrize("key", ["roi", "diff"])
@pytest.mark.parametrize("value", ["base64", 5, [1, 2], True])
def test_sense_roi_or_diff_not_an_object_is_rejected(key, value):
    with pytest.raises(BadRequest, match=f"{key} must be an object"):
        validate_sense({"type": "visual", "ts": 1, key: value})


# --- record wire shapes ------------------------------------------------------------------------


def stored_event(payload: dict[str, object]) -> SenseRecord:
    return SenseRecord(
        id=3,
        received_at=1_000,
        type="visual",
        ts=999,
        ocr="",
        app="code",
        ssim=None,
        payload=payload,
    )


def test_sense_event_to_json_has_id_payload_and_received_at():
    payload = {"type": "visual", "ts": 999, "roi": {"x": 1, "data": "AAA"}}
    assert stored_event(payload).to_json() == {
        "id": 3,
        "type": "visual",
        "ts": 999,
        "roi": {"x": 1, "data": "AAA"},
        "receivedAt": 1_000,
    }


def test_sense_event_to_json_meta_only_strips_roi_and_diff_data_but_keeps_other_keys():
    payload = {
        "type": "visual",
        "ts": 999,
        "roi": {"x": 1, "y": 2, "data": "AAA"},
        "diff": {"ratio": 0.3, "data": "BBB"},
        "meta": {"app": "code", "data": "kept"},
    }
    assert stored_event(payload).to_json(meta_only=True) == {
        "id": 3,
        "type": "visual",
        "ts": 999,
        "roi": {"x": 1, "y": 2},
        "diff": {"ratio": 0.3},
        "meta": {"app": "code", "data": "kept"},
        "receivedAt": 1_000,
    }


def test_sense_event_to_json_meta_only_does_not_mutate_the_payload():
    payload = {"type": "visual", "ts": 999, "roi": {"x": 1, "data": "AAA"}}
    event = stored_event(payload)
    event.to_json(meta_only=True)
    assert event.payload["roi"] == {"x": 1, "data": "AAA"}
    assert event.to_json()["roi"] == {"x": 1, "data": "AAA"}


def test_sense_event_to_json_meta_only_keeps_roi_without_data():
    payload = {"type": "visual", "ts": 999, "roi": {"x": 1}}
    assert stored_event(payload).to_json(meta_only=True)["roi"] == {"x": 1}


def test_sense_event_server_fields_come_from_the_event():
    payload = {"type": "text", "ts": 999}
    out = stored_event(payload).to_json()
    assert (out["id"], out["receivedAt"]) == (3, 1_000)
    keys = list(out)
    assert keys[0] == "id"
    assert keys[-1] == "receivedAt"


def test_feed_item_to_json_without_source():
    item = FeedRecord(id=1, text=MULTIBYTE, priority="normal", ts=123)
    assert item.to_json() == {
        "id": 1,
        "text": MULTIBYTE,
        "priority": "normal",
        "ts": 123,
        "channel": "stream",
    }


def test_feed_item_to_json_with_source():
    item = FeedRecord(id=2, text="[🧠] hud", priority="normal", ts=5, source="agent")
    assert item.to_json() == {
        "id": 2,
        "text": "[🧠] hud",
        "priority": "normal",
        "ts": 5,
        "source": "agent",
        "channel": "stream",
    }


def test_sense_nesting_is_bounded_so_every_stored_event_can_be_written_back():
    def nested(levels: int) -> dict[str, object]:
        body: dict[str, object] = {"type": "text", "ts": 1}
        inner = body
        for _ in range(levels - 1):
            child: dict[str, object] = {}
            inner["x"] = child
            inner = child
        return body

    event = validate_sense(nested(MAX_NESTING))
    assert orjson.dumps(event.payload)
    with pytest.raises(BadRequest, match="deeper than"):
        validate_sense(nested(MAX_NESTING + 1))
    with pytest.raises(BadRequest, match="deeper than"):  # deep inside a list, too
        validate_sense({"type": "text", "ts": 1, "extra": [1, {"a": [nested(300)]}]})


# --- FeedPost: source and channel -------------------------------------------------------------


def test_feed_input_defaults_to_no_source_and_the_stream_channel():
    assert validate_feed({"text": "t"}) == FeedPost(text="t", priority="normal")
    assert validate_feed({"text": "t"}).channel == "stream"
    assert validate_feed({"text": "t"}).source is None


def test_feed_source_and_channel_are_kept():
    body = {"text": "t", "source": "audio", "channel": "agent", "priority": "high"}
    assert validate_feed(body) == FeedPost("t", "high", source="audio", channel="agent")


def test_feed_null_source_and_channel_mean_their_defaults():
    assert validate_feed({"text": "t", "source": None, "channel": None}) == FeedPost("t", "normal")


@pytest.mark.parametrize("source", ["", 5, True, ["audio"], {"a": 1}, "s" * (MAX_SOURCE_CHARS + 1)])
def test_feed_bad_source_is_rejected(source):
    with pytest.raises(BadRequest, match="source"):
        validate_feed({"text": "t", "source": source})


@pytest.mark.parametrize("channel", ["", "Agent", "overlay", 1, ["agent"], {"c": "agent"}])
def test_feed_bad_channel_is_rejected(channel):
    with pytest.raises(BadRequest, match="channel must be"):
        validate_feed({"text": "t", "channel": channel})
