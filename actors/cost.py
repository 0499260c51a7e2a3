"""Cost estimate from token counts (the v2 spec's ``estimatedCost``)."""

from __future__ import annotations

PRICE_IN_PER_TOKEN = 0.075 / 1_000_000
"""USD per prompt token (google/gemini-2.5-flash-lite on OpenRouter)."""
PRICE_OUT_PER_TOKEN = 0.30 / 1_000_000
"""USD per completion token."""


def estimate_cost(tokens_in: int, tokens_out: int) -> float:
    """USD for the given token counts, rounded to six decimals as ``/health`` shows it."""
    return round(tokens_in * PRICE_IN_PER_TOKEN + tokens_out * PRICE_OUT_PER_TOKEN, 6)
