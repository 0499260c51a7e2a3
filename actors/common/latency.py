"""The latency buckets of the relay's outside calls: the LLM's requests and the speech
service's share one set of bounds, so their histograms compare bucket for bucket."""

from __future__ import annotations

import bisect

LATENCY_BUCKETS_S = (0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0, 30.0, 60.0)
"""Upper bounds of the latency histograms of the LLM's and the speech service's requests, in
seconds (``+Inf`` follows)."""


def latency_bucket(seconds: float) -> int:
    """The index of the :data:`LATENCY_BUCKETS_S` bucket that counts ``seconds``: the first
    bound at least ``seconds``, or the last index (``+Inf``)."""
    return bisect.bisect_left(LATENCY_BUCKETS_S, seconds)


def empty_buckets() -> list[int]:
    """No request yet in any bucket (``+Inf`` last), a list to count into."""
    return [0] * (len(LATENCY_BUCKETS_S) + 1)


def empty_latency_buckets() -> tuple[int, ...]:
    """No request yet in any bucket, as a frozen value."""
    return tuple(empty_buckets())
