"""The audio settings: what the relay captures, how it finds speech in it, and which speech
service turns speech into text."""

from __future__ import annotations

import importlib.util
import ipaddress
from dataclasses import dataclass
from typing import Literal, get_args
from urllib.parse import urlsplit

from config.paths import model_path as model_path  # noqa: PLC0414

SttApi = Literal["chat", "openai", "local"]
"""How speech becomes text: ``chat`` sends the audio as an ``input_audio`` part of a chat
completion (OpenRouter with Gemini); ``openai`` posts it to ``/audio/transcriptions`` as
multipart (OpenAI, Groq, whisper.cpp's server, speaches, LocalAI, vLLM); ``local`` recognises
it on this machine, with a Whisper model through faster-whisper (the ``local-stt`` extra)."""
STT_APIS: tuple[SttApi, ...] = get_args(SttApi)
DEFAULT_STT_BASE_URL = "https://openrouter.ai/api/v1"
DEFAULT_STT_MODEL = "google/gemini-2.5-flash"
DEFAULT_LOCAL_MODEL = "tiny.en"
"""The Whisper model ``local`` uses unless ``STT_MODEL`` names another (or a directory)."""
MULTILINGUAL_LOCAL_MODEL = "tiny"
"""The default local model for a language other than English (``.en`` models hear English
only: Whisper would take any other speech for English)."""
LOCAL_STT_MODULE = "faster_whisper"
"""What the ``local-stt`` extra installs, and ``local`` needs."""
LOCAL_STT_INSTALL = "pip install 'sinain-relay[local-stt]'"
DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class AudioConfig:
    """The audio part of the settings. Both sources are off until named."""

    source: str = ""
    """What the user hears (system audio): ``command:ARGV``, ``avfoundation:DEVICE``,
    ``pulse:DEVICE``, ``alsa:DEVICE`` or ``file:PATH``; empty: not captured."""
    mic_source: str = ""
    """What the user says (the microphone), in the same forms; empty: not captured."""
    alt_source: str = ""
    """The system source the overlay's ``switch_device`` swaps to and back from; empty: none."""
    language: str = "en"
    """The language the speech service is told to expect."""
    stt_api: SttApi = "chat"
    stt_base_url: str = DEFAULT_STT_BASE_URL
    stt_model: str = DEFAULT_STT_MODEL
    stt_api_key: str = ""
    """The speech service's key. ``STT_API_KEY``, or else the LLM key (``OPENROUTER_API_KEY``)
    when the speech service has the LLM's origin (:func:`same_origin`); empty: none, and
    nothing is sent."""
    stt_timeout_ms: int = 30_000
    """Bound on one transcription request, end to end."""
    stt_max_in_flight: int = 5
    """Utterances being transcribed at once at most; one more is dropped and counted."""
    preroll_ms: int = 300
    """Audio kept before the first speech frame of an utterance."""
    hangover_ms: int = 700
    """Silence that ends an utterance."""
    min_utterance_ms: int = 300
    """Shorter utterances are dropped."""
    max_utterance_ms: int = 18_000
    """Longer speech is cut into utterances of this length."""
    speech_factor: float = 3.5
    """A frame is speech when its energy is this many times the noise floor (and over the
    source's threshold)."""
    system_threshold: float = 0.001
    """The least RMS energy (of full scale) of a speech frame of system audio."""
    mic_threshold: float = 0.008
    """The least RMS energy (of full scale) of a speech frame of the microphone."""

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


def local_stt_installed() -> bool:
    """Whether faster-whisper can be imported (it is not imported here)."""
    return importlib.util.find_spec(LOCAL_STT_MODULE) is not None


def origin(url: str) -> tuple[str, str, int] | None:
    """``url``'s origin, as compared: the scheme and the host in lower case, an IP address
    in its shortest form, the port with the scheme's default filled in; ``None`` for what is
    not an ``http`` or ``https`` URL with a host."""
    try:
        parts = urlsplit(url.strip())
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
    except ValueError:  # a port that is not a number or out of range, a bad IPv6 literal
        return None
    if scheme not in DEFAULT_PORTS or not host:
        return None
    try:
        host = ipaddress.ip_address(host).compressed
    except ValueError:
        host = host.rstrip(".")
    return scheme, host, DEFAULT_PORTS[scheme] if port is None else port


def same_origin(url: str, other: str) -> bool:
    """Whether two URLs have one origin (:func:`origin`): the one service, which may be
    given the other's key. Anything that is not an origin matches nothing."""
    mine = origin(url)
    return mine is not None and mine == origin(other)


def primary_language(language: str) -> str:
    """``AUDIO_LANGUAGE`` as Whisper names languages: its primary subtag, in lower case
    (``en-GB`` and ``en_US`` are ``en``; a multilingual model refuses a code it does not
    know)."""
    return language.strip().replace("_", "-").split("-")[0].lower()


def english(language: str) -> bool:
    """``AUDIO_LANGUAGE`` names English (``en``, ``en-GB``, ``en_US``, ...)."""
    return primary_language(language) == "en"


def local_model_for(language: str) -> str:
    """The local model used unless ``STT_MODEL`` names one: English-only for English."""
    return DEFAULT_LOCAL_MODEL if english(language) else MULTILINGUAL_LOCAL_MODEL
