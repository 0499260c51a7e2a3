"""The overlay's audio switches: ``toggle_audio`` stops or starts every capture, and
``switch_device`` swaps the system source to ``AUDIO_ALT_SOURCE`` and back, as they do with
Sinain's own core. Without a configured source the capture clients own the switches, and the
overlay is told so."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from actors.audio.capture import Capture
from actors.audio.core.capture_records import CaptureStatus
from actors.audio.subtree import AudioHandles, AudioViews, configured
from actors.core.errors import ActorUnavailable
from actors.core.shapes import AudioSource
from config.audio.settings import AudioConfig
from transport.shell.bridge import Asker

STOPPED = "Audio capture stopped"
STARTED = "Audio capture started"
NO_ALT = "No other audio device is set: set AUDIO_ALT_SOURCE to switch to it."
RESTARTING = "⚠ Audio capture is restarting; try again in a moment."
PAUSED = "Capture is paused (POST /privacy): audio starts again when the pause ends."


@dataclass(frozen=True, slots=True)
class SwitchAnswer:
    """What a switch did, in the overlay's words; ``everyone``: every overlay is told (the
    state of capture changed), else only the one that asked."""

    text: str
    everyone: bool


class AudioControl:
    """Acts on the overlay's audio switches through the capture actors."""

    def __init__(
        self,
        config: AudioConfig,
        handles: AudioHandles,
        views: AudioViews,
        ask: Asker,
        held: Callable[[], bool] = lambda: False,
    ) -> None:
        """``held``: whether the privacy controls pause capture now (the switch then says so
        and changes nothing)."""
        self._sources: tuple[AudioSource, ...] = tuple(configured(config))
        self._alt = bool(config.alt_source) and "system" in self._sources
        self._handles = handles
        self._views = views
        self._ask = ask
        self._held = held

    @property
    def capturing(self) -> bool:
        """The relay captures a source: the switches are its own."""
        return bool(self._sources)

    @property
    def paused(self) -> bool:
        """Every configured capture is paused (the overlay's ``audio`` status is ``muted``)."""
        states = [self._views.captures[s].value.state for s in self._sources]
        return bool(states) and all(state == "paused" for state in states)

    async def toggle(self) -> SwitchAnswer:
        """Stop every capture, or start them all again when every one is stopped."""
        if self._held():
            return SwitchAnswer(PAUSED, everyone=False)
        pause = not self.paused
        try:
            for source in self._sources:
                handle = self._handles.captures[source]
                await self._ask(handle, Capture.pause if pause else Capture.resume)
        except ActorUnavailable:
            return SwitchAnswer(RESTARTING, everyone=False)
        return SwitchAnswer(STOPPED if pause else STARTED, everyone=True)

    async def switch(self) -> SwitchAnswer:
        """Capture ``AUDIO_ALT_SOURCE`` instead of ``AUDIO_SOURCE``, or back."""
        if not self._alt:
            return SwitchAnswer(NO_ALT, everyone=False)
        try:
            status: CaptureStatus = await self._ask(self._handles.captures["system"], Capture.swap)
        except ActorUnavailable:
            return SwitchAnswer(RESTARTING, everyone=False)
        return SwitchAnswer(f"Audio device → {_named(status)}", everyone=True)


def _named(status: CaptureStatus) -> str:
    """The source captured now, by its setting (a ``command:`` may hold private arguments)."""
    setting = "AUDIO_ALT_SOURCE" if status.alt else "AUDIO_SOURCE"
    return f"{setting} ({status.kind})"
