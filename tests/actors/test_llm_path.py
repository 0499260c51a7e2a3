"""The LLM path degrades gracefully: fallbacks, retries with backoff, the circuit breaker."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx
import pytest

from actors.agent.core.config_update import AgentConfigUpdate
from actors.agent.digest_store import DigestStore
from actors.agent.ticker import Ticker
from actors.common.breaker import BREAKER_THRESHOLD, COOL_OFF_JITTER, COOL_OFF_MIN_S, Breaker
from actors.core.bodies import convert
from actors.core.errors import retry_after_s
from actors.ingest.sense_buffer import SenseBuffer
from actors.kernel.clock import FakeClock
from actors.tree import Relay
from tests.support.actor_calls import asked, last_entry, tick, ticker_status
from tests.support.harness import free_port
from tests.support.observe import LogSink, wait_until
from tests.support.posts import sense
from tests.support.redaction_samples import assert_nowhere
from tests.support.relay import client_for, relay_settings, via_remote
from transport.agent.fake_llm import FakeLLM

PRIMARY = "google/gemini-2.5-flash-lite"
FALLBACK = "anthropic/claude-3.5-haiku"


def models_asked(fake: FakeLLM) -> list[str]:
    return [r.body["model"] for r in fake.requests]


def start(make_relay: Callable[..., Relay], fake: FakeLLM, **agent: Any) -> Relay:
    relay = make_relay(relay_settings(fake, **agent))
    asked(relay.handles["sense"], SenseBuffer.append, sense())
    return relay


@pytest.mark.parametrize("failure", ["nonjson", "http401", "hang", "empty"])
def test_a_failing_model_falls_back_and_the_entry_names_who_answered(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, failure: str
) -> None:
    fake_llm.model_modes[PRIMARY] = failure
    # a hang is waited out; the fallback that answers needs time to spare on a busy machine
    timeout_ms = 1_000 if failure == "hang" else 5_000
    relay = start(make_relay, fake_llm, fallback_models=(FALLBACK,), timeout_ms=timeout_ms)
    assert tick(relay, logs) == "ok"
    assert models_asked(fake_llm) == [PRIMARY, FALLBACK]
    assert last_entry(relay)["model"] == FALLBACK
    assert logs.named("llm.fallback")[0]["next"] == FALLBACK


def test_when_every_model_fails_the_tick_fails_with_each_error(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.mode = "nonjson"
    relay = start(make_relay, fake_llm, fallback_models=(FALLBACK, "x/third"))
    assert tick(relay, logs) == "failed"
    assert models_asked(fake_llm) == [PRIMARY, FALLBACK, "x/third"]
    assert len(logs.named("tick")[-1]["errors"]) == 3


def test_a_5xx_is_retried_with_backoff_on_the_clock_then_succeeds(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, clock: FakeClock, logs: LogSink
) -> None:
    fake_llm.mode = "http500"
    relay = start(make_relay, fake_llm, timeout_ms=5_000)
    assert asked(relay.handles["ticker"], Ticker.tick) == "started"
    wait_until(lambda: logs.named("llm.retry"), what="the first retry to be scheduled")
    first = logs.named("llm.retry")[0]["in_s"]
    assert 0.5 <= first <= 0.6
    clock.advance(0.4)
    assert fake_llm.calls == 1  # not before its delay
    clock.advance(0.3)
    wait_until(lambda: len(logs.named("llm.retry")) == 2, what="the second retry")
    assert 1.0 <= logs.named("llm.retry")[1]["in_s"] <= 1.2
    fake_llm.mode = "ok"
    clock.advance(1.3)
    wait_until(lambda: logs.named("tick"), what="the tick to finish")
    assert logs.named("tick")[-1]["outcome"] == "ok"
    assert fake_llm.calls == 3
    errors = logs.named("tick")[-1]["errors"]  # the two identical errors, said once
    assert len(errors) == 1
    assert errors[0].endswith("(2 times)")


def test_a_429_waits_as_long_as_retry_after_says(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, clock: FakeClock, logs: LogSink
) -> None:
    fake_llm.mode = "http429"
    fake_llm.retry_after = "3"
    relay = start(make_relay, fake_llm, timeout_ms=10_000)
    assert asked(relay.handles["ticker"], Ticker.tick) == "started"
    wait_until(lambda: logs.named("llm.retry"), what="the retry to be scheduled")
    assert logs.named("llm.retry")[0]["in_s"] == 3.0
    fake_llm.mode = "ok"
    clock.advance(2.9)
    assert fake_llm.calls == 1
    clock.advance(0.2)
    wait_until(lambda: logs.named("tick"), what="the tick to finish")
    assert fake_llm.calls == 2


def test_a_retry_that_would_overrun_the_budget_moves_on_instead(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.model_modes[PRIMARY] = "http429"
    fake_llm.retry_after = "120"
    relay = start(make_relay, fake_llm, fallback_models=(FALLBACK,), timeout_ms=5_000)
    assert tick(relay, logs) == "ok"
    assert models_asked(fake_llm) == [PRIMARY, FALLBACK]
    assert not logs.named("llm.retry")


def test_a_4xx_other_than_429_is_not_retried(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.mode = "http401"
    relay = start(make_relay, fake_llm, timeout_ms=5_000)
    assert tick(relay, logs) == "failed"
    assert fake_llm.calls == 1
    assert "HTTP 401" in logs.named("tick")[-1]["errors"][0]


def test_retry_after_reads_seconds_and_dates() -> None:
    assert retry_after_s("7") == 7.0
    assert retry_after_s("-3") == 0.0
    assert retry_after_s(None) is None
    assert retry_after_s("soon") is None
    assert retry_after_s("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past


def test_the_circuit_opens_after_repeated_failures_cools_off_and_probes(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, clock: FakeClock, logs: LogSink
) -> None:
    fake_llm.mode = "nonjson"
    relay = start(make_relay, fake_llm)
    for n in range(1, BREAKER_THRESHOLD):
        assert tick(relay, logs) == "failed"
        assert ticker_status(relay)["state"] == "degraded"
        assert ticker_status(relay)["consecutiveFailures"] == n
    assert tick(relay, logs) == "failed"
    assert ticker_status(relay)["state"] == "open"
    assert logs.named("agent.circuit_open")

    assert tick(relay, logs) == "open"  # cooling off: no call
    assert fake_llm.calls == BREAKER_THRESHOLD
    clock.advance(COOL_OFF_MIN_S * (1 + COOL_OFF_JITTER) + 0.1)

    assert tick(relay, logs) == "failed"  # the probe, which fails: open for longer
    assert ticker_status(relay)["state"] == "open"
    assert ticker_status(relay)["circuitOpenForMs"] >= 2 * COOL_OFF_MIN_S * 1000 - 1
    assert tick(relay, logs) == "open"

    fake_llm.mode = "ok"
    clock.advance(2 * COOL_OFF_MIN_S * (1 + COOL_OFF_JITTER) + 0.1)
    assert tick(relay, logs) == "ok"
    assert ticker_status(relay)["state"] == "ok"
    assert ticker_status(relay)["consecutiveFailures"] == 0
    assert logs.named("agent.circuit_closed")
    assert asked(relay.handles["digest"], DigestStore.stats)["circuitSkips"] == 2


def test_breaker_cool_off_doubles_up_to_its_cap_and_resets_on_success() -> None:
    breaker = Breaker()
    now = 0.0
    periods = []
    for _ in range(BREAKER_THRESHOLD - 1):
        assert breaker.failure(now, rng=lambda: 0.0) is False
    for _ in range(8):
        assert breaker.failure(now, rng=lambda: 0.0) is True
        assert breaker.open_until is not None
        periods.append(breaker.open_until - now)
    assert periods == [30, 60, 120, 240, 480, 600, 600, 600]
    assert breaker.success() is True
    assert breaker.state(now) == "ok"


def test_health_shows_the_llm_path_state(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM
) -> None:
    settings, transport = via_remote(fake_llm, api_key="")  # a server that needs a key
    relay = make_relay(settings, llm_transport=transport)
    assert ticker_status(relay)["state"] == "no_key"  # enabled, but nothing to call with
    asked(
        relay.handles["ticker"],
        Ticker.update_config,
        convert({"openrouterApiKey": "k"}, AgentConfigUpdate),
    )
    assert ticker_status(relay)["state"] == "ok"
    asked(
        relay.handles["ticker"],
        Ticker.update_config,
        convert({"enabled": False}, AgentConfigUpdate),
    )
    assert ticker_status(relay)["state"] == "disabled"


# -- the key in errors, health, metrics and logs ---------------------------------------------

TOKEN = "llm-path-token"
AUTHORIZED = {"Authorization": f"Bearer {TOKEN}"}
KEY = "sk-or-v1-" + "5e1f" * 16
PASTED = KEY + "\u201d"
"""The key as pasted with the closing curly quote of the document it was copied from."""
PLACEHOLDER = "qz7wv-local-kx9w4"
"""A key a local server takes, in no vendor's format: only the literal scrub can find it (no
eight characters of it are a word the relay's own texts may hold, such as "placeholder")."""


def run_one_tick(relay: Relay) -> None:
    """Start a tick by hand and wait until it has ended (whatever its outcome)."""
    asked(relay.handles["sense"], SenseBuffer.append, sense())
    asked(relay.handles["ticker"], Ticker.tick)
    wait_until(lambda: not ticker_status(relay)["inFlight"], what="the tick to end")


def test_a_key_no_http_header_can_carry_is_refused_and_shown_nowhere(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, rendered_logs: io.StringIO
) -> None:
    settings, transport = via_remote(fake_llm, api_key="")  # a server that needs a key
    relay = make_relay(replace(settings, token=TOKEN), llm_transport=transport)
    with client_for(relay) as client:
        answer = client.post("/agent/config", json={"openrouterApiKey": PASTED}, headers=AUTHORIZED)
        run_one_tick(relay)
        health = client.get("/health", headers=AUTHORIZED)
        metrics = client.get("/metrics", headers=AUTHORIZED)
    assert_nowhere(KEY, answer.text, health.text, metrics.text, rendered_logs.getvalue())
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert "openrouterApiKey" in error and "position 74" in error and "U+201D" in error
    assert health.json()["agent"]["hasApiKey"] is False
    assert relay.handles["llm"].restarts == 0
    assert fake_llm.calls == 0


def _raising(request: httpx.Request) -> httpx.Response:
    msg = f"proxy refused {request.headers['Authorization']}"
    raise RuntimeError(msg)


def _echoing(request: httpx.Request) -> httpx.Response:
    key = request.headers["Authorization"].removeprefix("Bearer ")
    return httpx.Response(401, json={"error": {"message": f"key {key} is not known here"}})


def _echoing_cut(request: httpx.Request) -> httpx.Response:
    key = request.headers["Authorization"].removeprefix("Bearer ")
    return httpx.Response(401, text="x" * 185 + key)  # the error keeps 200 characters


@pytest.mark.parametrize("answer", [_raising, _echoing, _echoing_cut])
def test_an_llm_failure_that_quotes_the_key_is_counted_and_shows_it_nowhere(
    make_relay: Callable[..., Relay],
    rendered_logs: io.StringIO,
    answer: Callable[[httpx.Request], httpx.Response],
) -> None:
    settings = relay_settings(api_key=PLACEHOLDER, base_url="http://127.0.0.1:9/v1")
    relay = make_relay(replace(settings, token=TOKEN), llm_transport=httpx.MockTransport(answer))
    with client_for(relay) as client:
        run_one_tick(relay)
        health = client.get("/health", headers=AUTHORIZED)
        metrics = client.get("/metrics", headers=AUTHORIZED)
    assert_nowhere(PLACEHOLDER, health.text, metrics.text, rendered_logs.getvalue())
    agent = health.json()["agent"]
    assert agent["failures"] == 1
    assert agent["consecutiveFailures"] == 1
    assert "[redacted:" in agent["lastError"]
    assert relay.handles["llm"].restarts == 0


# -- failures name the setting to fix ------------------------------------------------------


def test_an_unreachable_llm_names_agent_base_url_and_says_its_error_once(
    make_relay: Callable[..., Relay], clock: FakeClock, logs: LogSink
) -> None:
    closed = f"http://127.0.0.1:{free_port()}/v1"
    relay = make_relay(relay_settings(api_key="k", base_url=closed, timeout_ms=10_000))
    asked(relay.handles["sense"], SenseBuffer.append, sense())
    assert asked(relay.handles["ticker"], Ticker.tick) == "started"
    for retries in (1, 2):

        def retried(n: int = retries) -> bool:
            return len(logs.named("llm.retry")) == n

        wait_until(retried, what="a retry")
        clock.advance(1.5)
    wait_until(lambda: logs.named("tick"), what="the tick to finish")
    line = logs.named("tick")[-1]
    assert line["outcome"] == "failed"
    assert line["setting"] == "AGENT_BASE_URL"
    assert len(line["errors"]) == 1  # three identical errors, said once
    assert line["errors"][0].endswith("(3 times)")
    assert all(retry["setting"] == "AGENT_BASE_URL" for retry in logs.named("llm.retry"))
    last_error = asked(relay.handles["digest"], DigestStore.stats)["lastError"]
    assert "AGENT_BASE_URL" in last_error


@pytest.mark.parametrize(
    ("mode", "setting"),
    [
        ("http401", "OPENROUTER_API_KEY"),
        ("no_model_404", "AGENT_MODEL"),
        ("bad_model_400", "AGENT_MODEL"),
        ("hang", "AGENT_TIMEOUT_MS"),
    ],
)
def test_a_failed_tick_names_the_setting_of_its_error(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, mode: str, setting: str
) -> None:
    fake_llm.mode = mode
    relay = start(make_relay, fake_llm, timeout_ms=300)
    assert tick(relay, logs) == "failed"
    assert logs.named("tick")[-1]["setting"] == setting
    assert setting in asked(relay.handles["digest"], DigestStore.stats)["lastError"]
