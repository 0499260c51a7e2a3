"""Which recogniser hears the user, as the command line completes the audio settings given
(:func:`complete_audio`): this machine's own when the ``local-stt`` extra is installed and no
speech service is named, the Whisper model for the language spoken, and the LLM key for a
speech service of the LLM's own origin only.

Pure, and light to import: the settings reach it at start, before any actor runs.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import Any, Protocol

from config.audio.settings import DEFAULT_STT_BASE_URL
from config.common.errors import ConfigError
from config.common.origins import same_origin
from config.common.paths import model_path

DEFAULT_LOCAL_MODEL = "tiny.en"
"""The Whisper model ``local`` uses unless ``STT_MODEL`` names another (or a directory)."""
MULTILINGUAL_LOCAL_MODEL = "tiny"
"""The default local model for a language other than English (``.en`` models hear English
only: Whisper would take any other speech for English)."""
LOCAL_STT_MODULE = "faster_whisper"
"""What the ``local-stt`` extra installs, and ``local`` needs."""
LOCAL_STT_INSTALL = "pip install 'sinain-relay[local-stt]'"
_SERVICE = frozenset({"stt_api", "stt_base_url", "stt_api_key"})
"""The settings that name a speech service (or the way to one)."""


class LlmService(Protocol):
    """What the speech settings read of the agent's: the LLM's address and its key."""

    @property
    def base_url(self) -> str: ...
    @property
    def api_key(self) -> str: ...


def local_stt_installed() -> bool:
    """Whether faster-whisper can be imported (it is not imported here)."""
    return importlib.util.find_spec(LOCAL_STT_MODULE) is not None


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


def complete_audio(given: dict[str, Any], sections: Mapping[str, Any]) -> None:
    """Complete ``given``, the audio settings given by flag or variable (by field), in place:
    ``STT_API=local`` when the extra is installed and no speech service is named; with it,
    the model for the language; without ``STT_API_KEY``, the LLM key (of ``sections["agent"]``,
    an :class:`LlmService`) when the speech service has the LLM's origin (a key is never sent
    to a service it was not made for).

    Raises:
        ConfigError: ``STT_MODEL`` is a path to no directory, or names an English-only model
            and another language is spoken.
    """
    if not _SERVICE & given.keys() and local_stt_installed():
        given["stt_api"] = "local"  # no speech service named: this machine's own recogniser
    if given.get("stt_api") == "local":
        _local_model(given)
        return
    llm: LlmService = sections["agent"]
    speech = given.get("stt_base_url", DEFAULT_STT_BASE_URL)
    # the LLM key goes to the LLM's own origin only, never to a speech service elsewhere
    if "stt_api_key" not in given and llm.api_key and same_origin(speech, llm.base_url):
        given["stt_api_key"] = llm.api_key


def _local_model(given: dict[str, Any]) -> None:
    """The local model for the language spoken: ``tiny.en`` for English, ``tiny`` for another
    unless ``STT_MODEL`` names one (a directory given by its path, made absolute)."""
    language = given.get("language", "en")
    model = given.setdefault("stt_model", local_model_for(language))
    if (directory := model_path(model)) is not None:  # not a name faster-whisper fetches
        if not directory.is_dir():
            msg = (
                f"STT_MODEL={model} is no directory: name one that holds a model converted for "
                "CTranslate2, or a model faster-whisper fetches (tiny.en, base, small, ...)"
            )
            raise ConfigError(msg)
        given["stt_model"] = model = str(directory)
    if model.lower().endswith(".en") and not english(language):
        msg = (
            f"STT_MODEL={model} understands English only, and AUDIO_LANGUAGE is {language!r}: "
            f"name a multilingual model ({MULTILINGUAL_LOCAL_MODEL}, base, small, ...) or set "
            "AUDIO_LANGUAGE=en"
        )
        raise ConfigError(msg)
