"""A capture's runs, and the messages its readers and timers send it.

A run is one start of the source's process (or one replay of its file) with its reader
threads; its first audio, its end and the watch over it come back to the actor as these
messages, so that the actor's state is touched on its own thread only.
"""

from __future__ import annotations

import subprocess
import threading
from dataclasses import dataclass, field

from actors.audio.core.sources import SourcePlan
from actors.audio.core.utterance import Detector


@dataclass(frozen=True, slots=True)
class Refresh:
    """Time to publish the counters again."""


@dataclass(frozen=True, slots=True)
class FirstAudio:
    """The run's first audio arrived."""

    run: int


@dataclass(frozen=True, slots=True)
class Ended:
    """The run ended by itself (its reader reached the end): its exit code."""

    run: int
    code: int | None
    error: str | None = None
    """What broke the reader (the detector raised), if it was not the process."""


@dataclass(frozen=True, slots=True)
class Launch:
    """A backoff is over: start the next run, unless a switch voided it."""

    generation: int


@dataclass(frozen=True, slots=True)
class Watch:
    """Look whether the run stalled (no audio for the stall time)."""

    run: int


@dataclass(slots=True)
class Run:
    """One start of the source's process (or one replay of its file), on the actor's thread."""

    id: int
    plan: SourcePlan
    detector: Detector
    started: float
    process: subprocess.Popen[bytes] | None = None
    halt: threading.Event = field(default_factory=threading.Event)
    """Set when the run is ended on purpose (a file's reader stops at once)."""
    threads: tuple[threading.Thread, ...] = ()
    heard: bool = False


@dataclass(frozen=True, slots=True)
class PrivacyChanged:
    """The privacy controls changed: a pause may have begun or ended."""
