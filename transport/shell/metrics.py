"""Request counts and latencies per route, kept on the transport's event loop for ``/metrics``.

Each route's guard (:func:`transport.shell.guard.guarded`) counts its request here with
:meth:`RouteStats.observe`: a bisect, two additions and a dict update on the loop's thread,
the only thread that writes or reads these, so no lock. A prometheus-client ``Histogram``
would take a lock and walk its buckets on every request of the relay's busiest thread; here
nothing of prometheus-client runs until a scrape, when :mod:`transport.handlers.exposition`
(imported then, not before: it weighs on the relay's start and size) turns these and the
actors' counters into text.

The figures belong to one transport incarnation: a restart of the transport starts them from
zero, which Prometheus reads as a counter reset.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

HTTP_BUCKETS_S = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)
"""Upper bounds of the request latency histogram, in seconds (``+Inf`` follows): finest at the
low end, where a ``POST /feed`` answers (with ``RELAY_SYNC=full``, once its fsync is done)."""
UNMATCHED = "unmatched"
"""The route label of requests no route took (404, 405, preflights): never a raw path."""


class RouteStats:
    """The requests of one route: how many per status, and a latency histogram."""

    __slots__ = ("buckets", "method", "route", "statuses", "sum_s")

    def __init__(self, method: str, route: str) -> None:
        self.method = method
        self.route = route
        self.statuses: dict[int, int] = {}
        self.buckets = [0] * (len(HTTP_BUCKETS_S) + 1)
        """Requests per latency bucket, not cumulative; the last is ``+Inf``."""
        self.sum_s = 0.0

    def observe(self, status: int, seconds: float) -> None:
        """Count one answered request (on the loop's thread only)."""
        self.buckets[bisect.bisect_left(HTTP_BUCKETS_S, seconds)] += 1
        self.sum_s += seconds
        statuses = self.statuses
        statuses[status] = statuses.get(status, 0) + 1


class HttpStats:
    """Every route's :class:`RouteStats`, keyed by the route's method and path template."""

    def __init__(self, excluded_before: int = 0) -> None:
        self.routes: dict[tuple[str, str], RouteStats] = {}
        self.excluded_before = excluded_before
        """Sense events the exclusion rule had dropped before this transport incarnation
        (its counter lives as long as the process; these counts start at zero)."""

    def route(self, method: str, route: str) -> RouteStats:
        """The stats of ``method route``, made on first use (when the app is built)."""
        stats = self.routes.get((method, route))
        if stats is None:
            stats = self.routes[method, route] = RouteStats(method, route)
        return stats


def cumulative(bounds: Sequence[float], buckets: Sequence[int]) -> list[tuple[str, float]]:
    """A histogram's bucket counts, not cumulative with ``+Inf`` last (as :class:`RouteStats`
    and the actors keep them), as the cumulative ``(le, count)`` pairs of the text format."""
    pairs, total = [], 0
    for bound, count in zip((*bounds, math.inf), buckets, strict=True):
        total += count
        pairs.append(("+Inf" if math.isinf(bound) else repr(bound), float(total)))
    return pairs
