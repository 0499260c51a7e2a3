"""One chat-completions request over httpx, its failures as :class:`~actors.core.errors.LLMError`:
what the LLM caller sends at each attempt, and what ``sinain-relay doctor`` sends once.

``asyncio.wait_for`` bounds the request, body included (a server that trickles bytes cannot
hold it longer); an answer over :data:`MAX_RESPONSE_BYTES` is a bad response. The key goes in
the ``Authorization`` header only (none is sent without a key: a server on this machine may
need none), and every error text is made safe
(:func:`~actors.core.error_text.safe_error_text`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from actors.agent.core.completion import Completion, parse_chat_completion
from actors.common.http_library import httpx
from actors.core.error_text import safe_error_text
from actors.core.errors import (
    LLMBadResponse,
    LLMConnectionError,
    LLMError,
    LLMHTTPError,
    LLMTimeout,
    LLMUnexpectedError,
)

MAX_RESPONSE_BYTES = 1024 * 1024
"""A chat completion larger than this is a bad response (a runaway or hostile server)."""


def call_chat(
    loop: asyncio.AbstractEventLoop,
    client: httpx.AsyncClient,
    url: str,
    *,
    api_key: str,
    body: dict[str, Any],
    timeout_s: float,
) -> Completion:
    """``body`` posted to ``url`` (``{base}/chat/completions``) on ``loop``, within ``timeout_s``.

    Raises:
        LLMError: by kind: a timeout, a connection error, an error status, a bad answer, or
            (:class:`LLMUnexpectedError`) anything else the call raised.
    """
    try:
        return loop.run_until_complete(
            asyncio.wait_for(_post(client, url, api_key, body, timeout_s), timeout_s)
        )
    except (TimeoutError, httpx.TimeoutException) as exc:
        msg = f"no answer within {round(timeout_s * 1000)} ms"
        raise LLMTimeout(msg) from exc
    except httpx.HTTPError as exc:
        raise LLMConnectionError(safe_error_text(exc)) from exc
    except LLMError:
        raise
    except Exception as exc:  # this call's failure, counted as such; the caller lives on
        raise LLMUnexpectedError(safe_error_text(exc)) from exc


LISTED_MODELS = 12
"""The most model names a listing is shown with."""


def served_models(
    loop: asyncio.AbstractEventLoop,
    client: httpx.AsyncClient,
    base_url: str,
    *,
    api_key: str,
    timeout_s: float,
) -> tuple[str, ...]:
    """The models the server at ``base_url`` lists at its free ``GET /models`` (an OpenAI-style
    ``{"data": [{"id": ...}]}``), at most :data:`LISTED_MODELS`; none when it lists none, or
    the listing fails in any way (it only helps a message)."""

    async def listed() -> tuple[str, ...]:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        answer = await client.get(f"{base_url}/models", headers=headers, timeout=timeout_s)
        data = answer.json().get("data") if answer.status_code == 200 else None
        names = [m.get("id") for m in data if isinstance(m, dict)] if isinstance(data, list) else []
        return tuple(n for n in names if isinstance(n, str) and n)[:LISTED_MODELS]

    try:
        return loop.run_until_complete(asyncio.wait_for(listed(), timeout_s))
    except Exception:  # a listing that fails says nothing: the verdict stands without it
        return ()


async def _post(
    client: httpx.AsyncClient, url: str, api_key: str, body: dict[str, Any], timeout_s: float
) -> Completion:
    async with client.stream(
        "POST",
        url,
        json=body,
        headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
        timeout=httpx.Timeout(timeout_s),
    ) as response:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                msg = f"response larger than {MAX_RESPONSE_BYTES} bytes"
                raise LLMBadResponse(msg)
            chunks.append(chunk)
    content = b"".join(chunks)
    if not 200 <= response.status_code < 300:
        raise LLMHTTPError(
            response.status_code,
            content.decode("utf-8", errors="replace"),
            retry_after=response.headers.get("Retry-After"),
        )
    return parse_chat_completion(content)
