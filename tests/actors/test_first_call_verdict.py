"""The first call to each model is its check: the LLM caller logs the ``doctor.check`` line the
doctor would give it (the relay's start asks nothing), once per model and base URL."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from actors.ingest.sense_buffer import SenseBuffer
from actors.tree import Relay
from config.agent.settings import DEFAULT_MODEL, DEFAULT_VISION_MODEL
from tests.support.actor_calls import asked, tick
from tests.support.observe import LogSink
from tests.support.posts import jpeg, screen_event, sense
from tests.support.relay import relay_settings
from transport.agent.fake_llm import FakeLLM

FALLBACK = "anthropic/claude-3.5-haiku"


def verdicts(logs: LogSink) -> list[dict[str, Any]]:
    return logs.named("doctor.check")


def show(relay: Relay, n: int) -> None:
    asked(relay.handles["sense"], SenseBuffer.append, sense(f"def step_{n}(): pass", ts=n))


def test_a_refused_key_is_the_llm_checks_fail_once_though_a_fallback_answers(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.model_modes[DEFAULT_MODEL] = "http401"
    relay = make_relay(relay_settings(fake_llm, fallback_models=(FALLBACK,)))
    for n in (1, 2):
        show(relay, n)
        assert tick(relay, logs) == "ok"
    (verdict,) = verdicts(logs)
    assert (verdict["check"], verdict["verdict"], verdict["level"]) == ("llm", "FAIL", "warning")
    assert verdict["found"].startswith(f"{DEFAULT_MODEL} at {fake_llm.base_url} answered HTTP 401")
    assert verdict["remedy"] == "check OPENROUTER_API_KEY (the server refused the key, HTTP 401)"


def test_a_working_model_is_ok_with_its_latency_and_format(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = make_relay(relay_settings(fake_llm))
    show(relay, 1)
    assert tick(relay, logs) == "ok"
    (verdict,) = verdicts(logs)
    assert (verdict["check"], verdict["verdict"], verdict["level"]) == ("llm", "ok", "info")
    assert verdict["found"].endswith("(response format json_schema)")
    assert "remedy" not in verdict


def test_a_format_the_server_refuses_is_a_warning_naming_the_setting(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.mode = "refuse_schema_400"
    relay = make_relay(relay_settings(fake_llm))
    show(relay, 1)
    assert tick(relay, logs) == "ok"
    (verdict,) = verdicts(logs)
    assert verdict["verdict"] == "warn"
    assert "after the server refused json_schema" in verdict["found"]
    assert "AGENT_RESPONSE_FORMAT=json_object" in verdict["remedy"]


def test_a_vision_model_that_refuses_images_fails_the_vision_check(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.mode = "no_vision"
    relay = make_relay(relay_settings(fake_llm))
    url = f"http://127.0.0.1:{relay.address()[1]}"
    with httpx.Client(base_url=url, timeout=5) as client:
        client.post("/sense", json=screen_event("Revenue", jpeg(1))).raise_for_status()
    assert tick(relay, logs) == "ok"
    (verdict,) = verdicts(logs)
    assert (verdict["check"], verdict["verdict"]) == ("vision", "FAIL")
    assert verdict["found"].startswith(DEFAULT_VISION_MODEL)
    assert verdict["remedy"].startswith("check AGENT_VISION_MODEL")


def test_a_server_here_that_does_not_serve_the_default_model_says_what_it_lists(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.mode = "no_model_404"
    fake_llm.served = ["llama3.2", "qwen2.5:0.5b"]
    relay = make_relay(relay_settings(fake_llm, api_key=""))  # Ollama's way: no key, no model
    show(relay, 1)
    assert tick(relay, logs) == "failed"
    (verdict,) = verdicts(logs)
    assert verdict["remedy"].startswith("check AGENT_MODEL ")
    assert verdict["remedy"].endswith(": the server lists llama3.2, qwen2.5:0.5b")
    assert fake_llm.received.count("GET /v1/models") == 1
