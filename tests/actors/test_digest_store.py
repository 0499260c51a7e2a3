"""The digest store's counters: ``estimatedCost`` and ``costByModel`` of ``/health``, kept
across restarts."""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import replace
from typing import Any

import msgspec
import orjson
import pytest

from actors.agent.core.completion import Analysis
from actors.agent.core.counting.cost import estimate_cost
from actors.agent.core.ticks import TickResult
from actors.agent.digest_store import DigestStore
from actors.ingest.feed_buffer import FeedBuffer
from actors.kernel.base import ChildHandle
from actors.kernel.clock import FakeClock
from actors.kernel.storage import StorageInfo
from config.prices import Price
from tests.support.actor_calls import answered_tick

FLASH_LITE = "google/gemini-2.5-flash-lite"


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

    store.record(answered_tick(FLASH_LITE, fallback=True)).get(timeout=5)

    stats = store.stats().get(timeout=5)
    assert stats["totalTokens"] == {"in": 1_001_000, "out": 100_100}
    by_model = msgspec.to_builtins(stats["costByModel"])
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
        "minor_skip": 0,
        "deferred": 0,
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
    ref.proxy().record(answered_tick("x/provider", cost=0.25)).get(timeout=5)
    ref.proxy().record(answered_tick("x/priced")).get(timeout=5)
    ref.proxy().record(answered_tick("x/unpriced")).get(timeout=5)
    before = ref.proxy().stats().get(timeout=5)
    ref.stop(timeout=5)

    again = start().proxy()
    after = again.stats().get(timeout=5)

    assert after == before
    by_model = msgspec.to_builtins(after["costByModel"])
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


def _answered(tick_id: int, hud: str) -> TickResult:
    return replace(
        answered_tick("local"),
        tick_id=tick_id,
        analysis=Analysis(hud=hud, digest="d", parsed_ok=True),
        push_to_feed=True,
    )


def test_a_hud_written_ahead_is_pushed_at_once_and_not_again_with_its_answer(
    clock: FakeClock, storage: StorageInfo
):
    feed_ref = FeedBuffer.start(clock=clock, store=storage.stores["feed"])
    feed = ChildHandle[FeedBuffer]("feed")
    feed.bind(feed_ref)
    try:
        store = DigestStore.start(clock=clock, store=storage.stores["agent"], feed=feed).proxy()
        store.hud_ahead(7, "Editing app.py in VS Code").get(timeout=5)
        shown = feed_ref.proxy().items_after(0).get(timeout=5)
        assert [item.text for item in shown] == ["[🧠] Editing app.py in VS Code"]  # no answer yet

        entry = store.record(_answered(7, "Editing app.py in VS Code")).get(timeout=5)
        assert entry.pushed  # ahead of its digest, still its tick's push
        entry = store.record(_answered(8, "Reading the failing test")).get(timeout=5)
        assert entry.pushed
        shown = feed_ref.proxy().items_after(0).get(timeout=5)
        assert [item.text for item in shown] == [
            "[🧠] Editing app.py in VS Code",
            "[🧠] Reading the failing test",
        ]
    finally:
        feed_ref.stop(timeout=5)
