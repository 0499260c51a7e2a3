"""The agent's counters as ``/health.agent`` shows them.

Made from what the digest store keeps (its counters, its newest entries and the escalation
slot's counts), so that the health section reads one plain dict and the store only banks
its counts before it asks. Plain data and pure functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from actors.agent.core.counting.counters import AgentCounters
from actors.agent.core.entries import AgentRecord
from actors.core.error_text import safe_text

DIGEST_PREVIEW_CHARS = 200
"""``/health.agent.lastDigest`` shows this much of the latest digest."""


def median(values: list[int]) -> int | None:
    """The median, rounded; ``None`` of nothing. (``statistics`` would import ``decimal`` and
    ``fractions``: a megabyte resident for one median.)"""
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return round((ordered[middle - 1] + ordered[middle]) / 2)


def health_stats(
    c: AgentCounters, entries: Sequence[AgentRecord], escalation: dict[str, object]
) -> dict[str, Any]:
    """The counters ``/health.agent`` shows, from ``c``, the newest ``entries`` (oldest
    first) and the escalation slot's counts as its section shows them.

    ``contextFreshnessMedianMs`` is the median over ``entries``; ``parseSuccessRate`` counts
    every answer since the counters began.
    """
    latest = entries[-1] if entries else None
    freshness = [e.context_freshness_ms for e in entries if e.context_freshness_ms is not None]
    return {
        "lastAnalysis": c.last_analysis_ts,
        "lastDigest": latest.digest[:DIGEST_PREVIEW_CHARS] if latest else None,
        "totalCalls": c.total_calls,
        "totalTokens": {"in": c.tokens_in, "out": c.tokens_out},
        "estimatedCost": c.estimated_cost(),
        "costByModel": {
            model: stats.to_health() for model, stats in c.models.items() if stats.calls
        },
        "fallbacks": c.fallbacks,
        "idleSkips": c.idle_skips,
        "emptySkips": c.empty_skips,
        "unchangedSkips": c.unchanged_skips,
        "minorSkips": c.minor_skips,
        "deferredTicks": c.deferred,
        "busySkips": c.busy_skips,
        "circuitSkips": c.circuit_skips,
        "failures": c.failures,
        "lastError": safe_text(c.last_error) if c.last_error else None,
        "lastErrorAt": c.last_error_at,
        "parseFailures": c.parse_failures,
        "parseSuccessRate": c.parse_success_rate(),
        "contextFreshnessMedianMs": median(freshness),
        "hudsWithheld": dict(c.huds_withheld),
        "modelRedactions": dict(c.model_redactions),
        "situationWriteFailures": c.situation_write_failures,
        "escalation": escalation,
        "vision": {"imagesSent": c.images_sent, "imagesRefused": dict(c.images_refused)},
        "costByHour": c.by_hour(),
    }
