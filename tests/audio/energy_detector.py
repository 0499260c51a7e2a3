"""A test double of :class:`~actors.audio.core.utterance.Detector`: cuts on energy alone.

Frames of 30 ms whose RMS is over a fixed threshold are speech; an utterance ends after
``hangover_ms`` of frames under it and is dropped when shorter than ``min_ms``. No noise
floor, no pre-roll, no cut of long speech: enough to show that a capture's PCM reaches a
detector and its utterances reach the transcriber, not a voice detector
(``actors.audio.core.voice`` is the relay's).
"""

from __future__ import annotations

import math
from array import array

from actors.audio.core.utterance import BYTES_PER_MS, Utterance
from actors.core.shapes import AudioSource

FRAME_MS = 30
FRAME_BYTES = FRAME_MS * BYTES_PER_MS


class EnergyDetector:
    """Cuts PCM into utterances where its energy is over ``threshold`` (of full scale)."""

    def __init__(
        self,
        source: AudioSource = "system",
        threshold: float = 0.01,
        hangover_ms: int = 300,
        min_ms: int = 200,
    ) -> None:
        self._source: AudioSource = source
        self._threshold = threshold
        self._hangover = hangover_ms // FRAME_MS
        self._min_ms = min_ms
        self._pending = b""
        self._speech = bytearray()
        self._quiet_frames = 0
        self._started_ms = 0
        self.frames = 0
        """Frames seen, speech or not."""

    def feed(self, pcm: bytes, now_ms: int) -> list[Utterance]:
        data = self._pending + pcm
        whole = len(data) - len(data) % FRAME_BYTES
        self._pending = data[whole:]
        out = []
        for start in range(0, whole, FRAME_BYTES):
            done = self._frame(data[start : start + FRAME_BYTES], now_ms)
            if done is not None:
                out.append(done)
        return out

    def flush(self, now_ms: int) -> Utterance | None:
        self._pending = b""
        return self._end()

    def _frame(self, frame: bytes, now_ms: int) -> Utterance | None:
        self.frames += 1
        samples = array("h", frame)
        rms = math.sqrt(sum(s * s for s in samples) / len(samples)) / 32768
        if rms >= self._threshold:
            if not self._speech:
                self._started_ms = now_ms
            self._speech += frame
            self._quiet_frames = 0
            return None
        if not self._speech:
            return None
        self._speech += frame
        self._quiet_frames += 1
        return self._end() if self._quiet_frames >= self._hangover else None

    def _end(self) -> Utterance | None:
        pcm, self._speech, self._quiet_frames = bytes(self._speech), bytearray(), 0
        if len(pcm) // BYTES_PER_MS < self._min_ms:
            return None
        return Utterance(self._source, pcm, self._started_ms)
