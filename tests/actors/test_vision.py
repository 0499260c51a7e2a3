"""Vision: the screen's own images go with the calls, through a whole relay and the stand-in LLM
(which records each request's content parts)."""

from __future__ import annotations

import base64
import io
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from actors.agent.core.completion import request_body
from actors.agent.core.prompt import SCREENSHOTS
from actors.agent.core.response_format import BLIND_FOR_S
from actors.agent.ticker import Ticker
from actors.core.errors import LLMHTTPError
from actors.core.screen_image import MAX_IMAGE_BYTES
from actors.tree import Relay
from config.agent.settings import DEFAULT_MODEL, DEFAULT_VISION_MODEL
from tests.support.actor_calls import asked, last_entry, tick, ticker_status
from tests.support.observe import LogSink, wait_until
from tests.support.posts import jpeg, png, screen_event
from tests.support.relay import client_for, relay_settings, scrape, value
from transport.agent.fake_llm import FakeLLM


def url(picture: bytes, kind: str = "jpeg") -> str:
    return f"data:image/{kind};base64,{base64.b64encode(picture).decode()}"


def post(client: httpx.Client, ocr: str, picture: bytes | str | None = None) -> int:
    answer = client.post("/sense", json=screen_event(ocr, picture))
    assert answer.status_code == 200, answer.text
    sense_id: int = answer.json()["id"]
    return sense_id


def vision(client: httpx.Client) -> dict[str, Any]:
    shown: dict[str, Any] = client.get("/health").json()["agent"]["vision"]
    return shown


def test_an_image_posted_with_a_screen_event_reaches_the_next_call_with_the_vision_model(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink
) -> None:
    sense_id = post(client, "Revenue by quarter", jpeg(1))
    context = client.get("/agent/context").json()["context"]
    assert context["images"] == [{"senseId": sense_id, "type": "image/jpeg", "bytes": 600}]
    assert tick(relay, logs) == "ok"
    (seen,) = fake_llm.requests
    assert seen.body["model"] == DEFAULT_VISION_MODEL
    text, picture = seen.body["messages"][0]["content"]
    assert text["type"] == "text"
    assert SCREENSHOTS.format(count=1) in text["text"]
    assert "Revenue by quarter" in text["text"]
    assert picture == {"type": "image_url", "image_url": {"url": url(jpeg(1)), "detail": "low"}}
    entry = last_entry(relay)
    assert entry["tokensIn"] == fake_llm.tokens_in + fake_llm.image_tokens
    assert logs.named("tick")[-1]["images"] == 1
    health = client.get("/health").json()["agent"]
    assert health["vision"] == {"imagesSent": 1, "imagesRefused": {}}
    assert health["costByModel"][DEFAULT_VISION_MODEL]["tokensIn"] == entry["tokensIn"]
    assert health["costByModel"][DEFAULT_VISION_MODEL]["costSource"] == "table"
    assert value(scrape(client), "relay_vision_images_sent_total") == 1


def test_the_same_image_is_not_sent_twice_and_a_newer_one_replaces_it(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink
) -> None:
    post(client, "Dashboard, first look", jpeg(1))
    assert tick(relay, logs) == "ok"
    post(client, "Dashboard, scrolled", jpeg(1))  # the same picture again
    assert client.get("/agent/context").json()["context"]["images"] == []
    assert tick(relay, logs) == "ok"
    post(client, "Dashboard, a new chart", jpeg(2))
    assert tick(relay, logs) == "ok"
    first, second, third = fake_llm.requests
    assert first.images == [url(jpeg(1))]
    assert second.images == []
    assert second.body["model"] == DEFAULT_MODEL  # no image: the usual model
    assert third.images == [url(jpeg(2))]
    assert third.body["model"] == DEFAULT_VISION_MODEL
    assert vision(client)["imagesSent"] == 2


def test_without_images_the_request_is_the_text_request_byte_for_byte(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink
) -> None:
    post(client, "no picture here")
    assert tick(relay, logs) == "ok"
    (seen,) = fake_llm.requests
    prompt = seen.body["messages"][0]["content"]
    assert isinstance(prompt, str)
    assert SCREENSHOTS.split("{")[0] not in prompt
    config = asked(relay.handles["ticker"], Ticker.config)
    assert seen.body == request_body(
        DEFAULT_MODEL,
        prompt,
        max_tokens=config.max_tokens,
        temperature=config.temperature,
        response_format="json_schema",
    )


def test_vision_off_sends_no_image_and_on_again_sends_the_newest(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink
) -> None:
    switched = client.post("/agent/config", json={"visionEnabled": False})
    assert switched.json()["config"]["visionEnabled"] is False
    post(client, "private chart", jpeg(1))
    assert client.get("/agent/context").json()["context"]["images"] == []
    assert tick(relay, logs) == "ok"
    assert fake_llm.requests[-1].images == []
    assert fake_llm.requests[-1].body["model"] == DEFAULT_MODEL
    client.post("/agent/config", json={"visionEnabled": True, "visionMaxImages": 2})
    post(client, "another chart", png(2))
    assert tick(relay, logs) == "ok"
    assert fake_llm.requests[-1].images == [url(png(2), "png"), url(jpeg(1))]
    text = fake_llm.requests[-1].prompt
    assert SCREENSHOTS.format(count=2) in text


def test_vision_off_from_the_environment_sends_none(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = make_relay(relay_settings(fake_llm, vision_enabled=False))
    with client_for(relay) as client:
        post(client, "chart", jpeg(1))
        assert tick(relay, logs) == "ok"
    assert fake_llm.requests[0].images == []


@pytest.mark.parametrize(
    ("picture", "reason"),
    [
        ("this is not base64!", "not_base64"),
        (b"GIF89a" + bytes(100), "not_image"),
        (jpeg(3, size=MAX_IMAGE_BYTES + 10), "too_large"),
    ],
)
def test_a_malformed_image_is_never_sent_and_is_counted_and_logged_once(
    relay: Relay,
    client: httpx.Client,
    fake_llm: FakeLLM,
    logs: LogSink,
    picture: bytes | str,
    reason: str,
) -> None:
    sense_id = post(client, "a chart", picture)
    assert tick(relay, logs) == "ok"
    post(client, "the same chart, later")  # the refused one is still in the window
    assert tick(relay, logs) == "ok"
    assert [r.images for r in fake_llm.requests] == [[], []]
    assert {r.body["model"] for r in fake_llm.requests} == {DEFAULT_MODEL}
    (refused,) = logs.named("vision.image_refused")
    assert (refused["sense_id"], refused["reason"]) == (sense_id, reason)
    assert vision(client) == {"imagesSent": 0, "imagesRefused": {reason: 1}}
    assert value(scrape(client), "relay_vision_images_refused_total", reason=reason) == 1


def test_images_never_cause_a_call_by_themselves(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = make_relay(relay_settings(fake_llm, economy=True))
    with client_for(relay) as client:
        post(client, "def tick(self):", jpeg(1))
        assert tick(relay, logs) == "ok"
        post(client, "def tick(self):", jpeg(2))  # the same text, a new picture
        assert tick(relay, logs) == "unchanged"
    assert fake_llm.calls == 1


def test_only_images_inside_the_window_are_sent(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, clock: Any
) -> None:
    relay = make_relay(relay_settings(fake_llm, max_age_ms=60_000, vision_max_images=2))
    with client_for(relay) as client:
        post(client, "old chart", jpeg(1))
        clock.advance(61)
        post(client, "new text only")
        assert client.get("/agent/context").json()["context"]["images"] == []
        assert tick(relay, logs) == "ok"
    assert fake_llm.requests[0].images == []


def test_when_the_vision_model_fails_the_usual_model_gets_the_same_images(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.model_modes[DEFAULT_VISION_MODEL] = "http401"
    post(client, "a chart", jpeg(1))
    assert tick(relay, logs) == "ok"
    assert [(r.body["model"], r.images) for r in fake_llm.requests] == [
        (DEFAULT_VISION_MODEL, [url(jpeg(1))]),
        (DEFAULT_MODEL, [url(jpeg(1))]),
    ]
    assert last_entry(relay)["model"] == DEFAULT_MODEL


@pytest.mark.parametrize("mode", ["refuse_schema_400", "json_object_only"])
def test_structured_output_negotiation_carries_the_images_down_every_level(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink, mode: str
) -> None:
    fake_llm.mode = mode
    post(client, "a chart", jpeg(1))
    assert tick(relay, logs) == "ok"
    formats = [r.body.get("response_format", {}).get("type") for r in fake_llm.requests]
    assert formats == ["json_schema", "json_object"]
    assert [r.images for r in fake_llm.requests] == [[url(jpeg(1))]] * 2
    assert last_entry(relay)["hud"] == fake_llm.hud


def test_an_echo_of_the_prompt_with_images_is_not_pushed(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.mode = "echo"
    post(client, "a chart", jpeg(1))
    assert tick(relay, logs) == "ok"
    assert logs.named("tick")[-1]["hudWithheld"] == "echo"
    feed = client.get("/feed").json()["messages"]
    assert not any(m.get("source") == "agent" for m in feed)


def test_no_image_bytes_appear_in_logs_errors_or_health(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, rendered_logs: io.StringIO
) -> None:
    fake_llm.mode = "bad_image"  # its error quotes the image back
    relay = make_relay(relay_settings(fake_llm, log_verbose=True))
    picture = base64.b64encode(jpeg(5, size=3000)).decode()
    with client_for(relay) as client:
        post(client, "a chart", picture)
        post(client, "a gif", base64.b64encode(b"GIF89a" + bytes(3000)).decode())
        client.get("/agent/context")
        asked(relay.handles["ticker"], Ticker.tick)
        wait_until(lambda: not ticker_status(relay)["inFlight"], what="the tick to end")
        health = client.get("/health").text
        metrics = client.get("/metrics").text
    assert [bool(r.images) for r in fake_llm.requests] == [True, False]
    lines = rendered_logs.getvalue()
    assert "llm.images_refused" in lines
    assert "vision.image_refused" in lines
    for text in (lines, health, metrics):
        assert picture[:40] not in text
        assert picture[-40:] not in text
        assert "R0lGODlh" not in text  # "GIF89a" in base64


def test_an_error_that_quotes_an_image_back_is_told_without_it() -> None:
    picture = base64.b64encode(jpeg(6, size=2000)).decode()
    error = LLMHTTPError(400, '{"error": "bad image ' + picture[150:1500] + '"}')
    assert picture[200:240] not in str(error)
    assert "[image data]" in str(error)


def test_a_model_that_refuses_images_is_asked_without_them_for_a_while(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink, clock: Any
) -> None:
    fake_llm.mode = "no_vision"
    post(client, "a chart", jpeg(1))
    assert tick(relay, logs) == "ok"
    assert [r.images for r in fake_llm.requests] == [[url(jpeg(1))], []]
    assert SCREENSHOTS.format(count=1) in fake_llm.requests[0].prompt
    assert SCREENSHOTS.split(":")[0] not in fake_llm.requests[1].prompt  # none said, none sent
    assert logs.named("tick")[-1]["imagesDropped"] == 1
    (row,) = client.get("/health").json()["agent"]["responseFormats"]
    assert (row["model"], row["images"]) == (DEFAULT_VISION_MODEL, False)
    post(client, "a new chart", jpeg(2))
    assert tick(relay, logs) == "ok"
    assert len(fake_llm.requests) == 3
    assert fake_llm.requests[-1].images == []  # not asked with images again
    clock.advance(BLIND_FOR_S + 1)
    fake_llm.mode = "ok"  # the model reads images now
    post(client, "a third chart", jpeg(3))
    assert tick(relay, logs) == "ok"
    assert fake_llm.requests[-1].images == [url(jpeg(3))]
    (row,) = client.get("/health").json()["agent"]["responseFormats"]
    assert "images" not in row


def test_a_failure_with_and_without_images_is_no_refusal_of_images(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink, clock: Any
) -> None:
    fake_llm.mode = "http500"
    post(client, "a chart", jpeg(1))
    asked(relay.handles["ticker"], Ticker.tick)
    for _ in range(500):  # each retry waits on the clock, each request a moment
        if logs.named("tick"):
            break
        clock.advance(0.3)
        time.sleep(0.01)
    assert logs.named("tick")[-1]["outcome"] == "failed"
    assert {bool(r.images) for r in fake_llm.requests} == {True, False}
    fake_llm.mode = "ok"
    post(client, "a chart, later")
    assert tick(relay, logs) == "ok"
    assert fake_llm.requests[-1].images == [url(jpeg(1))]  # still unsent, and still wanted


@pytest.mark.parametrize("mode", ["no_model_404", "bad_model_400", "too_long_400"])
def test_an_ordinary_failure_with_images_is_no_refusal_of_images(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink, mode: str
) -> None:
    """A vision model that does not exist, or a prompt too long for it, goes straight to the
    next model with the same images: asking it again without them would fail the same way."""
    fake_llm.model_modes[DEFAULT_VISION_MODEL] = mode
    post(client, "a chart", jpeg(1))
    assert tick(relay, logs) == "ok"
    assert [(r.body["model"], r.images) for r in fake_llm.requests] == [
        (DEFAULT_VISION_MODEL, [url(jpeg(1))]),
        (DEFAULT_MODEL, [url(jpeg(1))]),
    ]
    assert not logs.named("llm.images_refused")
    assert "imagesDropped" not in logs.named("tick")[-1]
    rows = client.get("/health").json()["agent"]["responseFormats"]
    assert [(r["model"], r.get("images", True)) for r in rows] == [(DEFAULT_MODEL, True)]
