"""``GET /metrics``: the relay's counters in the Prometheus text format, made at scrape time.

Nothing here runs per request. A scrape asks the digest store and the ticker for their
counters (through the bridge, each bounded by the actor timeout, both at once), reads what
the event loop keeps itself (requests per route, streams) and what any thread may read
(each actor's handle), then a collector of our own turns that snapshot into metric families
on a registry of its own (never prometheus-client's global one), and prometheus-client
writes the text. An actor that does not answer in time leaves its metrics out of that
scrape, and ``relay_scrape_source_up{source}`` says which.

The module is imported at the first scrape (see :mod:`transport.metrics`).
"""

from __future__ import annotations

import asyncio
import queue
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from prometheus_client.exposition import generate_latest
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import CollectorRegistry

from actors.agent.core.counters import AgentMetrics
from actors.agent.core.hud_check import WITHHELD_REASONS
from actors.agent.core.response_format import NO_LEVELS, FormatLevels
from actors.agent.digest_store import DigestStore
from actors.agent.local_llm import LocalLLMStats
from actors.agent.ticker import Ticker
from actors.common.latency import LATENCY_BUCKETS_S
from actors.core.errors import ActorUnavailable
from actors.kernel.base import ChildHandle, RelayActor
from transport.agent.local import local_families, local_stats
from transport.agent.redaction import redaction_families
from transport.agent.vision import vision_families
from transport.bridge import Asker
from transport.escalation.exposition import escalation_families
from transport.gauges import state_gauge
from transport.metrics import HTTP_BUCKETS_S, HttpStats, cumulative
from transport.profiling import CLIENTS, ClientReports

if TYPE_CHECKING:
    from transport.connections import Connections
    from transport.host.feature import Feature
    from transport.state import Peers
    from transport.streams.fanout import Streams

A = TypeVar("A", bound=RelayActor)
R = TypeVar("R")

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The Prometheus text exposition format, version 0.0.4 (what every scraper reads)."""
INGEST_ROUTES = {("POST", "/feed"): "feed", ("POST", "/sense"): "sense"}
"""The routes ``relay_ingested_total`` counts, and their ``endpoint`` label."""
INGEST_OUTCOMES = ("ok", "bad_request", "too_large", "unavailable", "excluded")
"""Outcomes always shown (at 0 until they happen), so that rates work from the start."""
_STATUS_OUTCOMES = {
    200: "ok",
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    413: "too_large",
    415: "unsupported_media_type",
    417: "expectation_failed",
    503: "unavailable",
}
"""An ingest request's outcome by status; any other status is ``error``."""
CIRCUIT_STATES = ("ok", "degraded", "open", "disabled", "no_key")
"""``/health.agent.state``: the LLM path's circuit; ``disabled`` when the agent is switched
off, ``no_key`` when it is on but has no key to call with."""


@dataclass(frozen=True, slots=True)
class Scrape:
    """What one scrape reports; read on the loop before the text is made."""

    http: HttpStats
    streams: Streams[Any]
    actors: Mapping[str, ChildHandle[Any]]
    agent: AgentMetrics | None
    """``None`` when the digest store did not answer in time."""
    ticker: Mapping[str, Any] | None
    """The ticker's ``status()``; ``None`` when it did not answer in time."""
    excluded: Mapping[str, int]
    """Posts answered 200 but dropped by an exclusion rule, by endpoint (counted in ``ok``
    by status, moved to ``excluded`` here)."""
    redactions: Mapping[str, int]
    """Redactions of what clients sent, by type, since the start (the model's answers' are in
    ``agent``)."""
    clients: ClientReports
    """The capture client's and the overlay's newest reports of their own figures."""
    connections: Connections | None = None
    """The server's open client connections, its cap and refusals."""
    formats: FormatLevels = NO_LEVELS
    """The response-format level that last answered, per model and base URL."""
    features: Sequence[Metric] = ()
    """The features' own families at this scrape (each :class:`~transport.host.feature.Feature`'s
    ``families``), in the registry's order."""
    local: LocalLLMStats | None = None
    """The local model's worker, once a call has made it (:mod:`transport.agent.local`)."""


def _counter(name: str, doc: str, labels: Sequence[str]) -> CounterMetricFamily:
    return CounterMetricFamily(name, doc, labels=labels)


def _histogram(
    family: HistogramMetricFamily,
    labels: Sequence[str],
    bounds: Sequence[float],
    buckets: Sequence[int],
    sum_s: float,
) -> None:
    """Add one labelled histogram from non-cumulative bucket counts (the last is +Inf)."""
    family.add_metric(labels, cumulative(bounds, buckets), sum_s)


class RelayCollector:
    """Yields the families of one :class:`Scrape` (registered on a registry per scrape)."""

    def __init__(self, scrape: Scrape) -> None:
        self._scrape = scrape

    def collect(self) -> Iterator[Metric]:
        scrape = self._scrape
        yield from self._http(scrape.http, scrape.excluded)
        if scrape.connections is not None:
            yield from self._connections(scrape.connections)
        if scrape.agent is not None:
            yield from self._agent(scrape.agent)
        if scrape.ticker is not None:
            yield from self._ticker(scrape.ticker)
        yield self._formats(scrape.formats)
        yield from self._actors(scrape.actors)
        yield from self._streams(scrape.streams)
        yield from self._clients(scrape.clients)
        yield from scrape.features
        if scrape.local is not None:
            yield from local_families(scrape.local)
        yield from redaction_families(scrape.redactions, scrape.agent)
        up = GaugeMetricFamily(
            "relay_scrape_source_up",
            "Whether an actor answered this scrape (0: its metrics are missing from it).",
            labels=["source"],
        )
        up.add_metric(["digest"], 0 if scrape.agent is None else 1)
        up.add_metric(["ticker"], 0 if scrape.ticker is None else 1)
        yield up

    @staticmethod
    def _http(http: HttpStats, excluded: Mapping[str, int]) -> Iterator[Metric]:
        requests = _counter(
            "relay_http_requests_total",
            "HTTP requests answered, by route and status (unmatched: no route took it).",
            ["method", "route", "status"],
        )
        latency = HistogramMetricFamily(
            "relay_http_request_duration_seconds",
            "Time from a route's handler being called to its answer (a stream: its life).",
            labels=["method", "route"],
        )
        ingested = _counter(
            "relay_ingested_total",
            "POST /feed and POST /sense requests by outcome.",
            ["endpoint", "outcome"],
        )
        for (method, route), stats in sorted(http.routes.items()):
            for status, count in sorted(stats.statuses.items()):
                requests.add_metric([method, route, str(status)], count)
            _histogram(latency, [method, route], HTTP_BUCKETS_S, stats.buckets, stats.sum_s)
            endpoint = INGEST_ROUTES.get((method, route))
            if endpoint is None:
                continue
            outcomes = dict.fromkeys(INGEST_OUTCOMES, 0)
            for status, count in stats.statuses.items():
                outcome = _STATUS_OUTCOMES.get(status, "error")
                outcomes[outcome] = outcomes.get(outcome, 0) + count
            dropped = min(excluded.get(endpoint, 0), outcomes["ok"])
            outcomes["ok"] -= dropped
            outcomes["excluded"] += dropped
            for outcome, count in outcomes.items():
                ingested.add_metric([endpoint, outcome], count)
        yield requests
        yield latency
        yield ingested

    @staticmethod
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

    @staticmethod
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
        yield from RelayCollector._models(agent)

    @staticmethod
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
            _histogram(
                latency, [model], LATENCY_BUCKETS_S, stats.latency_buckets, stats.latency_sum_s
            )
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

    @staticmethod
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

    @staticmethod
    def _actors(actors: Mapping[str, ChildHandle[Any]]) -> Iterator[Metric]:
        restarts = _counter(
            "relay_actor_restarts_total", "Restarts of each supervised actor.", ["actor"]
        )
        up = GaugeMetricFamily(
            "relay_actor_up", "Whether the actor's current incarnation runs.", labels=["actor"]
        )
        depth = GaugeMetricFamily(
            "relay_actor_mailbox_depth",
            "Messages waiting in the actor's inbox (a snapshot; a hung actor's grows).",
            labels=["actor"],
        )
        for name, handle in actors.items():
            restarts.add_metric([name], handle.restarts)
            up.add_metric([name], 1 if handle.alive else 0)
            depth.add_metric([name], mailbox_depth(handle))
        yield restarts
        yield up
        yield depth

    @staticmethod
    def _connections(connections: Connections) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "relay_http_connections", "Open client connections.", value=connections.open
        )
        yield GaugeMetricFamily(
            "relay_http_connections_limit",
            "Open client connections at most (RELAY_MAX_CONNECTIONS, or from ulimit -n).",
            value=connections.limit,
        )
        yield CounterMetricFamily(
            "relay_http_connections_refused",
            "Connections over the cap while every other was busy, answered 503 and closed.",
            value=connections.refused,
        )
        closed = _counter(
            "relay_http_connections_closed",
            "Connections the relay closed before their request: head_timeout (no whole request "
            "head in RELAY_HEADER_TIMEOUT_S), idle_at_cap (idle, to make room at the cap).",
            ["reason"],
        )
        closed.add_metric(["head_timeout"], connections.head_timeouts)
        closed.add_metric(["idle_at_cap"], connections.evicted)
        yield closed
        bodies = connections.bodies
        yield GaugeMetricFamily(
            "relay_http_body_bytes",
            "Bytes of request bodies held now, of RELAY_BODY_MEMORY_MB.",
            value=bodies.held,
        )
        cut = _counter(
            "relay_http_bodies_cut",
            "Request bodies answered before they were read whole: full (the body memory "
            "budget was full, with no slower body to cut), slowest (the slowest arriving, cut "
            "for another), too_slow (below the minimum rate).",
            ["reason"],
        )
        cut.add_metric(["full"], bodies.refused)
        cut.add_metric(["slowest"], bodies.cut)
        cut.add_metric(["too_slow"], bodies.too_slow)
        yield cut

    @staticmethod
    def _streams(streams: Streams[Any]) -> Iterator[Metric]:
        clients = GaugeMetricFamily(
            "relay_stream_clients",
            "Open /feed/stream and /agent/stream clients, and overlay sockets.",
            labels=["stream"],
        )
        dropped = _counter(
            "relay_stream_dropped_total", "Stream clients dropped for falling behind.", ["stream"]
        )
        for name, (count, drops) in streams.clients().items():
            clients.add_metric([name], count)
            dropped.add_metric([name], drops)
        yield clients
        yield dropped

    @staticmethod
    def _clients(figures: ClientReports) -> Iterator[Metric]:
        rss = GaugeMetricFamily(
            "relay_client_rss_megabytes",
            "Resident memory of Sinain's clients, as each last reported it: sense (the capture "
            "client, every 60 s), overlay (every 30 s); no sample before a client's first report.",
            labels=["client"],
        )
        uptime = GaugeMetricFamily(
            "relay_client_uptime_seconds",
            "How long each client's process had run at its last report.",
            labels=["client"],
        )
        received = GaugeMetricFamily(
            "relay_client_report_timestamp_seconds",
            "When the relay received each client's last report (epoch seconds): "
            "time() minus this is the report's age.",
            labels=["client"],
        )
        for client in CLIENTS:
            report = figures.latest(client)
            if report is None:
                continue
            rss.add_metric([client], report.rss_mb)
            uptime.add_metric([client], report.uptime_s)
            received.add_metric([client], report.received_at / 1000)
        yield rss
        yield uptime
        yield received


def mailbox_depth(handle: ChildHandle[Any]) -> int:
    """How many messages wait in the inbox of ``handle``'s current incarnation (0 if none).

    Pykka's ``ActorRef.actor_inbox`` is the actor's ``queue.Queue``: ``qsize()`` takes its
    lock for a moment and never waits for the actor, so a hung actor's backlog shows. The
    figure is a snapshot, stale as soon as it is read.
    """
    ref = handle.ref
    if ref is None:
        return 0
    return cast("queue.Queue[Any]", ref.actor_inbox).qsize()


async def _read(ask: Asker, handle: ChildHandle[A], method: Callable[[A], R]) -> R | None:
    """``method``'s answer, or ``None`` when the actor is down or did not answer in time."""
    try:
        return await ask(handle, method)
    except ActorUnavailable:
        return None


async def render(
    peers: Peers,
    ask: Asker,
    http: HttpStats,
    streams: Streams[Any],
    *,
    clients: ClientReports | None = None,
    connections: Connections | None = None,
    excluded: Mapping[str, int] | None = None,
    redactions: Mapping[str, int] | None = None,
    features: tuple[Feature, ...] = (),
) -> bytes:
    """The text of one scrape; ``features``: whose families it shows besides the relay's."""
    agent, ticker = await asyncio.gather(
        _read(ask, peers.digest, DigestStore.metrics),
        _read(ask, peers.ticker, Ticker.status),
    )
    scrape = Scrape(
        http=http,
        streams=streams,
        actors=peers.actors,
        agent=agent,
        ticker=ticker,
        excluded=excluded or {},
        redactions=redactions or {},
        clients=clients or ClientReports(),
        connections=connections,
        formats=peers.formats.value,
        features=tuple(family for feature in features for family in feature.families(peers)),
        local=local_stats(peers.local_models),
    )
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RelayCollector(scrape))
    ProcessCollector(namespace="relay", registry=registry)
    return generate_latest(registry)
