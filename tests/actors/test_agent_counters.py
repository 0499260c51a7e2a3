"""The agent's counters as /health shows them: the latest failure with its time until an
answer clears it, and a call priced as the model that answered."""

from __future__ import annotations

from dataclasses import replace

from actors.agent.core.counting.counters import AgentCounters
from actors.agent.core.events import TickFailed
from config.agent.settings import DEFAULT_MODEL
from config.prices import load_prices
from tests.support.actor_calls import answered_tick


def test_the_latest_failure_carries_its_time_and_an_answer_clears_it() -> None:
    counters = AgentCounters()
    counters.count(TickFailed("LLMTimeout: no answer within 15000 ms", ()), 1_000)
    assert (counters.last_error, counters.last_error_at) == (
        "LLMTimeout: no answer within 15000 ms",
        1_000,
    )
    counters.answered(answered_tick("m/a"), 2_000, {})
    assert counters.last_error is None and counters.last_error_at is None
    assert counters.failures == 1  # counted all the same
    restored = AgentCounters.from_json(counters.to_json())
    assert restored.last_error_at is None and restored.failures == 1


def test_a_stand_in_answering_for_a_priced_name_is_not_priced_at_its_rate() -> None:
    prices = load_prices()
    assert DEFAULT_MODEL in prices
    counters = AgentCounters()
    stand_in = replace(answered_tick(DEFAULT_MODEL), answered_model="stand-in/heuristic")
    counters.answered(stand_in, 1_000, prices)
    dated = replace(answered_tick(DEFAULT_MODEL), answered_model=DEFAULT_MODEL + "-2025-06-17")
    counters.answered(dated, 2_000, prices)
    model = counters.models[DEFAULT_MODEL]
    assert model.calls == 2 and model.table_priced == 1  # the stand-in's call: unknown
    assert model.cost_source == "mixed" and model.cost_usd > 0  # the dated one: the name's
