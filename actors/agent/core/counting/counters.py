"""The agent's counters: tick outcomes, tokens, failures and per-model figures.

The digest store owns one :class:`AgentCounters` and persists it as one JSON row of agent.db
after each change, so ``/health.agent`` and ``/metrics`` show the same figures across
restarts. It counts what each successful tick answered (:meth:`AgentCounters.answered`) and
the events the agent's other actors report (:meth:`AgentCounters.count`,
:mod:`actors.agent.core.events`). Plain data and pure functions; the store is the only writer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import orjson

from actors.agent.core.counting.cost import call_cost, estimate_cost, priced_model
from actors.agent.core.counting.model_stats import ModelStats, models_from_json
from actors.agent.core.events import (
    AgentEvent,
    ImageRefused,
    SituationWriteFailed,
    TickFailed,
    TickNotStarted,
    TickSkipped,
)
from actors.agent.core.ticks import LLMAttempt, TickResult
from actors.escalation.slot import EscalationCounts
from config.prices import PriceTable

HOUR_MS = 3_600_000
HOURS_KEPT = 24
"""Hours of calls, tokens and cost kept per model for the console's chart."""


@dataclass(slots=True)
class AgentCounters:
    """The agent's counters; persisted as one JSON row."""

    total_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    last_analysis_ts: int | None = None
    idle_skips: int = 0
    empty_skips: int = 0
    unchanged_skips: int = 0
    minor_skips: int = 0
    deferred: int = 0
    busy_skips: int = 0
    """Ticks not started because one was in flight."""
    circuit_skips: int = 0
    """Ticks not started because the circuit breaker was cooling off."""
    failures: int = 0
    last_error: str | None = None
    """The latest failure since the last answer; an answer clears it."""
    last_error_at: int | None = None
    """When it happened (the clock's epoch milliseconds)."""
    parse_failures: int = 0
    last_pushed_hud: str = ""
    fallbacks: int = 0
    """Ticks answered by a model other than the first."""
    situation_write_failures: int = 0
    """SITUATION.md writes that failed (see :mod:`actors.agent.situation_writer`)."""
    models: dict[str, ModelStats] = field(default_factory=dict)
    """Per-model requests, latencies, tokens and cost (absent from rows of older relays)."""
    huds_withheld: dict[str, int] = field(default_factory=dict)
    """Answers whose hud was no line a user can read, by reason
    (:mod:`actors.agent.core.hud_check`)."""
    images_sent: int = 0
    """Screen images sent with calls that answered."""
    images_refused: dict[str, int] = field(default_factory=dict)
    """Screen images never sent, by reason
    (:data:`~actors.core.screen_image.RefusalReason`)."""
    model_redactions: dict[str, int] = field(default_factory=dict)
    """Secrets taken out of the model's huds and digests, by kind
    (:mod:`actors.agent.core.answer_redaction`); the buffers count what clients sent."""
    hours: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    """The last :data:`HOURS_KEPT` hours' answered calls: per hour (its start, epoch ms, as a
    string: a JSON key) and model, ``[calls, tokens in, tokens out, known cost in USD]``."""

    @classmethod
    def from_json(cls, row: bytes | str) -> AgentCounters:
        """The counters a stored row holds; fields an older relay did not store start at 0."""
        known = set(cls.__dataclass_fields__) - {"models"}
        saved: dict[str, Any] = orjson.loads(row)
        return cls(
            **{k: v for k, v in saved.items() if k in known},
            models=models_from_json(saved.get("models")),
        )

    def to_json(self) -> bytes:
        """The row that stores them."""
        return orjson.dumps(asdict(self))

    def _model(self, model: str) -> ModelStats:
        stats = self.models.get(model)
        if stats is None:
            stats = self.models[model] = ModelStats()
        return stats

    def _observe(self, attempts: tuple[LLMAttempt, ...]) -> None:
        for attempt in attempts:
            self._model(attempt.model).observe(
                attempt.seconds, ok=attempt.ok, refused=attempt.refused
            )

    def answered(self, result: TickResult, ts: int, prices: PriceTable) -> None:
        """Count a successful tick stored at ``ts``: its tokens, its requests per model, what
        its answer cost, whether its answer parsed and its hud was withheld, the secrets taken out
        of its answer."""
        self.total_calls += 1
        self.tokens_in += result.tokens_in
        self.tokens_out += result.tokens_out
        self.last_analysis_ts = ts
        self.last_error = self.last_error_at = None  # the path works again
        if not result.analysis.parsed_ok:
            self.parse_failures += 1
        if result.hud_withheld is not None:
            withheld = self.huds_withheld
            withheld[result.hud_withheld] = withheld.get(result.hud_withheld, 0) + 1
        self._observe(result.attempts)
        priced = priced_model(result.model, result.answered_model, prices)
        cost, source = call_cost(
            priced, result.tokens_in, result.tokens_out, result.cost_usd, prices
        )
        self._model(result.model).answered(result.tokens_in, result.tokens_out, cost, source)
        self._hourly(ts, result, cost)
        if result.fallback:
            self.fallbacks += 1
        self.images_sent += result.images
        for kind, n in result.redacted.items():
            self.model_redactions[kind] = self.model_redactions.get(kind, 0) + n

    def _hourly(self, ts: int, result: TickResult, cost: float | None) -> None:
        hour = ts - ts % HOUR_MS
        by_model = self.hours.setdefault(str(hour), {})
        figures = by_model.setdefault(result.model, [0, 0, 0, 0.0])
        figures[0] += 1
        figures[1] += result.tokens_in
        figures[2] += result.tokens_out
        figures[3] = round(figures[3] + (cost or 0.0), 6)
        for old in [key for key in self.hours if int(key) <= hour - HOURS_KEPT * HOUR_MS]:
            del self.hours[old]

    def by_hour(self) -> list[dict[str, Any]]:
        """``/health.agent.costByHour``: the kept hours, oldest first, each with its calls,
        tokens and known cost per model."""
        return [
            {"hour": int(hour), "models": {model: _figures(f) for model, f in models.items()}}
            for hour, models in sorted(self.hours.items(), key=lambda item: int(item[0]))
        ]

    def count(self, event: AgentEvent, at: int) -> None:
        """Count what another actor reported at ``at`` (epoch ms); a failed tick changes
        nothing but its counters. (A quiet spell is not counted here: its idle skips grow with
        the clock.)"""
        match event:
            case TickSkipped(reason="idle"):
                self.idle_skips += 1
            case TickSkipped(reason="empty"):
                self.empty_skips += 1
            case TickSkipped(reason="unchanged"):
                self.unchanged_skips += 1
            case TickSkipped(reason="minor"):
                self.minor_skips += 1
            case TickSkipped(reason="deferred"):
                self.deferred += 1
            case TickNotStarted(reason="busy"):
                self.busy_skips += 1
            case TickNotStarted(reason="circuit_open"):
                self.circuit_skips += 1
            case TickFailed(error=error, attempts=attempts):
                self.failures += 1
                self.last_error, self.last_error_at = error, at
                self._observe(attempts)
            case SituationWriteFailed():
                self.situation_write_failures += 1
            case ImageRefused(reason=reason):
                self.images_refused[reason] = self.images_refused.get(reason, 0) + 1

    def parse_success_rate(self) -> float | None:
        """The share of answers that parsed, since the counters began (``None``: no answer)."""
        if not self.total_calls:
            return None
        return round((self.total_calls - self.parse_failures) / self.total_calls, 4)

    def estimated_cost(self) -> float:
        """The known costs of every model, in USD. Tokens counted before per-model counts
        existed (counters of an older relay) keep the flat estimate that relay showed."""
        known = sum(stats.cost_usd for stats in self.models.values())
        older_in = self.tokens_in - sum(stats.tokens_in for stats in self.models.values())
        older_out = self.tokens_out - sum(stats.tokens_out for stats in self.models.values())
        return round(known + estimate_cost(max(older_in, 0), max(older_out, 0)), 6)

    def metrics(self) -> AgentMetrics:
        """A copy for one ``GET /metrics`` scrape."""
        return AgentMetrics(
            ticks={
                "called": self.total_calls,
                "idle": self.idle_skips,
                "empty": self.empty_skips,
                "fingerprint_skip": self.unchanged_skips,
                "minor_skip": self.minor_skips,
                "deferred": self.deferred,
                "failed": self.failures,
            },
            fallbacks=self.fallbacks,
            models={model: stats.copy() for model, stats in self.models.items()},
            situation_write_failures=self.situation_write_failures,
            huds_withheld=dict(self.huds_withheld),
            not_started={"busy": self.busy_skips, "circuit_open": self.circuit_skips},
            images_sent=self.images_sent,
            images_refused=dict(self.images_refused),
            model_redactions=dict(self.model_redactions),
        )


def _figures(kept: list[float]) -> dict[str, float]:
    calls, tokens_in, tokens_out, cost = kept
    return {"calls": calls, "tokensIn": tokens_in, "tokensOut": tokens_out, "costUsd": cost}


@dataclass(frozen=True, slots=True)
class AgentMetrics:
    """A copy of the digest store's counters for one scrape (the store keeps no reference)."""

    ticks: dict[str, int]
    """Ticks by outcome, as ``relay_ticks_total`` labels them."""
    fallbacks: int
    models: dict[str, ModelStats]
    situation_write_failures: int = 0
    """SITUATION.md writes that failed."""
    huds_withheld: dict[str, int] = field(default_factory=dict)
    """Answers whose hud was not pushed, by reason."""
    not_started: dict[str, int] = field(default_factory=dict)
    """Ticks that were due and did not start, by reason (``busy``, ``circuit_open``)."""
    escalation: EscalationCounts | None = None
    """The escalation slot's counters (:mod:`actors.escalation.slot`)."""
    images_sent: int = 0
    images_refused: dict[str, int] = field(default_factory=dict)
    """Screen images never sent, by reason."""
    model_redactions: dict[str, int] = field(default_factory=dict)
    """Secrets taken out of the model's answers, by kind."""
