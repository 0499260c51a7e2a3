"""What a capture's reader threads do, off the actor's thread: PCM in chunks into the run's
detector, each utterance handed on, the counters ``/health`` shows, the process's last stderr
line, and a WAV file read at the pace it was recorded.

The capture actor (:mod:`actors.audio.capture`) starts them per run and hears only that the
first audio came and that the run ended; the audio never passes through its mailbox.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO

from actors.audio.core.utterance import BYTES_PER_MS, Detector, Utterance
from actors.core.error_text import safe_error_text, safe_text
from actors.kernel.clock import Clock

MAX_STDERR_CHARS = 300
MAX_STDERR_LINE = 4096
"""Bytes of one stderr line read at once (a longer line is read in pieces)."""


class Meter:
    """What the readers count and the actor shows, behind one lock."""

    def __init__(self, now: float) -> None:
        self.lock = threading.Lock()
        self.captured_bytes = 0
        self.speech_ms = 0
        """The length of the utterances handed on."""
        self.utterances = 0
        self.last_audio = now
        """When audio last came, on the injected clock's monotonic seconds."""
        self.last_stderr = ""

    def note_stderr(self, text: str) -> None:
        """Keep ``text`` as the last stderr line (made safe, cut)."""
        safe = safe_text(text)[:MAX_STDERR_CHARS]
        with self.lock:
            self.last_stderr = safe


class PcmReader:
    """Reads one run's PCM into its detector and hands each utterance on."""

    def __init__(
        self,
        *,
        detector: Detector,
        meter: Meter,
        clock: Clock,
        chunk_ms: int,
        hand_on: Callable[[Utterance], None],
        log: Any,
    ) -> None:
        self._detector = detector
        self._meter = meter
        self._clock = clock
        self._size = BYTES_PER_MS * chunk_ms
        self._hand_on = hand_on
        self._log = log

    def run(
        self, read: Callable[[int], bytes], halt: threading.Event, first: Callable[[], None]
    ) -> str | None:
        """Read until ``read`` gives nothing or ``halt`` is set, calling ``first`` when the
        first audio comes; then hand on the utterance in progress. Why the reading broke,
        if it was not the end of the stream."""
        carry, error, heard = b"", None, False
        try:
            while not halt.is_set():
                data = read(self._size)
                if not data:
                    break
                if not heard:
                    heard = True
                    first()
                cut = len(carry) + len(data)
                pcm = carry + data
                pcm, carry = pcm[: cut - cut % 2], pcm[cut - cut % 2 :]  # whole samples only
                with self._meter.lock:
                    self._meter.captured_bytes += len(pcm)
                    self._meter.last_audio = self._clock.monotonic()
                for utterance in self._detector.feed(pcm, self._clock.now_ms()):
                    self._give(utterance)
        except Exception as exc:  # a detector that raised: this run ends, the next one starts
            error = safe_error_text(exc)
            self._log.exception("capture.reader_failed")
        try:
            last = self._detector.flush(self._clock.now_ms())
        except Exception:  # the run is over either way; its last utterance is lost
            last = None
        if last is not None:
            self._give(last)
        return error

    def _give(self, utterance: Utterance) -> None:
        with self._meter.lock:
            self._meter.utterances += 1
            self._meter.speech_ms += utterance.duration_ms
        try:
            self._hand_on(utterance)
        except Exception:  # keeps the reader reading: one lost utterance, not the source
            self._log.exception("capture.utterance_undelivered")


def keep_last_line(stream: BinaryIO, meter: Meter) -> None:
    """Read a process's stderr to its end, keeping its last non-empty line in ``meter``."""
    with stream:
        for raw in iter(lambda: stream.readline(MAX_STDERR_LINE), b""):
            line = raw.decode("utf-8", "replace").strip()
            if line:
                meter.note_stderr(line)


def paced(
    wav: BinaryIO, length: int, speed: float, halt: threading.Event
) -> Callable[[int], bytes]:
    """A reader of ``length`` bytes of ``wav`` that gives each chunk when it would have been
    heard, at ``speed`` times real time, until ``halt`` is set; the file is closed at its end.

    The pace is the recording's, so it is kept on the real clock, not the injected one.
    """
    began, given = time.monotonic(), 0

    def read(size: int) -> bytes:
        nonlocal given
        size = min(size, length - given)
        due = began + (given + size) / (BYTES_PER_MS * 1000) / speed
        if size <= 0 or halt.wait(max(due - time.monotonic(), 0.0)):
            wav.close()
            return b""
        data = wav.read(size)
        given = length if len(data) < size else given + len(data)
        if not data:
            wav.close()
        return data

    return read
