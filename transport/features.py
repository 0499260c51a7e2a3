"""The features the HTTP shell serves, reached from one place.

The shell (the app, the route table, ``/health``, ``/metrics``, the overlay's socket) knows
a feature only through this module: audio's ``POST /audio``, its ``/health.audio`` section,
its metric families and the overlay's switches; escalation's two routes, its answers, its
``/health.agent.escalation`` section and its metric families. A feature's own packages
(``transport/audio/``, ``transport/escalation/``) hold the code; adding a feature, or moving
one, changes this list and not the shell.
"""

from __future__ import annotations

from actors.audio.core.capture_records import SETTING_NAMES as AUDIO_SETTINGS
from transport.audio.answers import AudioHealth
from transport.audio.control import AudioControl
from transport.audio.exposition import AudioFigures, audio_families
from transport.audio.handler import AUDIO_BODY_LIMIT, MAX_AUDIO_MS, WAV_TYPES, post_audio
from transport.audio.health import audio_health
from transport.escalation.answers import EscalationHealth, PendingAnswer, RespondAnswer
from transport.escalation.exposition import escalation_families
from transport.escalation.handler import get_pending, post_respond

__all__ = [
    "AUDIO_BODY_LIMIT",
    "AUDIO_SETTINGS",
    "MAX_AUDIO_MS",
    "WAV_TYPES",
    "AudioControl",
    "AudioFigures",
    "AudioHealth",
    "EscalationHealth",
    "PendingAnswer",
    "RespondAnswer",
    "audio_families",
    "audio_health",
    "escalation_families",
    "get_pending",
    "post_audio",
    "post_respond",
]
