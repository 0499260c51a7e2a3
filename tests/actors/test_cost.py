"""The ``estimatedCost`` of ``/health``."""

from __future__ import annotations

import pytest

from actors.cost import PRICE_IN_PER_TOKEN, PRICE_OUT_PER_TOKEN, estimate_cost


def test_prices_are_gemini_flash_lite_per_token():
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
