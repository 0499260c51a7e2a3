"""The features the HTTP shell serves, reached from one place.

The shell (the app, the route table, ``/health``, ``/metrics``, the overlay's socket) knows
a feature only through this module: audio's ``POST /audio``, its ``/health.audio`` section,
its metric families and the overlay's switches; escalation's two routes, its answers, its
``/health.agent.escalation`` section and its metric families. A feature's own packages
(``transport/audio/``, ``transport/escalation/``) hold the code; adding a feature, or moving
one, changes this list and not the shell. ``sinain-relay doctor`` (:mod:`transport.doctor`)
reaches audio's settings, its speech request, its speech client and its source plans from
here too.
"""

from __future__ import annotations

from actors.audio.core.capture_records import SETTING_NAMES as AUDIO_SETTINGS
from actors.audio.core.sources import parse_source
from actors.audio.core.stt import SttConnectionError, stt_remedy
from actors.audio.core.stt import request_for as speech_request
from actors.audio.core.utterance import BYTES_PER_MS
from actors.audio.core.wav import WAV_HEADER_READ, wav_layout
from actors.audio.local_stt import LOAD_TIMEOUT_S as LOCAL_LOAD_TIMEOUT_S
from actors.audio.local_stt import LocalRecogniser
from actors.audio.speech_client import SpeechClient
from config.audio.settings import AudioConfig
from config.audio.stt_choice import LOCAL_STT_INSTALL
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
    "BYTES_PER_MS",
    "LOCAL_LOAD_TIMEOUT_S",
    "LOCAL_STT_INSTALL",
    "MAX_AUDIO_MS",
    "WAV_HEADER_READ",
    "WAV_TYPES",
    "AudioConfig",
    "AudioControl",
    "AudioFigures",
    "AudioHealth",
    "EscalationHealth",
    "LocalRecogniser",
    "PendingAnswer",
    "RespondAnswer",
    "SpeechClient",
    "SttConnectionError",
    "audio_families",
    "audio_health",
    "escalation_families",
    "get_pending",
    "parse_source",
    "post_audio",
    "post_respond",
    "speech_request",
    "stt_remedy",
    "wav_layout",
]
