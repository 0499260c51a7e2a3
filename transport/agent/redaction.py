"""What ``/health`` and ``/metrics`` say of the secrets taken out of what the model answered,
by kind. Counts, never the secrets.

What clients sent is counted by the buffers' redactor, since start, and shown by the shell
(``relay_redactions_total``, :mod:`transport.handlers.exposition`). What the model answered (a key a
vision model read off the screen's pixels, the relay's own key it was shown) is counted by the
digest store with the agent's other counters (agent.db), so a count a reader saw never goes
back, across restarts too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from msgspec import Meta
from prometheus_client.metrics_core import CounterMetricFamily, Metric

from actors.agent.core.counting.counters import AgentMetrics
from actors.core.redaction.rules import KINDS

ModelRedactions = Annotated[
    dict[str, int],
    Meta(
        description="Secrets taken out of the model's huds and digests before they were kept, "
        "served or logged, by kind (`api-key`, `token`, ... as the markers name them): a key a "
        "vision model read off the screen, or the relay's own key. Kinds found only."
    ),
]
"""``/health.agent.modelRedactions``."""


def redaction_families(agent: AgentMetrics) -> Iterator[Metric]:
    """``relay_redactions_model_total{type}`` (every kind, zeros too), when the digest store
    answered the scrape; what clients sent is the shell's ``relay_redactions_total{type}``
    (:mod:`transport.handlers.exposition`)."""
    model = CounterMetricFamily(
        "relay_redactions_model_total",
        "Secrets taken out of the model's huds and digests before they were kept, by type.",
        labels=["type"],
    )
    for kind in KINDS:
        model.add_metric([kind], agent.model_redactions.get(kind, 0))
    yield model
