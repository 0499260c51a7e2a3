"""A capture's runs, how one is opened and closed, and the messages its readers and timers
send it.

A run is one start of the source's process (or one replay of its file) with its reader
threads; its first audio, its end and the watch over it come back to the actor as these
messages, so that the actor's state is touched on its own thread only.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from actors.audio.core.sources import SourcePlan
from actors.audio.core.utterance import Detector
from actors.audio.core.wav import WAV_HEADER_READ, wav_layout
from actors.audio.reader import paced
from actors.kernel import processes
from config.options import SECRET_VARIABLES


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


def open_run(run: Run, file_speed: float) -> Callable[[int], bytes]:
    """Start the run's process (or open its WAV file, paced at ``file_speed``); the function
    that reads its PCM.

    Raises:
        OSError: the program or the file could not be started or opened.
    """
    path = run.plan.path
    if path is not None:
        with open(path, "rb") as probe:
            layout = wav_layout(probe.read(WAV_HEADER_READ))
        if layout is not None:
            wav = open(path, "rb")  # noqa: SIM115 - closed by the reader at its end
            wav.seek(layout.offset)
            return paced(wav, layout.length, file_speed, run.halt)
    process = run.process = processes.spawn(run.plan.argv, hidden=SECRET_VARIABLES)
    assert process.stdout is not None  # spawn pipes it
    fd = process.stdout.fileno()
    return lambda size: os.read(fd, size)


def close_run(run: Run, *, broken: bool, grace_s: float) -> int | None:
    """The run's exit code, its process ended: it may have closed its stdout and still run,
    or be running still because the reader broke (ended after ``grace_s``, or at once when
    ``broken``)."""
    process = run.process
    if process is None:
        return 0
    try:
        code: int | None = process.wait(timeout=0 if broken else grace_s)
    except subprocess.TimeoutExpired:
        code = processes.end(process, grace_s)
    if process.stdout is not None:
        process.stdout.close()
    for thread in run.threads[1:]:
        thread.join(timeout=1.0)  # the last stderr line is in before the end is told
    return code
