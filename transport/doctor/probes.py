"""The doctor's network probes: one tiny request to the LLM, the vision model and the speech
service, each as the relay sends it, each bounded by the setting's own timeout.

The LLM request is built by :func:`~actors.agent.core.completion.request_body` and sent by
:func:`~actors.agent.chat_request.call_chat`, at the response-format level the relay asks
first, stepping down on a refusal as ``AGENT_RESPONSE_FORMAT=auto`` does. The speech request
is one second of silence, built and sent as the transcriber does (through the feature
registry, :mod:`transport.features`).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import time

from actors.agent.chat_request import call_chat
from actors.agent.core.completion import request_body
from actors.agent.core.response_format import first_level, is_refusal, step_down
from actors.agent.core.verdicts import ChatProbe, Check, unreachable_reason
from actors.agent.local_llm import LocalChat
from actors.common.http_library import httpx
from actors.core.errors import LLMConnectionError, LLMError, LLMHTTPError
from actors.core.screen_image import ScreenImage
from config.agent_settings import AgentSettings
from config.secrets import shown_url
from transport.features import (
    BYTES_PER_MS,
    LOCAL_LOAD_TIMEOUT_S,
    AudioConfig,
    LocalRecogniser,
    SpeechClient,
    speech_request,
    stt_remedy,
)

PROMPT = 'Answer with the JSON {"hud": "ok", "digest": "ok"} and nothing else.'
"""The doctor's one-line prompt."""
MAX_TOKENS = 64
"""Room for the answer the prompt asks for, and little more."""
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
"""A 1x1 PNG: the vision probe's screen image."""
SILENCE_MS = 1_000


def pixel() -> ScreenImage:
    """:data:`PIXEL_PNG` as a screen image a request carries."""
    data = base64.b64encode(PIXEL_PNG).decode("ascii")
    digest = hashlib.sha256(PIXEL_PNG).hexdigest()
    return ScreenImage(0, digest, "image/png", len(PIXEL_PNG), data)


def probe_chat(
    config: AgentSettings, model: str, images: tuple[ScreenImage, ...] = ()
) -> ChatProbe:
    """One tiny request to ``model`` at ``AGENT_BASE_URL``, at the level the relay asks
    first; a refusal of the level is asked again one level down (``auto`` only). A model on
    this machine (``AGENT_API=local``) is loaded in a worker of the doctor's own and asked
    the same (:func:`probe_local`)."""
    if config.local:
        return probe_local(config)
    loop = asyncio.new_event_loop()
    client = httpx.AsyncClient(headers={"X-Title": "sinain-relay doctor"})
    level = first_level(config.response_format, None)
    refused: list[str] = []
    began = time.monotonic()
    try:
        while True:
            body = request_body(
                model,
                PROMPT,
                max_tokens=MAX_TOKENS,
                temperature=0.0,
                response_format=level,
                images=images,
            )
            try:
                call_chat(
                    loop,
                    client,
                    f"{config.base_url}/chat/completions",
                    api_key=config.api_key,
                    body=body,
                    timeout_s=config.timeout_ms / 1000,
                )
            except LLMHTTPError as exc:
                lower = step_down(config.response_format, level)
                if lower is None or not is_refusal(exc.status, exc.body, model=model):
                    raise
                refused.append(level)
                level = lower
                continue
            return ChatProbe(model, _ms_since(began), level, tuple(refused))
    except LLMError as exc:
        why = unreachable_reason(exc) if isinstance(exc, LLMConnectionError) else ""
        return ChatProbe(model, _ms_since(began), None, tuple(refused), exc, why)
    finally:
        loop.run_until_complete(client.aclose())
        loop.close()


def probe_local(config: AgentSettings) -> ChatProbe:
    """The local model loaded (a first use may put it together or fetch it, which the doctor
    waits for) and asked the doctor's question, with the answer's schema."""
    chat = LocalChat(config.model, config.local_threads)
    level = first_level(config.response_format, None)
    body = request_body(
        config.model, PROMPT, max_tokens=MAX_TOKENS, temperature=0.0, response_format=level
    )
    began = time.monotonic()
    try:
        chat.warm()
        began = time.monotonic()  # the answer's time, not the load's
        chat.complete(body, config.timeout_ms / 1000)
    except LLMError as exc:
        return ChatProbe(config.model, _ms_since(began), None, error=exc)
    finally:
        chat.close()
    return ChatProbe(config.model, _ms_since(began), level)


def _ms_since(began: float) -> int:
    return round((time.monotonic() - began) * 1000)


def probe_speech(audio: AudioConfig) -> Check:
    """One second of silence to the speech service, as the transcriber sends an utterance."""
    pcm = bytes(SILENCE_MS * BYTES_PER_MS)
    request = speech_request(
        audio.stt_api, audio.stt_base_url, audio.stt_model, audio.language, pcm
    )
    timeout_s = audio.stt_timeout_ms / 1000
    client: SpeechClient | LocalRecogniser
    if audio.local:  # the model loaded in a worker, as the transcriber's is
        client = LocalRecogniser(audio.stt_model, audio.language, name="doctor-stt")
        where = f"{audio.stt_model} on this machine (STT_API=local)"
    else:
        client = SpeechClient(audio.stt_api, audio.stt_api_key, connections=1, name="doctor-stt")
        where = f"{audio.stt_model} at {shown_url(audio.stt_base_url)} (STT_API={audio.stt_api})"
    began = time.monotonic()
    # a first use of a local model may fetch it: the recogniser bounds that wait itself
    wait_s = timeout_s + (LOCAL_LOAD_TIMEOUT_S if audio.local else 5)
    try:
        text = client.send(request, timeout_s).result(timeout=wait_s)
    except Exception as exc:  # any failure is the verdict; the doctor goes on to the next
        remedy = stt_remedy(exc, local=audio.local)
        return Check("speech", "FAIL", f"{where}: {exc}", remedy.advice if remedy else "")
    finally:
        client.close()
    heard = f"{text[:40]!r}" if text else "nothing"
    return Check(
        "speech", "ok", f"{where} answered in {_ms_since(began)} ms (heard {heard} in silence)"
    )
