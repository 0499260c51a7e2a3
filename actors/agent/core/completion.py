"""Reading the LLM's answer: the chat-completion body, then the ``{hud, digest}`` inside it."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import orjson

from actors.agent.core.prompt import SCREENSHOTS
from actors.agent.core.response_format import body_field
from actors.core.errors import LLMBadResponse
from actors.core.screen_image import ScreenImage
from actors.core.shapes import NO_OUTPUT

HUD_FALLBACK_CHARS = 80
"""When the answer is not JSON, the hud is its first characters."""

_FENCE_OPEN = re.compile(r"^```\w*\s*\n?")
_FENCE_CLOSE = re.compile(r"\n?\s*```\s*$")


@dataclass(frozen=True, slots=True)
class Completion:
    """The text and token usage of one chat completion."""

    content: str
    tokens_in: int
    tokens_out: int
    cost_usd: float | None = None
    """What the provider says the call cost (OpenRouter's ``usage.cost``, USD), if it says."""
    model: str | None = None
    """The model the server says answered (the completion's ``model``), if it names one a
    log line can show: a gateway may route to another model than the one asked for, and a
    stand-in behind ``AGENT_BASE_URL`` is no model at all."""


@dataclass(frozen=True, slots=True)
class Analysis:
    """The two outputs of a tick."""

    hud: str
    digest: str
    parsed_ok: bool
    """False when the model did not answer JSON and the raw text was used instead."""


def _count(usage: Any, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


MAX_MODEL_CHARS = 200
"""Longest model name taken from an answer; a longer one is ignored."""


def _model(data: dict[str, Any]) -> str | None:
    value = data.get("model")
    if not isinstance(value, str) or len(value) > MAX_MODEL_CHARS or not value.isprintable():
        return None
    return value.strip() or None


def _cost(usage: Any) -> float | None:
    value = usage.get("cost") if isinstance(usage, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def request_body(
    model: str,
    prompt: str,
    *,
    max_tokens: int,
    temperature: float,
    response_format: str,
    images: tuple[ScreenImage, ...] = (),
) -> dict[str, Any]:
    """The chat-completions request of one tick: the prompt as one user message, and the
    ``response_format`` of the level asked (none for ``off``; see
    :mod:`actors.agent.core.response_format`).

    With ``images`` the message's content is a list of parts: the prompt as a ``text`` part,
    ending with how many screenshots follow (:data:`~actors.agent.core.prompt.SCREENSHOTS`), then
    one ``image_url`` part per image (a ``data:`` URL, ``detail: low``: a screen region read
    at low detail costs a fixed, small number of tokens). Without, it is the prompt as a
    string, as servers without vision expect.
    """
    content: str | list[dict[str, Any]] = prompt
    if images:
        said = f"{prompt}\n\n{SCREENSHOTS.format(count=len(images))}"
        content = [{"type": "text", "text": said}]
        content += [
            {"type": "image_url", "image_url": {"url": i.data_url(), "detail": "low"}}
            for i in images
        ]
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": content}],
        "max_tokens": max_tokens,
        "temperature": temperature,
    }
    asked = body_field(response_format, max_tokens=max_tokens)
    if asked is not None:
        body["response_format"] = asked
    return body


def parse_chat_completion(body: bytes) -> Completion:
    """Return the first choice's text and the usage of an OpenAI-style chat completion.

    The usage is the token counts and, when the provider reports it (OpenRouter does), the
    call's cost in USD (``usage.cost``); a cost that is not a number of 0 or more is ignored.

    Raises:
        LLMBadResponse: the body is not JSON, not a chat completion, or its text is empty.
    """
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise LLMBadResponse(f"body is not JSON: {body[:120]!r}") from exc
    if not isinstance(data, dict):
        raise LLMBadResponse("body is not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        error = data.get("error")
        detail = f": {str(error)[:200]}" if error else ""
        raise LLMBadResponse(f"no choices in the completion{detail}")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str) or not content.strip():
        raise LLMBadResponse("the completion has no text content")
    usage = data.get("usage")
    return Completion(
        content=content.strip(),
        tokens_in=_count(usage, "prompt_tokens"),
        tokens_out=_count(usage, "completion_tokens"),
        cost_usd=_cost(usage),
        model=_model(data),
    )


def _text_field(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return NO_OUTPUT


_CONTROL = re.compile(r"[\x00-\x1f]")


def _loads_object(text: str) -> dict[str, Any] | None:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        # Some servers' JSON grammars let a string hold a line break or a tab as it is, which
        # strict JSON forbids: such an object is read all the same.
        if not _CONTROL.search(text):
            return None
        try:
            value = json.loads(text, strict=False)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def _embedded(text: str) -> str | None:
    """From the first ``{`` to the last ``}`` of ``text``, where one JSON object among prose
    would be; ``None`` without both. Two scans, whatever the text (a pattern that looks for
    the last ``}`` after each ``{`` costs the square of a text of many)."""
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else None


def parse_analysis(content: str) -> Analysis:
    """Read ``{"hud": ..., "digest": ...}`` from the model's text.

    Code fences are tolerated, and so is prose around one JSON object that has a ``hud``.
    Anything else falls back to the raw text: hud = its first 80 characters, digest = all of it.
    """
    raw = content.strip()
    unfenced = _FENCE_CLOSE.sub("", _FENCE_OPEN.sub("", raw, count=1), count=1).strip()
    parsed = _loads_object(unfenced)
    if parsed is None:
        found = _embedded(raw)
        embedded = _loads_object(found) if found is not None else None
        if embedded is not None and _text_field(embedded, "hud") != NO_OUTPUT:
            parsed = embedded
    if parsed is not None:
        return Analysis(
            hud=_text_field(parsed, "hud"), digest=_text_field(parsed, "digest"), parsed_ok=True
        )
    return Analysis(
        hud=raw[:HUD_FALLBACK_CHARS] or NO_OUTPUT, digest=raw or NO_OUTPUT, parsed_ok=False
    )
