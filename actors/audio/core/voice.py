"""Voice detection: one source's PCM cut into utterances by the energy of its frames.

The stream is read in frames of 30 ms (480 samples). A frame's energy is its RMS as a share of
full scale. The noise floor is the running minimum of the energies, creeping up by
:data:`FLOOR_CREEP` of the difference at each louder frame, so that a fan spinning up slowly
raises it with itself. A frame is speech when its energy is at least the larger of the
source's threshold and the floor times ``speech_factor``.

An utterance begins ``preroll_ms`` before its first speech frame and ends once ``hangover_ms``
of frames without speech followed its last one, those frames included. Speech longer than
``max_utterance_ms`` is cut there and goes on as the next utterance; an utterance whose speech
(first speech frame to last) is shorter than ``min_utterance_ms`` is dropped and counted.

Pure and cheap: no I/O, no clock (the caller says when it read the samples), no numpy; about
a frame's worth of Python arithmetic per 30 ms of audio.
"""

from __future__ import annotations

import math
import operator
import statistics
import sys
from array import array
from collections import deque
from dataclasses import dataclass

from actors.audio.core.utterance import BYTES_PER_MS, SAMPLE_BYTES, SAMPLE_RATE, Utterance
from actors.core.shapes import AudioSource
from config.audio.settings import AudioConfig

FRAME_MS = 30
FRAME_SAMPLES = SAMPLE_RATE * FRAME_MS // 1000
FRAME_BYTES = FRAME_SAMPLES * SAMPLE_BYTES
FULL_SCALE = 32768.0
FLOOR_CREEP = 0.0005
"""The share of (energy - floor) the noise floor rises by at each frame louder than it: about
a minute to follow a noise that appears all at once, fast enough for one that grows slowly."""
QUIET_RATIO = 2.0
"""An utterance is quiet when, at the median of its speech frames, its energy is under this
many times the level that made a frame speech (the larger of the threshold and the floor
times the factor). Speech that only just passes the gate is what a speech model hears as
near-silence, and fills with phrases it invented."""
_BIG_ENDIAN = sys.byteorder == "big"


@dataclass(frozen=True, slots=True)
class VoiceStats:
    """A detector's counts since it was made."""

    seconds: float
    """Seconds of audio read."""
    frames: int
    speech_frames: int
    utterances: int
    """Utterances handed on."""
    too_short: int
    """Utterances dropped as shorter than ``min_utterance_ms``."""

    @property
    def speech_share(self) -> float:
        """The share of frames that were speech (0 before the first frame)."""
        return self.speech_frames / self.frames if self.frames else 0.0


def frame_energy(frame: bytes) -> float:
    """The RMS of 16-bit little-endian samples as a share of full scale (0 for none)."""
    samples = array("h")
    samples.frombytes(frame)
    if _BIG_ENDIAN:
        samples.byteswap()
    if not samples:
        return 0.0
    return math.sqrt(sum(map(operator.mul, samples, samples)) / len(samples)) / FULL_SCALE


class _Gathering:
    """The utterance being gathered: its frames, where its speech lies, how loud it was."""

    __slots__ = (
        "first_speech",
        "frames",
        "last_speech",
        "ratios",
        "silent",
        "started_ms",
    )

    def __init__(self, started_ms: int, frames: list[bytes]) -> None:
        self.started_ms = started_ms
        self.frames = frames
        self.first_speech = -1
        self.last_speech = -1
        """The indexes (in :attr:`frames`) of its first and last speech frames, -1 before."""
        self.ratios: list[float] = []
        """Each speech frame's energy over the level that made it speech."""
        self.silent = 0
        """Frames without speech since the last speech frame."""


class VoiceDetector:
    """Cuts one source's PCM into :class:`Utterance` values (the ``Detector`` protocol).

    ``feed`` takes samples in chunks of any size, odd byte counts included (the half sample
    waits for the next chunk); the utterances do not depend on how the stream was chunked.
    ``now_ms`` is the relay's clock when the chunk's last byte was read: an utterance's
    ``started_ms`` is that time less the duration of the samples read since its first one.
    """

    def __init__(self, source: AudioSource, config: AudioConfig) -> None:
        self.source: AudioSource = source
        self._threshold = config.system_threshold if source == "system" else config.mic_threshold
        self._factor = config.speech_factor
        self._preroll: deque[bytes] = deque(maxlen=math.ceil(config.preroll_ms / FRAME_MS))
        self._hangover = max(1, math.ceil(config.hangover_ms / FRAME_MS))
        self._max_frames = max(1, config.max_utterance_ms // FRAME_MS)
        self._min_ms = config.min_utterance_ms
        self._pending = bytearray()
        self._read = 0
        """Bytes read since the start, the pending ones included."""
        self._position = 0
        """Where the next frame begins in the stream, in bytes."""
        self._frames = 0
        self._speech_frames = 0
        self._utterances = 0
        self._too_short = 0
        self._floor = math.inf
        self._current: _Gathering | None = None

    @property
    def stats(self) -> VoiceStats:
        """The counts so far."""
        return VoiceStats(
            seconds=self._read / (SAMPLE_RATE * SAMPLE_BYTES),
            frames=self._frames,
            speech_frames=self._speech_frames,
            utterances=self._utterances,
            too_short=self._too_short,
        )

    def feed(self, pcm: bytes, now_ms: int) -> list[Utterance]:
        """Take the next samples, read at ``now_ms``; return the utterances they ended."""
        self._read += len(pcm)
        pending = self._pending
        pending += pcm
        whole = len(pending) - len(pending) % FRAME_BYTES
        if not whole:
            return []
        done: list[Utterance] = []
        view = memoryview(pending)
        try:
            for offset in range(0, whole, FRAME_BYTES):
                self._frame(bytes(view[offset : offset + FRAME_BYTES]), now_ms, done)
        finally:
            view.release()
        del pending[:whole]
        return done

    def flush(self, now_ms: int) -> Utterance | None:  # noqa: ARG002 (the protocol's signature)
        """End the stream: the utterance in progress, if its speech is long enough, with the
        whole samples of the last partial frame. The detector starts afresh after it."""
        current, pending = self._current, self._pending
        tail = bytes(pending[: len(pending) - len(pending) % SAMPLE_BYTES])
        self._current = None
        self._position += len(pending)
        self._pending.clear()
        self._preroll.clear()
        self._floor = math.inf
        if current is None:
            return None
        current.frames.append(tail)
        return self._finish(current)

    def _frame(self, frame: bytes, now_ms: int, done: list[Utterance]) -> None:
        """One whole frame: speech or not, the floor, the utterance it starts, extends or ends."""
        position = self._position
        self._position += FRAME_BYTES
        self._frames += 1
        energy = frame_energy(frame)
        floor = self._floor
        gate = max(self._threshold, floor * self._factor) if floor != math.inf else math.inf
        speech = energy >= gate
        self._floor = energy if energy < floor else floor + FLOOR_CREEP * (energy - floor)
        current = self._current
        if current is None:
            if not speech:
                self._preroll.append(frame)
                return
            first = position - len(self._preroll) * FRAME_BYTES
            current = _Gathering(self._started_ms(first, now_ms), [*self._preroll, frame])
            self._preroll.clear()
            self._current = current
        else:
            current.frames.append(frame)
        if speech:
            self._speech_frames += 1
            if current.first_speech < 0:
                current.first_speech = len(current.frames) - 1
            current.last_speech = len(current.frames) - 1
            current.ratios.append(energy / gate)
            current.silent = 0
        else:
            current.silent += 1
        if current.silent >= self._hangover:
            self._current = None
            self._emit(current, done)
        elif len(current.frames) >= self._max_frames:
            self._current = self._continuation(current, self._position, now_ms)
            self._emit(current, done)

    def _continuation(self, cut: _Gathering, first: int, now_ms: int) -> _Gathering | None:
        """What follows an utterance cut at the longest length: the next one, already begun
        (no pre-roll: the samples before it were handed on), unless it was in its hangover."""
        if cut.silent:
            return None
        return _Gathering(self._started_ms(first, now_ms), [])

    def _started_ms(self, position: int, now_ms: int) -> int:
        """When the byte at ``position`` in the stream was read, on the clock of ``now_ms``
        (the time of the last byte read)."""
        return now_ms - (self._read - position) // BYTES_PER_MS

    def _emit(self, current: _Gathering, done: list[Utterance]) -> None:
        utterance = self._finish(current)
        if utterance is not None:
            done.append(utterance)

    def _finish(self, current: _Gathering) -> Utterance | None:
        """The utterance, counted; or ``None``, counted as too short when it had speech."""
        if not current.ratios:
            return None
        speech_ms = (current.last_speech - current.first_speech + 1) * FRAME_MS
        if speech_ms < self._min_ms:
            self._too_short += 1
            return None
        self._utterances += 1
        return Utterance(
            source=self.source,
            pcm=b"".join(current.frames),
            started_ms=current.started_ms,
            quiet=statistics.median(current.ratios) < QUIET_RATIO,
        )
