"""The agent's metric families at one scrape of ``GET /metrics``: its ticks, each model's
requests, latency, tokens and cost, the LLM path's circuit, the response-format levels, the
local model's worker, the model's redactions, and whether its actors answered.

A scrape asks the digest store and the ticker for their counters (through the bridge, each
bounded by the actor timeout, both at once) and reads the cells the LLM caller writes. An
actor that does not answer in time leaves its families out of that scrape, and
``relay_scrape_source_up{source}`` says which.

Imported at the first scrape, with prometheus-client
(:func:`transport.agent.feature.agent_metrics`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from actors.agent.core.counting.counters import AgentMetrics
from actors.agent.core.hud_check import WITHHELD_REASONS
from actors.agent.core.response_format import FormatLevels
from actors.agent.digest_store import DigestStore
from actors.agent.ticker import Ticker
from actors.common.latency import LATENCY_BUCKETS_S
from actors.core.errors import ActorUnavailable
from actors.kernel.base import ChildHandle, RelayActor
from transport.agent.local import local_families, local_stats
from transport.agent.redaction import redaction_families
from transport.agent.vision import vision_families
from transport.escalation.exposition import escalation_families
from transport.shell.gauges import state_gauge
from transport.shell.metrics import cumulative

if TYPE_CHECKING:
    from transport.shell.bridge import Asker
    from transport.shell.state import Peers

A = TypeVar("A", bound=RelayActor)
R = TypeVar("R")

CIRCUIT_STATES = ("ok", "degraded", "open", "disabled", "no_key")
"""``/health.agent.state``: the LLM path's circuit; ``disabled`` when the agent is switched
off, ``no_key`` when it is on but has no key to call with."""


async def agent_families(peers: Peers, ask: Asker) -> tuple[Metric, ...]:
    """The agent's families at one scrape, from what its actors answer now and what the LLM
    caller last wrote."""
    agent, ticker = await asyncio.gather(
        _read(ask, peers.digest, DigestStore.metrics),
        _read(ask, peers.ticker, Ticker.status),
    )
    return tuple(_families(agent, ticker, peers))


def _families(
    agent: AgentMetrics | None, ticker: Mapping[str, Any] | None, peers: Peers
) -> Iterator[Metric]:
    if agent is not None:
        yield from _agent(agent)
    if ticker is not None:
        yield from _ticker(ticker)
    yield _formats(peers.formats.value)
    local = local_stats(peers.local_models)
    if local is not None:
        yield from local_families(local)
    if agent is not None:
        yield from redaction_families(agent)
    up = GaugeMetricFamily(
        "relay_scrape_source_up",
        "Whether an actor answered this scrape (0: its metrics are missing from it).",
        labels=["source"],
    )
    up.add_metric(["digest"], 0 if agent is None else 1)
    up.add_metric(["ticker"], 0 if ticker is None else 1)
    yield up


async def _read(ask: Asker, handle: ChildHandle[A], method: Callable[[A], R]) -> R | None:
    """``method``'s answer, or ``None`` when the actor is down or did not answer in time."""
    try:
        return await ask(handle, method)
    except ActorUnavailable:
        return None


def _counter(name: str, doc: str, labels: list[str]) -> CounterMetricFamily:
    return CounterMetricFamily(name, doc, labels=labels)


def _formats(formats: FormatLevels) -> Metric:
    family = GaugeMetricFamily(
        "relay_llm_response_format",
        "1 for the response_format level (json_schema, json_object, off) that last "
        "answered, per model and base URL (AGENT_RESPONSE_FORMAT).",
        labels=["model", "base_url", "level"],
    )
    for row in formats.to_json():
        family.add_metric([row["model"], row["baseUrl"], row["level"]], 1)
    return family


def _agent(agent: AgentMetrics) -> Iterator[Metric]:
    ticks = _counter(
        "relay_ticks_total",
        "Agent ticks by outcome: called (the LLM answered), idle (an interval with nothing "
        "new, as a fixed beat would have skipped it), empty "
        "(empty window), fingerprint_skip (window unchanged), minor_skip (no meaningful "
        "change), deferred (a meaningful change waiting: switching settling or the call "
        "budget spent), failed.",
        ["outcome"],
    )
    for outcome, count in agent.ticks.items():
        ticks.add_metric([outcome], count)
    yield ticks
    skips = _counter(
        "relay_tick_skips_total",
        "Ticks not started: busy (one in flight), circuit_open (the breaker cooling off).",
        ["reason"],
    )
    for reason, count in agent.not_started.items():
        skips.add_metric([reason], count)
    yield skips
    yield CounterMetricFamily(
        "relay_llm_fallbacks_total",
        "Ticks answered by a fallback model rather than the first.",
        value=agent.fallbacks,
    )
    withheld = _counter(
        "relay_huds_withheld_total",
        "Answers whose hud was not pushed to the feed because it was no line a user can "
        "read: echo (the prompt's instructions), fragment (JSON pieces), markup, "
        "placeholder (the prompt's), empty.",
        ["reason"],
    )
    for reason in WITHHELD_REASONS:
        withheld.add_metric([reason], agent.huds_withheld.get(reason, 0))
    yield withheld
    if agent.escalation is not None:
        yield from escalation_families(agent.escalation)
    yield from vision_families(agent)
    yield CounterMetricFamily(
        "relay_situation_write_failures_total",
        "SITUATION.md writes that failed (RELAY_SITUATION_FILE); the ticks still succeeded.",
        value=agent.situation_write_failures,
    )
    yield from _models(agent)


def _models(agent: AgentMetrics) -> Iterator[Metric]:
    """Each model's requests by outcome, their latency, tokens and known cost."""
    latency = HistogramMetricFamily(
        "relay_llm_request_duration_seconds",
        "Chat-completions requests by model, answered or failed, retries included.",
        labels=["model"],
    )
    requests = _counter(
        "relay_llm_requests_total",
        "Chat-completions requests by model and outcome: ok (answered), error (failed), "
        "refused (its response format or images refused, asked again at once without).",
        ["model", "outcome"],
    )
    tokens = _counter(
        "relay_llm_tokens_total",
        "Tokens by model: in (prompt) and out (completion).",
        ["model", "direction"],
    )
    cost = _counter(
        "relay_llm_cost_usd_total",
        "Known cost of the answered calls in USD, by model (the provider's usage.cost, "
        "else the price table); a model with no known cost has no sample.",
        ["model"],
    )
    for model, stats in sorted(agent.models.items()):
        buckets = cumulative(LATENCY_BUCKETS_S, stats.latency_buckets)
        latency.add_metric([model], buckets, stats.latency_sum_s)
        requests.add_metric([model, "ok"], stats.calls)
        requests.add_metric([model, "error"], stats.errors)
        requests.add_metric([model, "refused"], stats.refused)
        tokens.add_metric([model, "in"], stats.tokens_in)
        tokens.add_metric([model, "out"], stats.tokens_out)
        if stats.cost_known:
            cost.add_metric([model], stats.cost_usd)
    yield latency
    yield requests
    yield tokens
    yield cost


def _ticker(status: Mapping[str, Any]) -> Iterator[Metric]:
    yield state_gauge(
        "relay_circuit_state",
        "The LLM path's state: 1 for the current one of ok, degraded (ticks failing), "
        "open (the breaker cools off), disabled (turned off), no_key (on, without a key).",
        CIRCUIT_STATES,
        str(status.get("state")),
    )
    yield GaugeMetricFamily(
        "relay_llm_consecutive_failures",
        "Failed ticks in a row (3 open the circuit).",
        value=status.get("consecutiveFailures", 0),
    )
