"""What an LLM call cost: the provider's figure, else the price table's, else unknown.

``/health.agent.estimatedCost`` is the sum of the known costs of every model;
``/health.agent.costByModel`` says, per model, where its figure came from.
"""

from __future__ import annotations

from typing import Literal

from config.prices import PriceTable

CostSource = Literal["provider", "table", "unknown"]
"""``provider``: the answer carried its cost (OpenRouter's ``usage.cost``); ``table``: the
tokens priced with ``config/prices.json`` or ``RELAY_PRICES``; ``unknown``: neither."""

PRICE_IN_PER_TOKEN = 0.075 / 1_000_000
"""USD per prompt token that relays before the price table assumed for every call."""
PRICE_OUT_PER_TOKEN = 0.30 / 1_000_000
"""USD per completion token, likewise."""


def call_cost(
    model: str,
    tokens_in: int,
    tokens_out: int,
    provider_cost: float | None,
    prices: PriceTable,
) -> tuple[float | None, CostSource]:
    """The USD cost of one call and where it comes from; ``None`` when it is not known.

    The provider's figure wins: it knows discounts, caching and its current prices. Without
    it the tokens are priced from ``prices``; a model missing there has no cost, rather than
    a made-up one.
    """
    if provider_cost is not None:
        return provider_cost, "provider"
    price = prices.get(model)
    if price is None:
        return None, "unknown"
    return price.cost(tokens_in, tokens_out), "table"


def priced_model(asked: str, answered: str | None, prices: PriceTable) -> str:
    """The name a call is priced as: the model the server says answered when the table knows
    it, the name asked when the answer names a version of it (``gpt-4o-mini-2024-07-18`` for
    ``gpt-4o-mini``), else the answering model, whose price is then unknown: a stand-in or a
    router's other model answering for a known name is never priced at that name's rate.

    >>> table = {"m/a": None}
    >>> [priced_model("m/a", a, table) for a in (None, "m/a-2025-01", "stand-in/x")]
    ['m/a', 'm/a', 'stand-in/x']
    """
    if not answered or answered == asked or answered in prices:
        return answered or asked
    return asked if answered.startswith(asked) else answered


def estimate_cost(tokens_in: int, tokens_out: int) -> float:
    """USD for token counts at the flat price relays used before the price table, rounded to
    six decimals: what tokens counted before per-model counts existed are still valued at."""
    return round(tokens_in * PRICE_IN_PER_TOKEN + tokens_out * PRICE_OUT_PER_TOKEN, 6)
