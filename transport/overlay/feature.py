"""The overlay, as the HTTP shell takes it: its WebSocket and its switches."""

from __future__ import annotations

from typing import Literal

from transport.host.feature import Parts
from transport.host.route import Param, Route, ok
from transport.overlay.handler import get_ws, post_overlay_command
from transport.shell.answers import CommandAnswer

OVERLAY = Parts(
    "overlay",
    (
        Route(
            "POST",
            "/overlay/command",
            post_overlay_command,
            "Work one of the overlay's switches, as the overlay would",
            ok(CommandAnswer, "Done: the line the overlay shows for it."),
            ("BadRequest",),
            "With `AUDIO_SOURCE` or `MIC_SOURCE` set, `toggle_audio` stops every capture or starts "
            "them again, and `switch_device` swaps `AUDIO_SOURCE` for `AUDIO_ALT_SOURCE`; every "
            "overlay is told. Otherwise, and for `toggle_screen`, the line says the capture "
            "clients own the switch. It reads no body.",
            params=(
                Param(
                    "action",
                    Literal["toggle_audio", "switch_device", "toggle_screen"],
                    "The switch.",
                    required=True,
                ),
            ),
        ),
        Route(
            "GET",
            "/ws",
            get_ws,
            "The overlay's WebSocket (upgrade), at /ws",
            errors=("UpgradeRequired",),
            socket=True,
        ),
    ),
)
