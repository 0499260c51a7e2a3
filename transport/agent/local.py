"""What ``/health.agent.local`` and ``/metrics`` say of the agent's model on this machine
(``AGENT_API=local``): its worker's state, memory, speed and restarts; nothing of what it
read or wrote."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Final, get_args

from msgspec import Meta
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

from actors.agent.local_llm import LocalLLMStats, LocalModels
from actors.core.shapes import Shape
from actors.kernel.worker import WorkerState
from transport.shell.gauges import state_gauge

WORKER_STATES: Final[tuple[WorkerState, ...]] = get_args(WorkerState)
"""Every state of the local model's worker (``relay_llm_local_worker_state``)."""


class LocalModelHealth(Shape, frozen=True, kw_only=True):
    """The agent's model on this machine (`AGENT_API=local`): its worker process."""

    state: Annotated[
        WorkerState,
        Meta(
            description="`idle` while no model is loaded (before the first call, or after a "
            "worker was replaced), `loading`, `ready`, `busy` (answering a call), `failed` "
            "(the model did not load; the next call tries again)."
        ),
    ]
    model: Annotated[str, Meta(description="`AGENT_MODEL`: a known model's name, or its file.")]
    loaded_model: Annotated[
        str | None, Meta(description="The model's own name, read from its file once loaded.")
    ]
    threads: Annotated[int, Meta(description="`AGENT_LOCAL_THREADS`.")]
    rss_mb: Annotated[float | None, Meta(description="The worker's resident memory (Linux).")]
    tokens_per_second: Annotated[
        float | None, Meta(description="Tokens written a second, the median of recent answers.")
    ]
    restarts: Annotated[int, Meta(description="Workers replaced after a crash or a hang.")]
    answered: int


def local_stats(models: LocalModels) -> LocalLLMStats | None:
    """The local model's figures now, once a call has made it."""
    chat = models.current()
    return chat.stats() if chat is not None else None


def local_health(stats: LocalLLMStats) -> LocalModelHealth:
    """``/health.agent.local``."""
    return LocalModelHealth(
        state=stats.state,
        model=stats.model,
        loaded_model=stats.loaded,
        threads=stats.threads,
        rss_mb=stats.rss_mb,
        tokens_per_second=stats.tokens_per_second,
        restarts=stats.restarts,
        answered=stats.answered,
    )


def local_families(stats: LocalLLMStats) -> Iterator[Metric]:
    """The local model's worker: its state, memory, speed and restarts."""
    yield state_gauge(
        "relay_llm_local_worker_state",
        "The local model's worker: 1 for its current state of idle (no model loaded), "
        "loading, ready, busy (answering), failed (the model did not load).",
        WORKER_STATES,
        stats.state,
    )
    if stats.rss_mb is not None:  # a worker runs (and this system tells its memory)
        yield GaugeMetricFamily(
            "relay_llm_local_worker_resident_bytes",
            "The local model's worker process: its resident memory.",
            value=stats.rss_mb * 1024 * 1024,
        )
    if stats.tokens_per_second is not None:
        yield GaugeMetricFamily(
            "relay_llm_local_tokens_per_second",
            "Tokens the local model writes a second, the median of its recent answers.",
            value=stats.tokens_per_second,
        )
    yield CounterMetricFamily(
        "relay_llm_local_worker_restarts",
        "The local model's workers replaced after a crash or a hang.",
        value=stats.restarts,
    )
