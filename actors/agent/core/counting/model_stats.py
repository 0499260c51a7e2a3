"""Per-model LLM counters: requests, latency buckets, tokens and cost.

The digest store owns one :class:`ModelStats` per model and persists them with its other
counters (one JSON row, written with ``dataclasses.asdict``), so
``/health.agent.costByModel`` and the ``relay_llm_*`` metrics survive restarts. Plain data
and pure functions; the store is the only writer.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from actors.agent.core.counting.cost import CostSource
from actors.common.latency import empty_buckets, latency_bucket
from actors.core import shapes


@dataclass(slots=True)
class ModelStats:
    """The counters of one model."""

    calls: int = 0
    """Requests it answered (one per successful tick it served)."""
    errors: int = 0
    """Requests that failed (timeouts, HTTP errors, bad bodies; retries count each)."""
    refused: int = 0
    """Requests refused for what they asked (a response format, images), each asked again at
    once without it: no failure, but requests all the same."""
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    """The sum of the known costs of its calls."""
    provider_priced: int = 0
    """Calls whose cost the provider reported."""
    table_priced: int = 0
    """Calls priced from the price table."""
    latency_buckets: list[int] = field(default_factory=empty_buckets)
    """Requests per latency bucket (not cumulative): index ``i`` counts latencies above
    ``LATENCY_BUCKETS_S[i - 1]`` and at most ``LATENCY_BUCKETS_S[i]``; the last is ``+Inf``."""
    latency_sum_s: float = 0.0

    def observe(self, seconds: float, *, ok: bool, refused: bool = False) -> None:
        """Count one request's latency; a refused one also counts as refused, another failed
        one as an error."""
        self.latency_buckets[latency_bucket(seconds)] += 1
        self.latency_sum_s += seconds
        if refused:
            self.refused += 1
        elif not ok:
            self.errors += 1

    def answered(
        self, tokens_in: int, tokens_out: int, cost: float | None, source: CostSource
    ) -> None:
        """Count one answered call, its tokens and what it cost."""
        self.calls += 1
        self.tokens_in += tokens_in
        self.tokens_out += tokens_out
        if cost is not None:
            self.cost_usd += cost
        if source == "provider":
            self.provider_priced += 1
        elif source == "table":
            self.table_priced += 1

    @property
    def cost_known(self) -> bool:
        """Whether at least one call has a known cost."""
        return self.provider_priced + self.table_priced > 0

    @property
    def cost_source(self) -> shapes.CostOrigin:
        """``provider`` or ``table`` when every call was priced that way, ``unknown`` when
        none was, ``mixed`` otherwise (``costUsd`` then covers the priced calls only)."""
        if not self.cost_known:
            return "unknown"
        if self.provider_priced == self.calls:
            return "provider"
        return "table" if self.table_priced == self.calls else "mixed"

    def to_health(self) -> shapes.ModelCost:
        """The model's entry in ``/health.agent.costByModel``."""
        return shapes.ModelCost(
            calls=self.calls,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            cost_usd=round(self.cost_usd, 6) if self.cost_known else None,
            cost_source=self.cost_source,
            unpriced_calls=self.calls - self.provider_priced - self.table_priced,
        )

    def copy(self) -> ModelStats:
        """An independent copy (what a reader on another thread may keep)."""
        return replace(self, latency_buckets=list(self.latency_buckets))

    @classmethod
    def from_json(cls, data: Any) -> ModelStats:
        """Rebuild from the persisted row; unknown keys are ignored, and latency buckets
        stored with other bounds (a different length) start again from zero."""
        stats = cls()
        if not isinstance(data, dict):
            return stats
        for name in _WHOLE_FIELDS:
            setattr(stats, name, _whole(data.get(name)))
        stats.cost_usd = _number(data.get("cost_usd"))
        buckets = data.get("latency_buckets")
        if isinstance(buckets, list) and len(buckets) == len(stats.latency_buckets):
            stats.latency_buckets = [_whole(n) for n in buckets]
            stats.latency_sum_s = _number(data.get("latency_sum_s"))
        return stats


_WHOLE_FIELDS = (
    "calls",
    "errors",
    "refused",
    "tokens_in",
    "tokens_out",
    "provider_priced",
    "table_priced",
)


def _whole(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return 0.0
    return float(value)


def models_from_json(data: Any) -> dict[str, ModelStats]:
    """The ``models`` of a persisted counters row (absent in rows written before them)."""
    if not isinstance(data, dict):
        return {}
    return {str(model): ModelStats.from_json(stats) for model, stats in data.items()}
