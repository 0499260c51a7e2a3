"""What LLM calls cost: ``estimatedCost`` and ``costByModel`` of ``/health``, the price table."""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pykka
import pytest

import run
from actors.core.completion import Analysis, parse_chat_completion
from actors.core.cost import PRICE_IN_PER_TOKEN, PRICE_OUT_PER_TOKEN, call_cost, estimate_cost
from actors.core.model_stats import LATENCY_BUCKETS_S, ModelStats, models_from_json
from actors.core.ticks import LLMAttempt, TickResult
from actors.core.window import build_context_window
from actors.digest_store import DigestStore
from actors.kernel.base import ChildHandle
from actors.kernel.clock import FakeClock
from actors.kernel.storage import StorageInfo
from config.prices import BUILT_IN, Price, load_prices
from config.settings import ConfigError
from tests.conftest import relay_settings


def test_the_flat_estimate_of_older_relays_is_gemini_flash_lite_per_token():
    assert pytest.approx(0.075e-6) == PRICE_IN_PER_TOKEN
    assert pytest.approx(0.30e-6) == PRICE_OUT_PER_TOKEN


def test_zero_tokens_cost_nothing():
    assert estimate_cost(0, 0) == 0.0


def test_a_million_prompt_tokens_cost_the_input_price():
    assert estimate_cost(1_000_000, 0) == 0.075


def test_a_million_completion_tokens_cost_the_output_price():
    assert estimate_cost(0, 1_000_000) == 0.3


def test_input_and_output_costs_add_up():
    assert estimate_cost(12_600, 3_400) == 0.001965


def test_a_typical_call_costs_about_fifty_millionths():
    assert estimate_cost(350, 90) == 0.000053


def test_cost_is_rounded_to_six_decimals():
    # 7 * 0.075e-6 = 5.25e-7, which rounds up to one millionth
    assert estimate_cost(7, 0) == 0.000001


def test_a_single_token_rounds_to_zero():
    assert estimate_cost(1, 1) == 0.0


def test_cost_result_has_at_most_six_decimals():
    # 0.009259275 + 0.0296295 = 0.038888775
    assert estimate_cost(123_457, 98_765) == 0.038889


# -- per-model cost: the provider's figure, the price table, or unknown ---------------------

FLASH_LITE = "google/gemini-2.5-flash-lite"


def test_the_providers_cost_wins_over_the_table():
    prices = {FLASH_LITE: Price(input=0.10, output=0.40)}
    assert call_cost(FLASH_LITE, 1000, 100, 0.0042, prices) == (0.0042, "provider")


def test_without_a_provider_cost_the_table_prices_the_tokens():
    prices = {FLASH_LITE: Price(input=0.10, output=0.40)}
    cost, source = call_cost(FLASH_LITE, 1_000_000, 500_000, None, prices)
    assert source == "table"
    assert cost == pytest.approx(0.30)


def test_a_model_in_neither_has_an_unknown_cost_not_a_made_up_one():
    assert call_cost("acme/mystery-1", 1000, 100, None, load_prices()) == (None, "unknown")


def test_the_built_in_table_prices_the_default_model_and_a_few_common_ones():
    table = load_prices()
    assert table[FLASH_LITE] == Price(input=0.10, output=0.40)
    assert table["google/gemini-2.0-flash-lite-001"] == Price(input=0.075, output=0.30)
    assert {"openai/gpt-4o-mini", "anthropic/claude-3.5-haiku"} <= set(table)
    assert BUILT_IN.name == "prices.json" and BUILT_IN.parent.name == "config"


def test_a_user_file_extends_the_table_and_overrides_its_entries(tmp_path: Path):
    user = tmp_path / "prices.json"
    user.write_text(
        '{"models": {"google/gemini-2.5-flash-lite": {"input": 1, "output": 2},'
        ' "local/llama3": {"input": 0, "output": 0}}}'
    )
    table = load_prices(str(user))
    assert table[FLASH_LITE] == Price(input=1.0, output=2.0)
    assert table["local/llama3"] == Price(input=0.0, output=0.0)
    assert table["openai/gpt-4o-mini"] == load_prices()["openai/gpt-4o-mini"]  # kept
    assert call_cost("local/llama3", 5000, 500, None, table) == (0.0, "table")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ("[]", 'a "models" object'),
        ('{"google/gemini-2.5-flash-lite": {"input": 1, "output": 2}}', 'a "models" object'),
        ('{"models": {"m": {"input": 1}}}', '{"input": <USD per million>'),
        ('{"models": {"m": {"input": 1, "output": 2, "cached": 0.5}}}', "must be"),
        ('{"models": {"m": {"inptu": 1, "output": 2}}}', "must be"),
        ('{"models": {"m": {"input": -1, "output": 2}}}', "m.input must be a number of 0"),
        ('{"models": {"m": {"input": "0.1", "output": 2}}}', "m.input must be a number"),
        ('{"models": {"m": {"input": true, "output": 2}}}', "m.input must be a number"),
        ('{"models": {"m": [0.1, 0.4]}}', "must be"),
        ('{"models": {" ": {"input": 1, "output": 2}}}', "model names must be non-empty"),
    ],
)
def test_a_bad_prices_file_is_refused_with_what_is_wrong(tmp_path: Path, content, fragment):
    user = tmp_path / "prices.json"
    user.write_text(content)
    with pytest.raises(ConfigError, match="RELAY_PRICES") as caught:
        load_prices(str(user))
    assert fragment in str(caught.value)


def test_a_missing_prices_file_is_refused(tmp_path: Path):
    with pytest.raises(ConfigError, match="RELAY_PRICES: cannot read"):
        load_prices(str(tmp_path / "nowhere.json"))


def test_a_bad_prices_file_stops_start_up_with_exit_code_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    user = tmp_path / "prices.json"
    user.write_text('{"models": {"m": {"input": -1, "output": 2}}}')
    monkeypatch.setenv("RELAY_PRICES", str(user))
    monkeypatch.setenv("RELAY_PORT", "1")  # never bound: the check comes first
    with pytest.raises(SystemExit) as exited:
        run.main([])
    assert exited.value.code == 2
    assert "m.input must be a number of 0 or more" in capsys.readouterr().err
    assert not pykka.ActorRegistry.get_all()


def test_start_relay_refuses_a_bad_prices_file(make_relay, tmp_path: Path):
    user = tmp_path / "prices.json"
    user.write_text("{}")
    with pytest.raises(ConfigError, match='"models"'):
        make_relay(replace(relay_settings(), prices_file=str(user)))


@pytest.mark.parametrize(
    ("usage", "cost"),
    [
        ({"prompt_tokens": 3, "completion_tokens": 1, "cost": 0.00012}, 0.00012),
        ({"cost": 0}, 0.0),
        ({"cost": 2}, 2.0),
        ({"prompt_tokens": 3}, None),
        ({"cost": "0.1"}, None),
        ({"cost": True}, None),
        ({"cost": -0.5}, None),
        ({"cost": None}, None),
        (None, None),
    ],
)
def test_the_completion_reads_the_providers_usage_cost(usage, cost):
    body = {"choices": [{"message": {"content": "hi"}}], "usage": usage}
    assert parse_chat_completion(orjson.dumps(body)).cost_usd == cost


# -- the digest store's per-model counters --------------------------------------------------


def test_model_stats_say_where_their_cost_came_from():
    stats = ModelStats()
    stats.answered(100, 10, None, "unknown")
    assert stats.to_health()["costUsd"] is None
    assert stats.to_health()["costSource"] == "unknown"
    stats.answered(100, 10, 0.002, "provider")
    assert stats.to_health() == {
        "calls": 2,
        "tokensIn": 200,
        "tokensOut": 20,
        "costUsd": 0.002,
        "costSource": "mixed",
        "unpricedCalls": 1,
    }
    table = ModelStats()
    table.answered(1, 1, 0.5, "table")
    assert table.cost_source == "table"


def test_latency_buckets_count_each_request_once_at_its_upper_bound():
    stats = ModelStats()
    for seconds in (0.05, 0.1, 0.3, 59.0, 600.0):
        stats.observe(seconds, ok=True)
    stats.observe(1.5, ok=False)
    bounds = dict(zip((*LATENCY_BUCKETS_S, "inf"), stats.latency_buckets, strict=True))
    assert bounds[0.1] == 2  # 0.05 and 0.1 (a bound is "at most")
    assert (bounds[0.5], bounds[2.0], bounds[60.0], bounds["inf"]) == (1, 1, 1, 1)
    assert stats.errors == 1
    assert stats.latency_sum_s == pytest.approx(660.95)


def test_persisted_model_stats_load_leniently():
    assert models_from_json(None) == {}
    stats = models_from_json(
        {"m": {"calls": 2, "cost_usd": 0.5, "latency_buckets": [1, 2], "bogus": 1, "errors": -3}}
    )["m"]
    assert (stats.calls, stats.cost_usd, stats.errors) == (2, 0.5, 0)
    assert stats.latency_buckets == [0] * (len(LATENCY_BUCKETS_S) + 1)  # other bounds: reset


def _result(model: str, *, cost: float | None = None, fallback: bool = False) -> TickResult:
    return TickResult(
        tick_id=1,
        analysis=Analysis(hud="h", digest="d", parsed_ok=True),
        window=build_context_window([], [], now_ms=0, max_age_ms=1),
        model=model,
        latency_ms=1,
        tokens_in=1_000,
        tokens_out=100,
        push_to_feed=False,
        cost_usd=cost,
        fallback=fallback,
        attempts=(LLMAttempt("first", 2.0, ok=False), LLMAttempt(model, 0.4, ok=True)),
    )


def test_counters_of_an_older_relay_load_and_keep_their_cost_estimate(
    clock: FakeClock, storage: StorageInfo
):
    older = {"total_calls": 3, "tokens_in": 1_000_000, "tokens_out": 100_000, "failures": 1}
    with contextlib.closing(sqlite3.connect(storage.stores["agent"].path)) as db:
        db.execute(
            "INSERT INTO agent_state (key, value) VALUES ('counters', ?)", (orjson.dumps(older),)
        )
        db.commit()
    store = DigestStore.start(
        clock=clock, store=storage.stores["agent"], feed=ChildHandle("feed")
    ).proxy()
    stats = store.stats().get(timeout=5)
    assert (stats["totalCalls"], stats["failures"], stats["fallbacks"]) == (3, 1, 0)
    assert stats["costByModel"] == {}
    assert stats["estimatedCost"] == estimate_cost(1_000_000, 100_000) == 0.105

    store.record(_result(FLASH_LITE, fallback=True)).get(timeout=5)

    stats = store.stats().get(timeout=5)
    assert stats["totalTokens"] == {"in": 1_001_000, "out": 100_100}
    by_model = stats["costByModel"]
    assert list(by_model) == [FLASH_LITE]  # "first" only failed: it cost nothing
    assert by_model[FLASH_LITE]["costUsd"] == pytest.approx(0.00014)  # 1000 x 0.10 + 100 x 0.40
    assert stats["estimatedCost"] == pytest.approx(0.105 + 0.00014)
    assert stats["fallbacks"] == 1
    metrics = store.metrics().get(timeout=5)
    assert metrics.ticks == {
        "called": 4,
        "idle": 0,
        "empty": 0,
        "fingerprint_skip": 0,
        "failed": 1,
    }
    assert (metrics.models["first"].errors, metrics.models["first"].calls) == (1, 0)
    assert metrics.models[FLASH_LITE].latency_sum_s == pytest.approx(0.4)


def test_per_model_counters_survive_a_restart_of_the_store(clock: FakeClock, storage: StorageInfo):
    def start() -> Any:
        return DigestStore.start(
            clock=clock,
            store=storage.stores["agent"],
            feed=ChildHandle("feed"),
            prices={"x/priced": Price(input=1.0, output=1.0)},
        )

    ref = start()
    ref.proxy().record(_result("x/provider", cost=0.25)).get(timeout=5)
    ref.proxy().record(_result("x/priced")).get(timeout=5)
    ref.proxy().record(_result("x/unpriced")).get(timeout=5)
    before = ref.proxy().stats().get(timeout=5)
    ref.stop(timeout=5)

    again = start().proxy()
    after = again.stats().get(timeout=5)

    assert after == before
    by_model = after["costByModel"]
    assert by_model["x/provider"]["costUsd"] == 0.25
    assert by_model["x/provider"]["costSource"] == "provider"
    assert by_model["x/priced"]["costUsd"] == pytest.approx(0.0011)
    assert by_model["x/priced"]["costSource"] == "table"
    assert by_model["x/unpriced"] == {
        "calls": 1,
        "tokensIn": 1000,
        "tokensOut": 100,
        "costUsd": None,
        "costSource": "unknown",
        "unpricedCalls": 1,
    }
    assert after["estimatedCost"] == pytest.approx(0.2511)
    buckets = again.metrics().get(timeout=5).models["first"].latency_buckets
    assert sum(buckets) == 3  # three failed requests, kept across the restart
