"""What ``/health`` and ``/metrics`` say of the screen images calls send: counts, never bytes.

The digest store keeps the counts with the agent's other counters (agent.db), so a count a
reader saw never goes back, across restarts too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, get_args

from msgspec import Meta
from prometheus_client.metrics_core import CounterMetricFamily, Metric

from actors.agent.core.counting.counters import AgentMetrics
from actors.core.screen_image import RefusalReason
from actors.core.shapes import Shape

REFUSALS: tuple[str, ...] = get_args(RefusalReason)


class VisionHealth(Shape, frozen=True):
    """The screen images calls sent, and those never sent."""

    images_sent: Annotated[int, Meta(description="Images sent with calls that answered.")]
    images_refused: Annotated[
        dict[str, int],
        Meta(
            description="Images never sent, by reason: `not_base64`, `not_image` (neither a "
            "JPEG nor a PNG), `too_large` (over 1 MiB decoded); each counted once."
        ),
    ]


def vision_families(agent: AgentMetrics) -> Iterator[Metric]:
    """``relay_vision_images_sent_total`` and ``relay_vision_images_refused_total`` (every
    reason, zeros too)."""
    yield CounterMetricFamily(
        "relay_vision_images_sent_total",
        "Screen images sent with LLM calls that answered.",
        value=agent.images_sent,
    )
    refused = CounterMetricFamily(
        "relay_vision_images_refused_total",
        "Screen images never sent, by reason: not_base64, not_image (neither JPEG nor PNG), "
        "too_large.",
        labels=["reason"],
    )
    for reason in REFUSALS:
        refused.add_metric([reason], agent.images_refused.get(reason, 0))
    yield refused
