"""The audio feature, as the HTTP shell takes it: ``POST /audio``, ``/health.audio``, its
metric families and checks, the overlay's audio switches, and the settings that start its
captures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from actors.audio.core.capture_records import SETTING_NAMES
from transport.audio.answers import AudioHealth
from transport.audio.control import AudioControl
from transport.audio.doctor import audio_checks
from transport.audio.handler import AUDIO_BODY_LIMIT, MAX_AUDIO_MS, WAV_TYPES, post_audio
from transport.audio.health import read_audio
from transport.host.feature import HealthSection, Parts
from transport.host.route import INGEST_ERRORS, Param, Route, ok
from transport.shell.answers import Transcribed

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from transport.shell.bridge import Asker
    from transport.shell.state import Peers


async def audio_metrics(peers: Peers, ask: Asker) -> tuple[Metric, ...]:  # noqa: ARG001
    """The captures' and the transcriber's families, from what they last published
    (:mod:`transport.audio.exposition`, imported at the first scrape with prometheus-client)."""
    from transport.audio.exposition import AudioFigures, audio_families  # noqa: PLC0415

    return tuple(audio_families(AudioFigures.read(peers.audio_views, peers.audio_config)))


def audio_switches(peers: Peers, ask: Asker) -> AudioControl:
    """The overlay's audio switches, worked through the captures."""

    def held() -> bool:
        return peers.privacy.value.paused_at(peers.clock.now_ms())

    return AudioControl(peers.audio_config, peers.audio, peers.audio_views, ask, held)


AUDIO = Parts(
    "audio",
    (
        Route(
            "POST",
            "/audio",
            post_audio,
            "Transcribe one utterance recorded on another device into the feed",
            ok(Transcribed, "Transcribed: the stored item, or why nothing was stored."),
            (*INGEST_ERRORS, "BadGateway"),
            "A phone or a wearable posts what it recorded: a 16 kHz mono 16-bit WAV, or raw PCM as "
            "`audio/L16; rate=16000; channels=1` (big-endian samples), at most "
            f"{MAX_AUDIO_MS // 1000} s. It goes through the transcriber, the filters and the feed "
            "as captured audio does, marked as `source` says (`mic`: `[🎙] `, the default; "
            "`system`: `[🔊] `), and the answer waits for the transcript. A 503 with "
            "`Retry-After` when the transcriber takes no utterance now (every slot taken, or the "
            "speech service failing), a 503 without one when no speech service key is set, a 502 "
            "when the service failed. Other audio (another rate, stereo, 8-bit, compressed) is a "
            "400; another media type a 415.",
            params=(
                Param(
                    "source",
                    Literal["mic", "system"],
                    "Whose words: `mic`, what the user said (the default), or `system`, what the "
                    "user heard.",
                ),
            ),
            body_limit=AUDIO_BODY_LIMIT,
            body_media=(*WAV_TYPES, "audio/L16"),
        ),
    ),
    health=(HealthSection("audio", AudioHealth, read_audio),),
    families=audio_metrics,
    checks=audio_checks,
    switches=audio_switches,
    set_by=tuple((f"capture_{source}", name) for source, name in SETTING_NAMES.items()),
)
