"""The per-model counters: calls, tokens, cost and where it came from, latency buckets."""

from __future__ import annotations

import msgspec
import pytest

from actors.agent.core.counting.model_stats import ModelStats, models_from_json
from actors.common.latency import LATENCY_BUCKETS_S


def test_model_stats_say_where_their_cost_came_from():
    stats = ModelStats()
    stats.answered(100, 10, None, "unknown")
    assert stats.to_health().cost_usd is None
    assert stats.to_health().cost_source == "unknown"
    stats.answered(100, 10, 0.002, "provider")
    assert msgspec.to_builtins(stats.to_health()) == {
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
