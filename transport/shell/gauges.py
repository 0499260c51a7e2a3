"""One way to show a state in ``GET /metrics``: a gauge with a sample per state, 1 for the
current one (the LLM path's breaker, the speech path's, each local model's worker)."""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client.metrics_core import GaugeMetricFamily, Metric


def state_gauge(name: str, documentation: str, states: Sequence[str], current: str) -> Metric:
    """A gauge labelled ``state``: 1 for ``current``, 0 for every other of ``states``."""
    family = GaugeMetricFamily(name, documentation, labels=["state"])
    for state in states:
        family.add_metric([state], 1 if state == current else 0)
    return family
