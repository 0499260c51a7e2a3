"""The agent's checks (``llm``, ``vision``, ``llm server``): one tiny request to the model and
the vision model for ``sinain-relay doctor``, each as the relay sends it, bounded by the
setting's own timeout; for a started relay, whether the model's host accepts a connection.

The request is built by :func:`~actors.agent.core.completion.request_body` and sent by
:func:`~actors.agent.chat_request.call_chat`, at the response-format level the relay asks
first, stepping down on a refusal as ``AGENT_RESPONSE_FORMAT=auto`` does.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import time
from collections.abc import Iterator

from actors.agent.chat_request import call_chat
from actors.agent.core.completion import request_body
from actors.agent.core.response_format import first_level, is_refusal, step_down
from actors.agent.core.verdicts import ChatProbe, agent_skip, chat_verdict, vision_skip
from actors.agent.local_llm import LocalChat
from actors.common.check import Check, ms_since, unreachable_reason
from actors.common.http_library import httpx
from actors.core.errors import LLMConnectionError, LLMError, LLMHTTPError
from actors.core.screen_image import ScreenImage
from config.agent.settings import AgentSettings
from config.common.secrets import shown_url
from config.settings import Settings
from transport.host.reach import CONNECT_TIMEOUT_S, unreachable

PROMPT = 'Answer with the JSON {"hud": "ok", "digest": "ok"} and nothing else.'
"""The doctor's one-line prompt."""
MAX_TOKENS = 64
"""Room for the answer the prompt asks for, and little more."""
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
"""A 1x1 PNG: the vision probe's screen image."""


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
            return ChatProbe(model, ms_since(began), level, tuple(refused))
    except LLMError as exc:
        why = unreachable_reason(exc) if isinstance(exc, LLMConnectionError) else ""
        return ChatProbe(model, ms_since(began), None, tuple(refused), exc, why)
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
        return ChatProbe(config.model, ms_since(began), None, error=exc)
    finally:
        chat.close()
    return ChatProbe(config.model, ms_since(began), level)


def llm_server_check(config: AgentSettings) -> Check:
    """``llm server``: whether ``AGENT_BASE_URL``'s host accepts a connection; a model on this
    machine (``AGENT_API=local``) has none, and is loaded at the first call."""
    if config.local:
        return Check(
            "llm server",
            "skip",
            f"{config.model} runs on this machine (AGENT_API=local): loaded at the first call",
            "sinain-relay doctor loads it and asks it one short question",
        )
    url = shown_url(config.base_url)
    why = unreachable(config.base_url, min(CONNECT_TIMEOUT_S, config.timeout_ms / 1000))
    if why is None:
        return Check(
            "llm server",
            "ok",
            f"{url} accepts connections (nothing is asked: the first call gives the llm check)",
        )
    failed = ChatProbe(config.model, 0, None, error=LLMConnectionError(why), unreachable=why)
    return chat_verdict("llm server", failed, config)


def agent_checks(settings: Settings, *, started: bool) -> Iterator[Check]:
    """``llm`` and ``vision`` for the command, one tiny request each; ``llm server`` for a
    started relay, which asks nothing (the first call to each model gives its verdict)."""
    config = settings.agent
    skipped = agent_skip(config)
    if started:
        yield llm_server_check(config) if skipped is None else skipped
        return
    if skipped is None:
        text = probe_chat(config, config.model)
        yield chat_verdict("llm", text, config)
        skipped = vision_skip(config, text)
    else:
        yield skipped
        skipped = vision_skip(config)
    if skipped is not None:
        yield skipped
    else:
        probe = probe_chat(config, config.vision_model, (pixel(),))
        yield chat_verdict("vision", probe, config, images=True)
