"""What a source value (``AUDIO_SOURCE``, ``MIC_SOURCE``, ``AUDIO_ALT_SOURCE``) asks the relay
to run, as a plan the capture actor (:mod:`actors.audio.capture`) follows.

The forms, each ``KIND:REST``:

* ``command:ARGV``: a program of the user's that writes 16 kHz mono signed 16-bit
  little-endian PCM to its stdout (Sinain's ``sck-capture --sample-rate 16000 --channels 1``
  on macOS). ``ARGV`` is split as a POSIX shell would split it (:func:`shlex.split`: quotes and
  backslashes), but no shell runs it: no globbing, no variables, no pipes.
* ``avfoundation:DEVICE`` (macOS), ``pulse:DEVICE`` (Linux PulseAudio or PipeWire; a
  ``.monitor`` source is what the speakers play), ``alsa:DEVICE`` (Linux): ffmpeg reads the
  device and writes the PCM the relay reads.
* ``file:PATH``: a recording replayed at real speed. A 16 kHz mono 16-bit WAV is read by the
  relay itself (no ffmpeg needed: :func:`actors.audio.core.wav.wav_layout`); any other file
  goes through ffmpeg, paced by ``-re``.

Parsing is pure and checks the form only. Whether the program, the device or the file is there
is known by trying: the capture actor retries and then says once that it failed.
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass
from typing import Final, Literal, get_args

from actors.audio.core.utterance import SAMPLE_RATE
from config.audio.settings import AudioConfig

SourceKind = Literal["command", "avfoundation", "pulse", "alsa", "file"]
SOURCE_KINDS: Final[tuple[SourceKind, ...]] = get_args(SourceKind)
DEVICE_KINDS: Final[tuple[SourceKind, ...]] = ("avfoundation", "pulse", "alsa")
"""The kinds ffmpeg reads from a sound device (``-f KIND``)."""

FFMPEG: Final = "ffmpeg"
_FFMPEG_HEAD: Final = ("-nostdin", "-hide_banner", "-loglevel", "error")
_FFMPEG_TAIL: Final = ("-vn", "-ac", "1", "-ar", str(SAMPLE_RATE), "-f", "s16le", "pipe:1")
"""What every ffmpeg plan ends with: one channel at 16 kHz, raw s16le on stdout."""


class SourceError(ValueError):
    """A source value that is not one of the forms; the message names the setting.

    A :class:`ValueError`, like the settings' own ``ConfigError``: start-up validation turns it
    into one (``check_source``), and a ``switch`` asked with a bad value answers it.
    """


_WANTS: Final[dict[str, str]] = {
    "command": "a program",
    "avfoundation": "a device (a number or a name, as ffmpeg -list_devices lists it)",
    "pulse": "a source (default, or a name pactl list sources short prints)",
    "alsa": "a device (default, hw:1,0 ...)",
    "file": "a path",
}


@dataclass(frozen=True, slots=True)
class SourcePlan:
    """What to run for one source value."""

    kind: SourceKind
    target: str
    """The device, the path, or the command line as written."""
    argv: tuple[str, ...]
    """The program and its arguments (``ffmpeg ...`` for the device kinds and for a file that
    is not a 16 kHz mono WAV); run without a shell."""

    @property
    def path(self) -> str | None:
        """The file a ``file:`` plan replays."""
        return self.target if self.kind == "file" else None


def parse_source(value: str, name: str = "AUDIO_SOURCE") -> SourcePlan:
    """The plan for ``value``.

    Raises:
        SourceError: ``value`` is not ``KIND:REST`` with a known kind and something after the
            colon, or its command line does not split (an unclosed quote); the message names
            ``name`` and quotes the value.
    """
    kind, colon, rest = value.partition(":")
    kind = kind.strip().lower()
    forms = ", ".join(f"{k}:..." for k in SOURCE_KINDS)
    if not colon or kind not in SOURCE_KINDS:
        raise SourceError(f"{name} must be one of {forms}, got {value!r}")
    target = rest.strip()
    if not target:
        raise SourceError(f"{name}: {kind}: needs {_WANTS[kind]} after the colon, got {value!r}")
    if kind == "command":
        try:
            argv = tuple(shlex.split(target))
        except ValueError as exc:
            raise SourceError(
                f"{name}: the command line does not split ({exc}): {value!r}"
            ) from None
        if not argv:
            raise SourceError(f"{name}: command: needs a program after the colon, got {value!r}")
        return SourcePlan("command", target, argv)
    if kind == "file":
        return SourcePlan("file", target, file_argv(target))
    return SourcePlan(kind, target, device_argv(kind, target))


def check_source(name: str, value: str) -> None:
    """Start-up validation of the setting ``name``: an empty value (nothing captured) passes,
    anything else must parse, a ``file:`` must be readable and a ``command:``'s program on
    ``PATH``: a source that cannot work stops the start, rather than failing seconds later.

    Raises:
        SourceError: see :func:`parse_source`; or the file or the program is not there.
    """
    if not value.strip():
        return
    plan = parse_source(value, name)
    if plan.kind == "file" and not os.access(plan.target, os.R_OK):
        where = os.path.abspath(plan.target)
        why = "cannot be read" if os.path.exists(plan.target) else "does not exist"
        msg = f"{name}: file:{plan.target}: {where} {why}; give a file the relay's user can read"
        raise SourceError(msg)
    if plan.kind == "command" and shutil.which(plan.argv[0]) is None:
        msg = (
            f"{name}: command:{plan.argv[0]} is not a program on PATH; install it or give its "
            "full path"
        )
        raise SourceError(msg)


def check_sources(config: AudioConfig) -> None:
    """Start-up validation of every source setting (:func:`check_source`).

    Raises:
        SourceError: the first value that is not a source, named by its setting.
    """
    for name, value in (
        ("AUDIO_SOURCE", config.source),
        ("MIC_SOURCE", config.mic_source),
        ("AUDIO_ALT_SOURCE", config.alt_source),
    ):
        check_source(name, value)


def device_argv(kind: SourceKind, device: str) -> tuple[str, ...]:
    """ffmpeg reading ``device`` through its ``kind`` input; avfoundation's audio-only form is
    ``:DEVICE`` (no video device)."""
    source = f":{device}" if kind == "avfoundation" else device
    return (FFMPEG, *_FFMPEG_HEAD, "-f", kind, "-i", source, *_FFMPEG_TAIL)


def file_argv(path: str) -> tuple[str, ...]:
    """ffmpeg replaying ``path`` at its own speed (``-re``) as 16 kHz mono PCM."""
    return (FFMPEG, *_FFMPEG_HEAD, "-re", "-i", path, *_FFMPEG_TAIL)
