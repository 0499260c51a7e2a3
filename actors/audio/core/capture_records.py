"""What a capture is and shows: its settings, its states and the status ``/health`` reads.

Plain records, so that ``/health``, ``/metrics`` and the overlay read a capture's status
without knowing the actor (:mod:`actors.audio.capture`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from actors.audio.core.utterance import Detector, Utterance
from actors.core.shapes import AudioSource

CaptureState = Literal["starting", "running", "backoff", "paused", "failed", "stopped"]
"""``starting`` (no audio yet from this run), ``running``, ``backoff`` (waiting to restart),
``paused`` (the overlay turned it off), ``failed`` (gave up), ``stopped`` (a file's end)."""
DetectorFactory = Callable[[], Detector]
UtteranceSink = Callable[[Utterance], None]
SETTING_NAMES: dict[AudioSource, str] = {"system": "AUDIO_SOURCE", "mic": "MIC_SOURCE"}


@dataclass(frozen=True, slots=True)
class CaptureSettings:
    """How a capture restarts, watches and reads its process."""

    backoff_s: float = 0.5
    """The first restart's delay; each restart in a row doubles it."""
    max_backoff_s: float = 30.0
    healthy_s: float = 30.0
    """A run that gave audio this long resets the backoff to its first step."""
    attempts: int = 5
    """Runs in a row without any audio before the source is ``failed``."""
    stall_s: float = 10.0
    """No audio this long from a running process: it is stuck, and restarted."""
    stop_grace_s: float = 2.0
    """Between ``SIGTERM`` and ``SIGKILL`` when a process is ended."""
    chunk_ms: int = 100
    """How much audio the reader asks for at once."""
    file_speed: float = 1.0
    """How many times real time a WAV file is replayed (tests replay faster)."""


@dataclass(frozen=True, slots=True)
class CaptureStatus:
    """A capture's state for ``/health``."""

    source: AudioSource
    kind: str
    """The source value's kind: ``command``, ``pulse``, ``file`` ..."""
    state: CaptureState
    pid: int | None
    restarts: int
    last_exit: int | None
    """The last run's exit code (negative: the signal that ended it)."""
    last_stderr: str
    """The last line the process wrote to stderr, or why it could not start."""
    captured_s: float
    speech_share: float
    """Of the audio captured, the share that was in utterances."""
    utterances: int
    alt: bool = False
    """The alternative value (``AUDIO_ALT_SOURCE``) is being captured."""


def not_started(source: AudioSource) -> CaptureStatus:
    """The status of a capture before its actor first publishes one."""
    return CaptureStatus(
        source=source,
        kind="",
        state="starting",
        pid=None,
        restarts=0,
        last_exit=None,
        last_stderr="",
        captured_s=0.0,
        speech_share=0.0,
        utterances=0,
    )
