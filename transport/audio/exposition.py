"""The audio path's part of ``GET /metrics``: each configured source's capture and the
transcriber, from what they last published (a scrape reads their cells, never asks them).

Every counter here only grows within a process: a capture or a transcriber that is restarted
counts on from what its previous incarnation published. With ``STT_API=local`` the
recogniser's worker is shown too (its state, memory and real-time factor). The
transcriber's latency histogram has the LLM's buckets
(:data:`~actors.common.latency.LATENCY_BUCKETS_S`), so the two compare bucket for
bucket. Imported with :mod:`transport.handlers.exposition`, at the first scrape.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final, get_args

from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from actors.audio.core.capture_records import CaptureState, CaptureStatus
from actors.audio.core.stt_outcome import STT_STATES, LocalStats, TranscriberStats, WorkerState
from actors.audio.subtree import AudioViews, configured
from actors.common.latency import LATENCY_BUCKETS_S
from actors.core.shapes import AudioSource
from config.audio.settings import AudioConfig
from transport.shell.gauges import state_gauge
from transport.shell.metrics import cumulative

__all__ = ["CAPTURE_STATES", "STT_STATES", "AudioFigures", "audio_families"]

CAPTURE_STATES: Final[tuple[CaptureState, ...]] = get_args(CaptureState)
"""Every state a capture may be in: each has a sample of ``relay_audio_capture_state``."""
WORKER_STATES: Final[tuple[WorkerState, ...]] = get_args(WorkerState)
"""Every state of the local recogniser's worker (``relay_stt_local_worker_state``)."""


@dataclass(frozen=True, slots=True)
class AudioFigures:
    """What one scrape shows of the audio path."""

    captures: Mapping[AudioSource, CaptureStatus]
    """The configured sources' statuses (a source not configured has no sample)."""
    stt: TranscriberStats

    @classmethod
    def read(cls, views: AudioViews, config: AudioConfig) -> AudioFigures:
        """The newest statuses the audio actors published."""
        captures = {source: views.captures[source].value for source in configured(config)}
        return cls(captures=captures, stt=views.stt.value)


def audio_families(figures: AudioFigures) -> Iterator[Metric]:
    """The captures' families, then the transcriber's."""
    yield from _captures(figures.captures)
    yield from _transcriber(figures.stt)


def _captures(captures: Mapping[AudioSource, CaptureStatus]) -> Iterator[Metric]:
    labels = ["source"]
    captured = CounterMetricFamily(
        "relay_audio_captured_seconds_total",
        "Seconds of audio read from each configured source (AUDIO_SOURCE: system, "
        "MIC_SOURCE: mic).",
        labels=labels,
    )
    utterances = CounterMetricFamily(
        "relay_audio_utterances_total",
        "Utterances each source's voice detector handed to the transcriber.",
        labels=labels,
    )
    restarts = CounterMetricFamily(
        "relay_audio_capture_restarts_total",
        "Restarts of each source's capture program (it exited, stalled or could not start).",
        labels=labels,
    )
    share = GaugeMetricFamily(
        "relay_audio_speech_share",
        "Of the audio read from each source, the share that was in utterances (0 to 1).",
        labels=labels,
    )
    state = GaugeMetricFamily(
        "relay_audio_capture_state",
        "Each source's capture: 1 for its current state of starting, running, backoff "
        "(waiting to restart), paused (the overlay), failed (gave up), stopped (a file's end).",
        labels=["source", "state"],
    )
    for source, status in captures.items():
        captured.add_metric([source], status.captured_s)
        utterances.add_metric([source], status.utterances)
        restarts.add_metric([source], status.restarts)
        share.add_metric([source], status.speech_share)
        for name in CAPTURE_STATES:
            state.add_metric([source, name], 1 if status.state == name else 0)
    yield from (captured, utterances, restarts, share, state)


def _transcriber(stats: TranscriberStats) -> Iterator[Metric]:
    yield GaugeMetricFamily(
        "relay_stt_requests_in_flight",
        "Requests out to the speech service now (STT_MAX_IN_FLIGHT at most).",
        value=stats.in_flight,
    )
    outcomes = CounterMetricFamily(
        "relay_stt_outcomes_total",
        "Utterances by outcome: stored, no_key, busy, breaker (refused at once), timeout, "
        "error, empty, a filter's reason (short, invented ...), undelivered.",
        labels=["reason"],
    )
    for reason, count in sorted(stats.outcomes.items()):
        outcomes.add_metric([reason], count)
    yield outcomes
    yield state_gauge(
        "relay_stt_breaker_state",
        "The transcriber: 1 for its current state of ok, degraded (failing), open (refusing "
        "while it cools off), probing (one request out to try again), no_key (nothing sent).",
        STT_STATES,
        stats.state,
    )
    latency = HistogramMetricFamily(
        "relay_stt_latency_seconds",
        "Speech service requests, answered or failed, from sending to the answer.",
        labels=[],
    )
    latency.add_metric(
        [], cumulative(LATENCY_BUCKETS_S, stats.latency_buckets), stats.latency_sum_s
    )
    yield latency
    if stats.local is not None:
        yield from _local(stats.local)


def _local(worker: LocalStats) -> Iterator[Metric]:
    """The local recogniser's worker (``STT_API=local``): its state, memory and speed."""
    yield state_gauge(
        "relay_stt_local_worker_state",
        "The local recogniser's worker: 1 for its current state of idle (no model loaded), "
        "loading, ready, decoding, failed (the model did not load).",
        WORKER_STATES,
        worker.state,
    )
    if worker.rss_mb is not None:  # a worker runs (and this system tells its memory)
        yield GaugeMetricFamily(
            "relay_stt_local_worker_resident_bytes",
            "The local recogniser's worker process: its resident memory.",
            value=worker.rss_mb * 1024 * 1024,
        )
    if worker.real_time_factor is not None:
        yield GaugeMetricFamily(
            "relay_stt_local_real_time_factor",
            "Decoding time over audio time, the median of the recent utterances.",
            value=worker.real_time_factor,
        )
