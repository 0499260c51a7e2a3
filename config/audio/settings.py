"""The audio settings: what the relay captures, how it finds speech in it, and which speech
service turns speech into text (each field declared once, as :mod:`config.settings` says).
What the command line makes of what was given (the local recogniser, its model, the LLM key
for a speech service of its origin) is the feature's: :mod:`config.audio.stt_choice`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal, get_args

from msgspec import Meta

from config.common.setting_types import ApiKey, NonNegativeInt, PositiveInt, PositiveNumber, Text

SttApi = Literal["chat", "openai", "local"]
"""How speech becomes text: ``chat`` sends the audio as an ``input_audio`` part of a chat
completion (OpenRouter with Gemini); ``openai`` posts it to ``/audio/transcriptions`` as
multipart (OpenAI, Groq, whisper.cpp's server, speaches, LocalAI, vLLM); ``local`` recognises
it on this machine, with a Whisper model through faster-whisper (the ``local-stt`` extra)."""
STT_APIS: tuple[SttApi, ...] = get_args(SttApi)
DEFAULT_STT_BASE_URL = "https://openrouter.ai/api/v1"
DEFAULT_STT_MODEL = "google/gemini-2.5-flash"


@dataclass(frozen=True, slots=True)
class AudioConfig:
    """The audio part of the settings. Both sources are off until named."""

    source: Annotated[
        Text,
        Meta(
            description="what the user hears (system audio): command:ARGV, avfoundation:DEVICE, "
            "pulse:DEVICE, alsa:DEVICE or file:PATH",
            extra={"env": "AUDIO_SOURCE", "flag": "audio_source"},
        ),
    ] = ""
    """Empty: not captured."""
    mic_source: Annotated[
        Text,
        Meta(
            description="what the user says (the microphone), in the same forms",
            extra={"env": "MIC_SOURCE"},
        ),
    ] = ""
    """Empty: not captured."""
    alt_source: Annotated[
        Text,
        Meta(
            description="the system source the overlay's switch_device swaps to and back from",
            extra={"env": "AUDIO_ALT_SOURCE", "flag": "audio_alt_source"},
        ),
    ] = ""
    language: Annotated[
        Text,
        Meta(
            description="the language spoken",
            extra={"env": "AUDIO_LANGUAGE", "flag": "audio_language"},
        ),
    ] = "en"
    """The language the speech service is told to expect."""
    stt_api: Annotated[
        SttApi,
        Meta(
            description="how speech becomes text: chat (input_audio in a chat completion), "
            "openai (/audio/transcriptions) or local (this machine, the local-stt extra)",
            extra={"env": "STT_API"},
        ),
    ] = "chat"
    stt_base_url: Annotated[
        Text, Meta(description="the speech service", extra={"env": "STT_BASE_URL"})
    ] = DEFAULT_STT_BASE_URL
    stt_model: Annotated[Text, Meta(description="the speech model", extra={"env": "STT_MODEL"})] = (
        DEFAULT_STT_MODEL
    )
    stt_api_key: Annotated[
        ApiKey,
        Meta(
            description="the speech service's key; unset: OPENROUTER_API_KEY if STT_BASE_URL "
            "has AGENT_BASE_URL's origin, else none",
            extra={"env": "STT_API_KEY", "secret": True},
        ),
    ] = ""
    """Empty: none, and nothing is sent."""
    stt_timeout_ms: Annotated[
        PositiveInt,
        Meta(
            description="bound on one transcription request, in ms",
            extra={"env": "STT_TIMEOUT_MS"},
        ),
    ] = 30_000
    stt_max_in_flight: Annotated[
        PositiveInt,
        Meta(
            description="utterances transcribed at once at most; one more is dropped and counted",
            extra={"env": "STT_MAX_IN_FLIGHT"},
        ),
    ] = 5
    preroll_ms: Annotated[
        NonNegativeInt,
        Meta(
            description="audio kept before an utterance's first speech frame, in ms",
            extra={"env": "AUDIO_PREROLL_MS", "flag": "audio_preroll_ms"},
        ),
    ] = 300
    hangover_ms: Annotated[
        PositiveInt,
        Meta(
            description="silence that ends an utterance, in ms",
            extra={"env": "AUDIO_VAD_HANGOVER_MS", "flag": "audio_vad_hangover_ms"},
        ),
    ] = 700
    min_utterance_ms: Annotated[
        PositiveInt,
        Meta(
            description="shorter utterances are dropped, in ms",
            extra={"env": "AUDIO_MIN_SEGMENT_MS", "flag": "audio_min_segment_ms"},
        ),
    ] = 300
    max_utterance_ms: Annotated[
        PositiveInt,
        Meta(
            description="longer speech is cut into utterances this long, in ms",
            extra={"env": "AUDIO_MAX_SEGMENT_MS", "flag": "audio_max_segment_ms"},
        ),
    ] = 18_000
    speech_factor: Annotated[
        PositiveNumber,
        Meta(
            description="a frame is speech at this many times the noise floor",
            extra={"env": "AUDIO_VAD_SPEECH_FACTOR", "flag": "audio_vad_speech_factor"},
        ),
    ] = 3.5
    """And over the source's threshold."""
    system_threshold: Annotated[
        PositiveNumber,
        Meta(
            description="the least RMS (of full scale) of a system-audio speech frame",
            extra={"env": "AUDIO_VAD_THRESHOLD", "flag": "audio_vad_threshold"},
        ),
    ] = 0.001
    mic_threshold: Annotated[
        PositiveNumber,
        Meta(
            description="the least RMS (of full scale) of a microphone speech frame",
            extra={"env": "MIC_VAD_THRESHOLD", "flag": "mic_vad_threshold"},
        ),
    ] = 0.008

    @property
    def capturing(self) -> bool:
        """A source is configured."""
        return bool(self.source or self.mic_source)

    @property
    def local(self) -> bool:
        """Speech is recognised on this machine (no service, no key)."""
        return self.stt_api == "local"

    @property
    def can_transcribe(self) -> bool:
        """Utterances go somewhere: to the local recogniser, or to a service with a key."""
        return self.local or bool(self.stt_api_key)
