"""``GET /metrics`` on the real server, read back with prometheus-client's own parser."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from actors.kernel.base import RelayActor
from actors.kernel.clock import FakeClock
from actors.tree import Relay
from tests.support.actor_calls import tick
from tests.support.observe import LogSink, wait_until
from tests.support.relay import Samples, client_for, relay_settings, scrape, value
from transport.agent.fake_llm import FakeLLM
from transport.handlers.exposition import RelayCollector, Scrape
from transport.shell.metrics import HTTP_BUCKETS_S, HttpStats, RouteStats
from transport.shell.profiling import ClientReports

PRIMARY = "google/gemini-2.5-flash-lite"
FALLBACK = "anthropic/claude-3.5-haiku"
SENSE = {"type": "text", "ts": 1, "ocr": "def build_context_window():", "meta": {"app": "idea"}}
TRANSCRIPT = "[PERIODIC] (normal)\nContext (1 entries):\n[2s ago, openrouter] fix the idle check"


def test_posts_are_counted_by_endpoint_and_outcome(relay: Relay, client: httpx.Client) -> None:
    assert client.post("/feed", json={"text": "one"}).status_code == 200
    assert client.post("/feed", json={"text": "two"}).status_code == 200
    assert client.post("/feed", content=b"{not json").status_code == 400
    too_large = b'{"text": "' + b"x" * (300 * 1024) + b'"}'
    assert client.post("/feed", content=too_large).status_code == 413
    assert client.post("/sense", json=SENSE).status_code == 200
    assert client.post("/sense", json={"ts": 1}).status_code == 400

    samples = scrape(client)

    ingested = {
        (endpoint, outcome): value(samples, "relay_ingested_total", endpoint=e, outcome=outcome)
        for endpoint, e in (("feed", "feed"), ("sense", "sense"))
        for outcome in ("ok", "bad_request", "too_large", "unavailable", "excluded")
    }
    assert ingested == {
        ("feed", "ok"): 2,
        ("feed", "bad_request"): 1,
        ("feed", "too_large"): 1,
        ("feed", "unavailable"): 0,
        ("feed", "excluded"): 0,
        ("sense", "ok"): 1,
        ("sense", "bad_request"): 1,
        ("sense", "too_large"): 0,
        ("sense", "unavailable"): 0,
        ("sense", "excluded"): 0,
    }
    feed = {"method": "POST", "route": "/feed"}
    assert value(samples, "relay_http_requests_total", **feed, status="200") == 2
    assert value(samples, "relay_http_requests_total", **feed, status="413") == 1
    assert value(samples, "relay_http_request_duration_seconds_count", **feed) == 4
    buckets = [
        value(samples, "relay_http_request_duration_seconds_bucket", **feed, le=le)
        for le in [repr(b) for b in HTTP_BUCKETS_S] + ["+Inf"]
    ]
    counts = [b or 0 for b in buckets]
    assert None not in buckets
    assert counts == sorted(counts) and counts[-1] == 4  # cumulative, +Inf is every one
    assert 0 < (value(samples, "relay_http_request_duration_seconds_sum", **feed) or 0) < 5


def test_refused_codings_and_expectations_are_counted_by_name(client: httpx.Client) -> None:
    brotli = {"Content-Encoding": "br"}
    assert client.post("/feed", content=b"{}", headers=brotli).status_code == 415
    assert (
        client.post(
            "/sense", content=b"a=1", headers={"Content-Type": "application/x-www-form-urlencoded"}
        ).status_code
        == 415
    )
    samples = scrape(client)
    for endpoint in ("feed", "sense"):
        counted = value(
            samples, "relay_ingested_total", endpoint=endpoint, outcome="unsupported_media_type"
        )
        assert counted == 1
        assert value(samples, "relay_ingested_total", endpoint=endpoint, outcome="error") is None


def test_unknown_paths_are_one_bounded_label_not_their_raw_path(client: httpx.Client) -> None:
    for n in range(3):
        assert client.get(f"/no/such/path/{n}").status_code == 404
    samples = scrape(client)
    assert value(samples, "relay_http_requests_total", method="*", route="unmatched", status="404")
    routes = {dict(labels).get("route") for _, labels in samples}
    assert not any(route and route.startswith("/no/") for route in routes)


@pytest.mark.slow
def test_a_post_the_buffer_cannot_take_in_time_is_unavailable_and_its_mailbox_shows(
    relay: Relay, client: httpx.Client
) -> None:
    relay.handles["feed"].tell(RelayActor.inject_fault, "hang", 3.0)
    assert client.post("/feed", json={"text": "stuck"}).status_code == 503  # after 1 s

    samples = scrape(client)

    assert value(samples, "relay_ingested_total", endpoint="feed", outcome="unavailable") == 1
    assert (value(samples, "relay_actor_mailbox_depth", actor="feed") or 0) >= 1
    wait_until(
        lambda: value(scrape(client), "relay_actor_mailbox_depth", actor="feed") == 0,
        timeout_s=10,
        what="the feed buffer to work through its mailbox after the hang",
    )


def _post_sense(client: httpx.Client, **fields: Any) -> None:
    assert client.post("/sense", json={**SENSE, **fields}).status_code == 200


def test_ticks_of_each_outcome_llm_figures_and_the_circuit_state(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, clock: FakeClock, logs: LogSink
) -> None:
    _post_sense(client)
    assert tick(relay, logs) == "ok"
    assert tick(relay, logs) == "idle"
    _post_sense(client)  # the same event again: news, but the window says the same
    assert tick(relay, logs) == "unchanged"
    clock.advance(121)  # the sense event leaves the 2-minute window
    assert client.post("/feed", json={"text": "no transcript"}).status_code == 200
    assert tick(relay, logs) == "empty"
    fake_llm.mode = "http401"
    _post_sense(client, ocr="something new")
    assert tick(relay, logs) == "failed"

    expected = {"called": 1, "idle": 1, "empty": 1, "fingerprint_skip": 1, "failed": 1}

    def ticks_counted() -> Samples | None:
        samples = scrape(client)
        counted = {o: value(samples, "relay_ticks_total", outcome=o) for o in expected}
        return samples if counted == expected else None

    samples = wait_until(ticks_counted, what="the digest store to count every tick")
    model = {"model": PRIMARY}
    assert value(samples, "relay_llm_requests_total", **model, outcome="ok") == 1
    assert value(samples, "relay_llm_requests_total", **model, outcome="error") == 1
    assert value(samples, "relay_llm_request_duration_seconds_count", **model) == 2
    assert value(samples, "relay_llm_request_duration_seconds_bucket", **model, le="+Inf") == 2
    assert value(samples, "relay_llm_tokens_total", **model, direction="in") == 310
    assert value(samples, "relay_llm_tokens_total", **model, direction="out") == 85
    # flash-lite from the built-in table: 310 x 0.10 + 85 x 0.40 USD per million
    assert value(samples, "relay_llm_cost_usd_total", **model) == pytest.approx(0.000065)
    assert value(samples, "relay_llm_fallbacks_total") == 0
    states = {s: value(samples, "relay_circuit_state", state=s) for s in ("ok", "degraded", "open")}
    assert states == {"ok": 0, "degraded": 1, "open": 0}
    assert value(samples, "relay_circuit_state", state="disabled") == 0
    assert value(samples, "relay_llm_consecutive_failures") == 1
    assert value(samples, "relay_scrape_source_up", source="digest") == 1
    assert value(samples, "relay_scrape_source_up", source="ticker") == 1


def test_a_tick_answered_by_a_fallback_model_is_counted(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.model_modes[PRIMARY] = "http401"
    relay = make_relay(relay_settings(fake_llm, fallback_models=(FALLBACK,)))
    with client_for(relay) as client:
        _post_sense(client)
        assert tick(relay, logs) == "ok"
        samples = wait_until(
            lambda: (s := scrape(client)) and value(s, "relay_llm_fallbacks_total") == 1 and s,
            what="the fallback to be counted",
        )
    assert value(samples, "relay_llm_requests_total", model=PRIMARY, outcome="error") == 1
    assert value(samples, "relay_llm_requests_total", model=PRIMARY, outcome="ok") == 0
    assert value(samples, "relay_llm_requests_total", model=FALLBACK, outcome="ok") == 1
    assert value(samples, "relay_llm_cost_usd_total", model=PRIMARY) is None  # it cost nothing
    assert value(samples, "relay_llm_cost_usd_total", model=FALLBACK) == pytest.approx(
        (310 * 0.80 + 85 * 4.00) / 1_000_000
    )


def _cost_by_model(client: httpx.Client, model: str) -> dict[str, Any]:
    def entry() -> dict[str, Any] | None:
        agent = client.get("/health").json()["agent"]
        found: dict[str, Any] | None = agent["costByModel"].get(model)
        return {**found, "estimatedCost": agent["estimatedCost"]} if found else None

    answer: dict[str, Any] = wait_until(entry, what=f"{model} in /health.agent.costByModel")
    return answer


def test_the_providers_usage_cost_is_what_health_and_metrics_show(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.cost = 0.0042
    _post_sense(client)
    assert tick(relay, logs) == "ok"

    assert _cost_by_model(client, PRIMARY) == {
        "calls": 1,
        "tokensIn": 310,
        "tokensOut": 85,
        "costUsd": 0.0042,
        "costSource": "provider",
        "unpricedCalls": 0,
        "estimatedCost": 0.0042,
    }
    assert value(scrape(client), "relay_llm_cost_usd_total", model=PRIMARY) == 0.0042


def test_a_model_with_no_price_and_no_usage_cost_has_an_unknown_cost(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = make_relay(relay_settings(fake_llm, model="acme/mystery-1"))
    with client_for(relay) as client:
        _post_sense(client)
        assert tick(relay, logs) == "ok"
        entry = _cost_by_model(client, "acme/mystery-1")
        samples = scrape(client)
    assert entry["costUsd"] is None
    assert entry["costSource"] == "unknown"
    assert entry["unpricedCalls"] == 1
    assert entry["estimatedCost"] == 0
    assert value(samples, "relay_llm_tokens_total", model="acme/mystery-1", direction="in") == 310
    assert value(samples, "relay_llm_cost_usd_total", model="acme/mystery-1") is None


def test_a_user_prices_file_overrides_the_built_in_price(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, tmp_path: Path
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(f'{{"models": {{"{PRIMARY}": {{"input": 10, "output": 20}}}}}}')
    relay = make_relay(replace(relay_settings(fake_llm), prices_file=str(prices)))
    with client_for(relay) as client:
        _post_sense(client)
        assert tick(relay, logs) == "ok"
        entry = _cost_by_model(client, PRIMARY)
    assert entry["costSource"] == "table"
    assert entry["costUsd"] == pytest.approx((310 * 10 + 85 * 20) / 1_000_000)


def test_a_crashed_actor_shows_its_restart(relay: Relay, client: httpx.Client) -> None:
    before = scrape(client)
    assert value(before, "relay_actor_restarts_total", actor="feed") == 0
    relay.handles["feed"].tell(RelayActor.inject_fault, "crash")
    wait_until(lambda: relay.handles["feed"].restarts == 1 and relay.handles["feed"].alive)

    samples = scrape(client)

    assert value(samples, "relay_actor_restarts_total", actor="feed") == 1
    assert value(samples, "relay_actor_up", actor="feed") == 1
    assert value(samples, "relay_actor_restarts_total", actor="sense") == 0
    assert set(relay.handles) <= {
        dict(labels)["actor"] for name, labels in samples if name == "relay_actor_up"
    }


@pytest.mark.slow
def test_a_hung_actor_does_not_hang_the_scrape(relay: Relay, client: httpx.Client) -> None:
    relay.handles["digest"].tell(RelayActor.inject_fault, "hang", 3.0)
    started = time.monotonic()

    samples = scrape(client)

    assert time.monotonic() - started < 2.5  # the actor timeout (1 s), not the hang
    assert value(samples, "relay_scrape_source_up", source="digest") == 0
    assert value(samples, "relay_scrape_source_up", source="ticker") == 1
    assert value(samples, "relay_ticks_total", outcome="called") is None  # left out
    assert value(samples, "relay_actor_restarts_total", actor="digest") == 0  # still there
    assert value(samples, "relay_circuit_state", state="ok") == 1


def test_open_streams_are_counted(client: httpx.Client, relay: Relay) -> None:
    with (
        client_for(relay) as streamer,
        streamer.stream("GET", "/feed/stream") as stream,
    ):
        assert stream.status_code == 200
        samples = wait_until(
            lambda: (s := scrape(client)) and value(s, "relay_stream_clients", stream="feed") and s,
            what="the stream to be counted",
        )
    assert value(samples, "relay_stream_clients", stream="agent") == 0
    assert value(samples, "relay_stream_dropped_total", stream="feed") == 0


def test_metrics_need_the_token_like_every_other_route(
    make_relay: Callable[..., Relay],
) -> None:
    relay = make_relay(replace(relay_settings(), token="s3cret-token"))
    with client_for(relay) as client:
        assert client.get("/metrics").status_code == 401
        samples = scrape(client, headers={"Authorization": "Bearer s3cret-token"})
    assert value(samples, "relay_http_requests_total", method="GET", route="/metrics", status="401")


def test_metrics_use_a_registry_of_their_own(client: httpx.Client) -> None:
    assert scrape(client)
    assert b"relay_" not in generate_latest(REGISTRY)


def test_route_stats_bucket_a_latency_at_its_upper_bound() -> None:
    stats = RouteStats("GET", "/x")
    for seconds in (0.0001, 0.0005, 0.0006, 99.0):
        stats.observe(200, seconds)
    stats.observe(404, 0.0)
    assert stats.statuses == {200: 4, 404: 1}
    assert stats.buckets[0] == 3  # 0.0001, 0.0005 (at most the bound) and 0.0
    assert stats.buckets[1] == 1  # 0.0006
    assert stats.buckets[-1] == 1  # 99 s: +Inf only
    assert sum(stats.buckets) == 5


def test_excluded_posts_move_from_ok_and_redactions_are_listed_by_type() -> None:
    http = HttpStats()
    sense = http.route("POST", "/sense")
    for _ in range(5):
        sense.observe(200, 0.001)
    sense.observe(400, 0.001)
    hubs: Any = SimpleNamespace(
        clients=lambda: {"feed": (2, 1), "agent": (0, 0), "overlay": (3, 4)},
    )
    scrape = Scrape(
        http=http,
        streams=hubs,
        actors={},
        excluded={"sense": 2},
        redactions={"api-key": 3, "card": 0},
        clients=ClientReports(),
    )
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RelayCollector(scrape))

    samples: Samples = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for sample in family.samples:
            samples[sample.name, tuple(sorted(sample.labels.items()))] = sample.value

    assert value(samples, "relay_ingested_total", endpoint="sense", outcome="ok") == 3
    assert value(samples, "relay_ingested_total", endpoint="sense", outcome="excluded") == 2
    assert value(samples, "relay_ingested_total", endpoint="sense", outcome="bad_request") == 1
    assert value(samples, "relay_redactions_total", type="api-key") == 3
    assert value(samples, "relay_redactions_total", type="card") == 0
    assert value(samples, "relay_stream_clients", stream="feed") == 2
    assert value(samples, "relay_stream_dropped_total", stream="feed") == 1
    assert value(samples, "relay_stream_clients", stream="overlay") == 3
    assert value(samples, "relay_stream_dropped_total", stream="overlay") == 4


def test_excluded_screen_events_and_redacted_secrets_are_counted(
    make_relay: Callable[..., Relay],
) -> None:
    relay = make_relay(replace(relay_settings(), exclude_apps=("slack",)))
    with client_for(relay) as client:
        dropped = client.post("/sense", json={**SENSE, "meta": {"app": "Slack"}})
        assert dropped.json() == {"ok": True, "dropped": "excluded"}
        _post_sense(client)
        key = "sk-or-v1-0123456789abcdef0123456789abcdef"
        assert client.post("/feed", json={"text": f"my key is {key}"}).status_code == 200

        samples = wait_until(
            lambda: (
                (s := scrape(client)) and value(s, "relay_redactions_total", type="api-key") and s
            ),
            what="the redaction to be counted",
        )

    assert value(samples, "relay_ingested_total", endpoint="sense", outcome="excluded") == 1
    assert value(samples, "relay_ingested_total", endpoint="sense", outcome="ok") == 1
    assert value(samples, "relay_ingested_total", endpoint="feed", outcome="ok") == 1
    assert value(samples, "relay_redactions_total", type="api-key") == 1
    assert value(samples, "relay_redactions_total", type="card") == 0
