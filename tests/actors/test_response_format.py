"""Structured output end to end: what each request asks for, stepping down on a refusal, the
memory of what answered, and that a refusal is nobody's failure. Real actors, the real fake
LLM on loopback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from actors.agent.core.response_format import ANSWER_SCHEMA, bounded_schema
from actors.agent.digest_store import DigestStore
from actors.ingest.feed_buffer import FeedBuffer
from actors.ingest.sense_buffer import SenseBuffer
from actors.tree import Relay
from config.agent.settings import AgentSettings
from tests.support.actor_calls import asked, last_entry, tick, ticker_status
from tests.support.observe import LogSink
from tests.support.posts import sense
from tests.support.relay import client_for, relay_settings, scrape, value
from transport.agent.fake_llm import FakeLLM

PRIMARY = "google/gemini-2.5-flash-lite"
FALLBACK = "anthropic/claude-3.5-haiku"


def asked_formats(fake: FakeLLM) -> list[str | None]:
    """The ``response_format.type`` of each request the fake received (``None``: none)."""
    kinds: list[str | None] = []
    for request in fake.requests:
        field = request.body.get("response_format")
        kinds.append(field["type"] if isinstance(field, dict) else None)
    return kinds


def start(make_relay: Callable[..., Relay], fake: FakeLLM, **agent: Any) -> Relay:
    return make_relay(relay_settings(fake, **agent))


def show_and_tick(relay: Relay, logs: LogSink, ocr: str) -> str:
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr=ocr))
    return tick(relay, logs)


def health_agent(relay: Relay) -> dict[str, Any]:
    with client_for(relay) as client:
        body: dict[str, Any] = client.get("/health").json()["agent"]
    return body


def test_auto_asks_for_the_answers_schema_first_and_health_shows_what_answered(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start(make_relay, fake_llm)
    assert health_agent(relay)["responseFormats"] == []
    assert show_and_tick(relay, logs, "def tick():") == "ok"

    sent = fake_llm.requests[0].body["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["strict"] is True
    assert sent["json_schema"]["schema"] == ANSWER_SCHEMA
    assert logs.named("tick")[-1]["responseFormat"] == "json_schema"
    assert health_agent(relay)["responseFormats"] == [
        {"model": PRIMARY, "baseUrl": fake_llm.base_url, "level": "json_schema"}
    ]


@pytest.mark.parametrize("mode", ["refuse_schema_400", "refuse_schema_500", "json_object_only"])
def test_a_refused_json_schema_steps_down_at_once_and_is_remembered(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, mode: str
) -> None:
    fake_llm.mode = mode
    relay = start(make_relay, fake_llm)

    assert show_and_tick(relay, logs, "first screen") == "ok"
    assert asked_formats(fake_llm) == ["json_schema", "json_object"]
    assert fake_llm.requests[1].body["response_format"]["schema"] == bounded_schema(
        AgentSettings().max_tokens
    )
    assert last_entry(relay)["parsedOk"] is True
    assert logs.named("llm.response_format_refused")[0]["next"] == "json_object"
    assert not logs.named("llm.retry")  # asked again at once, not after a backoff

    assert show_and_tick(relay, logs, "second screen") == "ok"
    assert asked_formats(fake_llm)[2:] == ["json_object"]  # the memory: no second refusal
    assert health_agent(relay)["responseFormats"] == [
        {"model": PRIMARY, "baseUrl": fake_llm.base_url, "level": "json_object"}
    ]


def test_a_refusal_counts_toward_no_failure_no_breaker_and_no_fallback(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.mode = "refuse_schema_500"
    relay = start(make_relay, fake_llm, fallback_models=(FALLBACK,))
    for n in range(4):  # more ticks than the breaker's threshold
        assert show_and_tick(relay, logs, f"screen {n}") == "ok"
    assert asked_formats(fake_llm) == ["json_schema", *["json_object"] * 4]
    assert {r.body["model"] for r in fake_llm.requests} == {PRIMARY}
    stats = asked(relay.handles["digest"], DigestStore.stats)
    assert (stats["failures"], stats["fallbacks"], stats["lastError"]) == (0, 0, None)
    assert stats["costByModel"][PRIMARY].calls == 4
    status = ticker_status(relay)
    assert (status["state"], status["consecutiveFailures"]) == ("ok", 0)
    assert not logs.named("llm.fallback")
    with client_for(relay) as client:
        samples = scrape(client)
    assert value(samples, "relay_llm_requests_total", model=PRIMARY, outcome="error") == 0
    # every request is counted: the stand-in's five are four answered and one refused
    assert value(samples, "relay_llm_requests_total", model=PRIMARY, outcome="refused") == 1
    assert value(samples, "relay_llm_requests_total", model=PRIMARY, outcome="ok") == 4
    assert len(fake_llm.requests) == 5
    labels = {"model": PRIMARY, "base_url": fake_llm.base_url, "level": "json_object"}
    assert value(samples, "relay_llm_response_format", **labels) == 1


def test_the_level_is_remembered_per_model(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.model_modes[PRIMARY] = "http401"  # fails outright: not a refusal, no memory
    fake_llm.model_modes[FALLBACK] = "refuse_schema_400"
    relay = start(make_relay, fake_llm, fallback_models=(FALLBACK,))
    assert show_and_tick(relay, logs, "one") == "ok"
    models = [r.body["model"] for r in fake_llm.requests]
    assert list(zip(models, asked_formats(fake_llm), strict=True)) == [
        (PRIMARY, "json_schema"),
        (FALLBACK, "json_schema"),
        (FALLBACK, "json_object"),
    ]
    assert health_agent(relay)["responseFormats"] == [
        {"model": FALLBACK, "baseUrl": fake_llm.base_url, "level": "json_object"}
    ]


@pytest.mark.parametrize("mode", ["bad_model_400", "too_long_400", "no_model_404"])
def test_an_error_that_names_no_format_goes_straight_to_the_fallback(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, mode: str
) -> None:
    """A 400 for an unknown model or a long prompt is no refusal of ``response_format``: the
    same model is not asked again at a lower level, nor retried; the next model is."""
    fake_llm.model_modes[PRIMARY] = mode
    relay = start(make_relay, fake_llm, fallback_models=(FALLBACK,))
    assert show_and_tick(relay, logs, "one") == "ok"
    models = [r.body["model"] for r in fake_llm.requests]
    assert list(zip(models, asked_formats(fake_llm), strict=True)) == [
        (PRIMARY, "json_schema"),
        (FALLBACK, "json_schema"),
    ]
    assert last_entry(relay)["model"] == FALLBACK
    assert not logs.named("llm.response_format_refused")
    assert not logs.named("llm.retry")
    assert health_agent(relay)["responseFormats"] == [
        {"model": FALLBACK, "baseUrl": fake_llm.base_url, "level": "json_schema"}
    ]


def test_a_named_level_is_sent_as_it_is_and_its_refusal_is_a_failure(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.mode = "refuse_schema_400"
    relay = start(make_relay, fake_llm, response_format="json_schema")
    assert show_and_tick(relay, logs, "one") == "failed"
    assert asked_formats(fake_llm) == ["json_schema"]
    assert asked(relay.handles["digest"], DigestStore.stats)["failures"] == 1


@pytest.mark.parametrize(("setting", "sent"), [("off", None), ("json_object", "json_object")])
def test_off_sends_no_response_format_and_json_object_starts_there(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, setting: str, sent: str
) -> None:
    relay = start(make_relay, fake_llm, response_format=setting)
    assert show_and_tick(relay, logs, "one") == "ok"
    assert asked_formats(fake_llm) == [sent]


def test_the_setting_changes_at_run_time(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start(make_relay, fake_llm)
    with client_for(relay) as client:
        changed = client.post("/agent/config", json={"responseFormat": "off"})
        assert changed.status_code == 200, changed.text
        assert client.get("/agent/config").json()["config"]["responseFormat"] == "off"
        refused = client.post("/agent/config", json={"responseFormat": "xml"})
        assert refused.status_code == 400
        assert "responseFormat must be one of auto" in refused.json()["error"]
    assert show_and_tick(relay, logs, "one") == "ok"
    assert asked_formats(fake_llm) == [None]


def test_a_server_that_ignores_the_format_keeps_the_prose_fallback(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.mode = "ignore_format"
    relay = start(make_relay, fake_llm)
    assert show_and_tick(relay, logs, "one") == "ok"
    assert asked_formats(fake_llm) == ["json_schema"]
    entry = last_entry(relay)
    prose = f"The user is busy. {fake_llm.hud}. {fake_llm.digest}"
    assert (entry["hud"], entry["digest"], entry["parsedOk"]) == (prose[:80], prose, False)
    feed = [i.text for i in asked(relay.handles["feed"], FeedBuffer.items_after, 0)]
    assert feed[-1] == f"[🧠] {prose[:80]}"


# -- nothing garbled reaches the HUD ----------------------------------------------------------


@pytest.mark.parametrize(("mode", "reason"), [("echo", "echo"), ("fragments", "fragment")])
def test_a_garbled_hud_is_withheld_counted_and_logged_and_the_digest_kept(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, mode: str, reason: str
) -> None:
    relay = start(make_relay, fake_llm)
    assert show_and_tick(relay, logs, "def tick():") == "ok"  # a good hud first
    fake_llm.mode = mode
    assert show_and_tick(relay, logs, "def tock():") == "ok"

    feed = [i.text for i in asked(relay.handles["feed"], FeedBuffer.items_after, 0)]
    assert feed == [f"[🧠] {fake_llm.hud}"]  # only the good one
    entry = last_entry(relay)
    assert entry["hud"] == "—"
    assert entry["pushed"] is False
    assert entry["digest"] not in ("—", fake_llm.digest)  # the spec's fallback: the raw text
    assert logs.named("tick")[-1]["hudWithheld"] == reason
    assert logs.named("tick")[-1]["hud"] == "—"
    assert health_agent(relay)["hudsWithheld"] == {reason: 1}
    with client_for(relay) as client:
        samples = scrape(client)
    assert value(samples, "relay_huds_withheld_total", reason=reason) == 1
    assert value(samples, "relay_huds_withheld_total", reason="placeholder") == 0
