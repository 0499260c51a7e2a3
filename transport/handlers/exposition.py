"""``GET /metrics``: the relay's counters in the Prometheus text format, made at scrape time.

Nothing here runs per request. A scrape reads what the event loop keeps itself
(requests per route, streams) and what any thread may read (each actor's handle), and asks
each feature for its families (:class:`~transport.host.feature.Feature`'s ``families``, all
at once: a feature that asks its actors bounds each answer by the actor timeout); then a
collector of our own turns that snapshot into metric families on a registry of its own
(never prometheus-client's global one), and prometheus-client writes the text.

The module is imported at the first scrape (see :mod:`transport.shell.metrics`).
"""

from __future__ import annotations

import asyncio
import queue
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from prometheus_client.exposition import generate_latest
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import CollectorRegistry

from actors.kernel.base import ChildHandle
from transport.shell.bridge import Asker
from transport.shell.metrics import HTTP_BUCKETS_S, HttpStats, cumulative
from transport.shell.profiling import CLIENTS, ClientReports

if TYPE_CHECKING:
    from transport.host.feature import Feature
    from transport.shell.connections import Connections
    from transport.shell.state import Peers
    from transport.streams.fanout import Streams


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


@dataclass(frozen=True, slots=True)
class Scrape:
    """What one scrape reports; read on the loop before the text is made."""

    http: HttpStats
    streams: Streams[Any]
    actors: Mapping[str, ChildHandle[Any]]
    excluded: Mapping[str, int]
    """Posts answered 200 but dropped by an exclusion rule, by endpoint (counted in ``ok``
    by status, moved to ``excluded`` here)."""
    redactions: Mapping[str, int]
    """Redactions of what clients sent, by type, since the start (the model's answers' are
    the agent's families)."""
    clients: ClientReports
    """The capture client's and the overlay's newest reports of their own figures."""
    connections: Connections | None = None
    """The server's open client connections, its cap and refusals."""
    features: Sequence[Metric] = ()
    """The features' own families at this scrape (each :class:`~transport.host.feature.Feature`'s
    ``families``), in the registry's order."""


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
        yield from self._actors(scrape.actors)
        yield from self._streams(scrape.streams)
        yield from self._clients(scrape.clients)
        yield self._redactions(scrape.redactions)
        yield from scrape.features

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
    def _redactions(clients: Mapping[str, int]) -> Metric:
        """``relay_redactions_total{type}``: what clients sent (the model's answers' are the
        agent's, ``relay_redactions_model_total``)."""
        redactions = _counter(
            "relay_redactions_total", "Secrets redacted before storage, by type.", ["type"]
        )
        for kind, count in sorted(clients.items()):
            redactions.add_metric([kind], count)
        return redactions

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
    families = await asyncio.gather(*(feature.families(peers, ask) for feature in features))
    scrape = Scrape(
        http=http,
        streams=streams,
        actors=peers.actors,
        excluded=excluded or {},
        redactions=redactions or {},
        clients=clients or ClientReports(),
        connections=connections,
        features=tuple(family for feature in families for family in feature),
    )
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RelayCollector(scrape))
    ProcessCollector(namespace="relay", registry=registry)
    return generate_latest(registry)
