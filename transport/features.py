"""What the HTTP shell still reaches of the audio and escalation features beyond their
:class:`~transport.host.feature.Feature`, in one place: audio's ``/health.audio`` section, the
overlay's switches and its settings' names for the fault drill; escalation's
``/health.agent.escalation`` section. Their routes, metric families and checks come through
the registry (:mod:`transport.registry`).
"""

from __future__ import annotations

from actors.audio.core.capture_records import SETTING_NAMES as AUDIO_SETTINGS
from transport.audio.answers import AudioHealth
from transport.audio.control import AudioControl
from transport.audio.health import audio_health
from transport.escalation.answers import EscalationHealth

__all__ = [
    "AUDIO_SETTINGS",
    "AudioControl",
    "AudioHealth",
    "EscalationHealth",
    "audio_health",
]
