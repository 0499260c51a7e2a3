"""The overlay's audio switches, as the shell hands them over: whichever feature captures
audio makes them (its :class:`~transport.host.feature.Feature`'s ``switches``), and the
overlay's commands work them knowing no feature."""

from __future__ import annotations

from typing import Protocol


class Switched(Protocol):
    """What a switch did: its line for the overlay, and whether every overlay is told."""

    @property
    def text(self) -> str: ...
    @property
    def everyone(self) -> bool: ...


class Switches(Protocol):
    """The switches ``toggle_audio`` and ``switch_device`` work."""

    @property
    def capturing(self) -> bool:
        """The relay captures a source itself: the switches are its own."""
        ...

    @property
    def paused(self) -> bool:
        """Every capture is stopped (the overlay's ``audio`` status is then ``muted``)."""
        ...

    async def toggle(self) -> Switched: ...
    async def switch(self) -> Switched: ...
