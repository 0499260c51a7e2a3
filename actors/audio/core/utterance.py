"""What the audio path hands on: an utterance of one source, as 16 kHz mono 16-bit PCM.

Capture cuts the PCM of a source into utterances (:mod:`actors.audio.core.voice`), the transcriber
turns each into text, and the feed stores the text with the source's mark (the sources and
their marks are the feed's vocabulary: :mod:`actors.core.shapes`). Audio itself is
never written to disk or logged: an utterance lives in memory until it is transcribed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

from actors.common.forgetting import Span
from actors.core.shapes import AudioSource

SAMPLE_RATE: Final = 16_000
"""Samples per second of every PCM stream the relay reads."""
SAMPLE_BYTES: Final = 2
"""Signed 16-bit little-endian samples, one channel."""
BYTES_PER_MS: Final = SAMPLE_RATE * SAMPLE_BYTES // 1000


@dataclass(frozen=True, slots=True)
class Utterance:
    """A stretch of speech of one source, pre-roll and hangover included."""

    source: AudioSource
    pcm: bytes
    """16 kHz mono signed 16-bit little-endian samples."""
    started_ms: int
    """When it began, on the relay's clock (epoch ms)."""
    quiet: bool = False
    """Its speech was faint (near the threshold): a text that speech models invent over
    silence is dropped rather than believed."""

    @property
    def duration_ms(self) -> int:
        """Its length in milliseconds."""
        return len(self.pcm) // BYTES_PER_MS


class Detector(Protocol):
    """Cuts one source's PCM into utterances (:class:`actors.audio.core.voice.VoiceDetector`)."""

    def feed(self, pcm: bytes, now_ms: int) -> list[Utterance]:
        """Take the next samples (any length, whole samples), read at ``now_ms``; return the
        utterances they ended."""

    def flush(self, now_ms: int) -> Utterance | None:
        """End the stream: the utterance in progress, if long enough."""


class TranscriptFilter(Protocol):
    """Decides which transcripts reach the feed
    (:class:`actors.audio.core.transcript_filter.Filters`)."""

    def check(self, source: AudioSource, text: str, quiet: bool, now_ms: int) -> str | None:
        """Why ``text`` is dropped (``short``, ``repetitive``, ``invented``, ``duplicate``,
        ``bleed``), or ``None`` to keep it; a kept text is remembered for the next checks."""

    def forget(self, span: Span) -> int:
        """Let go of the texts kept that were checked in ``span`` (epoch ms); how many."""
