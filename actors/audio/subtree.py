"""The audio subtree: the transcriber and one capture per configured source, under a
supervisor of their own (``audio``), started after the agent and stopped before it.

A capture hands each utterance to the transcriber with a ``tell`` from its reader thread; the
transcriber stores each kept transcript through the feed buffer, the one place where client
text enters the feed (redacted, committed, published to every reader). Nothing here waits on
another actor: a capture whose transcriber is restarting drops the utterance (counted), and
the transcriber's own wait for the feed runs on a thread of its own. The transcriber runs
without a source too: ``POST /audio`` brings it utterances from another device.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import pykka
import structlog

from actors.audio.capture import Capture
from actors.audio.core.capture_records import CaptureStatus, not_started
from actors.audio.core.stt_outcome import NO_STATS, TranscriberStats
from actors.audio.core.transcript_filter import Filters
from actors.audio.core.utterance import Utterance
from actors.audio.core.voice import VoiceDetector
from actors.audio.transcriber import Transcriber
from actors.core.errors import ActorUnavailable
from actors.core.exclusion import PrivacyState
from actors.core.records import FeedPost, FeedRecord
from actors.core.shapes import AUDIO_SOURCES, AudioSource
from actors.ingest.feed_buffer import FeedBuffer
from actors.kernel.base import ChildHandle, Reporter
from actors.kernel.clock import Clock
from actors.kernel.published import Published
from actors.kernel.supervisor import ChildSpec, Supervisor
from config.audio.settings import AudioConfig
from config.audio.stt_choice import LOCAL_STT_INSTALL

log = structlog.get_logger("relay")

FEED_TIMEOUT_S = 5.0
"""How long the transcriber's delivery thread waits for the feed buffer to begin storing a
transcript: one it has not begun by then is withdrawn (never stored, counted
``undelivered``); one it has begun is waited for, so an ``undelivered`` one is never stored."""
STT_SHUTDOWN_S = 1.0
"""Requests in flight are abandoned at stop, not awaited."""
CAPTURE_SHUTDOWN_S = 5.0
"""Long enough to end a process that ignores ``SIGTERM`` (its grace, then ``SIGKILL``)."""


@dataclass(frozen=True, slots=True)
class AudioHandles:
    """The stable addresses of the audio actors."""

    audio: ChildHandle[Supervisor] = field(default_factory=lambda: ChildHandle("audio"))
    stt: ChildHandle[Transcriber] = field(default_factory=lambda: ChildHandle("stt"))
    captures: dict[AudioSource, ChildHandle[Capture]] = field(
        default_factory=lambda: {s: ChildHandle(f"capture_{s}") for s in AUDIO_SOURCES}
    )


@dataclass(frozen=True, slots=True)
class AudioViews:
    """What the audio actors publish, read by ``/health``, ``/metrics`` and the overlay."""

    stt: Published[TranscriberStats] = field(default_factory=lambda: Published(NO_STATS))
    captures: dict[AudioSource, Published[CaptureStatus]] = field(
        default_factory=lambda: {s: Published(not_started(s)) for s in AUDIO_SOURCES}
    )


def configured(config: AudioConfig) -> dict[AudioSource, str]:
    """The sources that are captured, with their values."""
    values: dict[AudioSource, str] = {"system": config.source, "mic": config.mic_source}
    return {source: value for source, value in values.items() if value}


def audio_children(
    config: AudioConfig,
    clock: Clock,
    feed: ChildHandle[FeedBuffer],
    handles: AudioHandles,
    views: AudioViews,
    *,
    ping_timeout_s: float,
    privacy: Published[PrivacyState] | None = None,
) -> list[ChildSpec]:
    """The transcriber's child spec and one for each configured source, in start order; each
    capture stops while ``privacy`` pauses capture."""
    filters = Filters()  # kept across the transcriber's restarts: what it heard lately
    if config.local:
        log.info(
            "audio.local_stt",
            actor="root",
            model=config.stt_model,
            note="speech is recognised on this machine (faster-whisper); nothing is sent",
        )
    elif configured(config) and not config.can_transcribe:
        log.warning(
            "audio.no_key",
            actor="root",
            note="audio is captured but not transcribed: no speech service key",
            fix=f"{LOCAL_STT_INSTALL} to recognise speech on this machine, or set STT_API_KEY "
            "(OPENROUTER_API_KEY serves only a speech service at AGENT_BASE_URL's origin)",
        )

    def deliver(record: FeedPost) -> FeedRecord:
        reply = feed.ask(FeedBuffer.append_many, (record,))
        try:
            return reply.result(timeout=FEED_TIMEOUT_S)[0]
        except TimeoutError:
            if reply.cancel():  # not begun: the feed skips it, and "undelivered" is true
                msg = f"actor feed did not answer within {FEED_TIMEOUT_S:g} s"
                raise ActorUnavailable(msg) from None
        return reply.result()[0]  # begun: stored once committed (or failed, if abandoned)

    def stt(report: Reporter) -> pykka.ActorRef[Any]:
        return Transcriber.start(
            clock=clock,
            config=config,
            transcript_filter=filters,
            deliver=deliver,
            published=views.stt,
            report=report,
        )

    def hand_on(utterance: Utterance) -> None:
        with contextlib.suppress(ActorUnavailable):  # restarting: this utterance is lost
            handles.stt.tell(Transcriber.submit, utterance)

    def capture(source: AudioSource, value: str) -> ChildSpec:
        def start(report: Reporter) -> pykka.ActorRef[Any]:
            return Capture.start(
                source=source,
                value=value,
                detector=lambda: VoiceDetector(source, config),
                on_utterance=hand_on,
                clock=clock,
                alt=config.alt_source if source == "system" else "",
                published=views.captures[source],
                privacy=privacy,
                report=report,
            )

        handle = handles.captures[source]
        return ChildSpec(
            handle.name,
            start,
            handle,
            shutdown_timeout_s=CAPTURE_SHUTDOWN_S,
            ping_timeout_s=ping_timeout_s,
        )

    spec = ChildSpec(
        "stt", stt, handles.stt, shutdown_timeout_s=STT_SHUTDOWN_S, ping_timeout_s=ping_timeout_s
    )
    return [spec, *(capture(s, v) for s, v in configured(config).items())]
