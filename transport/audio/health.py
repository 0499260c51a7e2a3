"""The audio feature's section of ``GET /health``: ``/health.audio``, made from what the audio
actors last published (never by asking an actor), so a capture that fails never delays or
fails ``/health``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec import UNSET, UnsetType

from actors.audio.core.stt_outcome import LocalStats
from actors.audio.subtree import AudioViews, configured
from config.audio.settings import AudioConfig
from transport.audio.answers import (
    AudioHealth,
    AudioSources,
    CaptureHealth,
    LocalHealth,
    TranscriberHealth,
)
from transport.host.feature import Reading

if TYPE_CHECKING:
    from transport.shell.bridge import Asker
    from transport.shell.state import Peers


async def read_audio(peers: Peers, ask: Asker, *, private: bool) -> Reading:  # noqa: ARG001
    """``/health.audio`` for one request, read without asking an actor: a capture that fails
    never makes ``/health`` a 503 (the section's states say it, :func:`audio_health`)."""
    return Reading(audio_health(peers.audio_views, peers.audio_config, private=private))


def audio_health(views: AudioViews, config: AudioConfig, *, private: bool) -> AudioHealth:
    """``/health.audio`` from the audio actors' published statuses: a capture for each
    configured source (the others absent) and the transcriber. Without ``private`` (a
    caller without the token, when one is set) ``lastStderr`` and ``lastError`` are
    ``null``, as :data:`transport.agent.health.PRIVATE_HEALTH_FIELDS` are."""
    sources = {}
    for source in configured(config):
        status = views.captures[source].value
        sources[source] = CaptureHealth(
            state=status.state,
            kind=status.kind,
            restarts=status.restarts,
            last_exit=status.last_exit,
            last_stderr=status.last_stderr if private else None,
            captured_s=status.captured_s,
            speech_share=status.speech_share,
            utterances=status.utterances,
            alt=status.alt,
        )
    stats = views.stt.value
    transcriber = TranscriberHealth(
        state=stats.state,
        api=config.stt_api,
        model=config.stt_model,
        in_flight=stats.in_flight,
        max_in_flight=config.stt_max_in_flight,
        outcomes=dict(stats.outcomes),
        latency_p50_ms=stats.latency_p50_ms,
        consecutive_failures=stats.consecutive_failures,
        last_error=stats.last_error if private else None,
        local=_local(stats.local),
    )
    return AudioHealth(sources=AudioSources(**sources), transcriber=transcriber)


def _local(stats: LocalStats | None) -> LocalHealth | UnsetType:
    """The local recogniser's worker, when there is one."""
    if stats is None:
        return UNSET
    return LocalHealth(
        state=stats.state,
        model=stats.model,
        rss_mb=stats.rss_mb,
        real_time_factor=stats.real_time_factor,
        restarts=stats.restarts,
        decoded=stats.decoded,
    )
