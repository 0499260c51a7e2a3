"""What an LLM call costs: the flat estimate, the provider's figure, the price table's."""

from __future__ import annotations

import orjson
import pytest

from actors.agent.core.completion import parse_chat_completion
from actors.agent.core.counting.cost import (
    PRICE_IN_PER_TOKEN,
    PRICE_OUT_PER_TOKEN,
    call_cost,
    estimate_cost,
)
from config.prices import Price, load_prices


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
