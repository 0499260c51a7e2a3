"""SpeechClient: the transcriber's requests to the speech service, on an event loop of its own.

The loop runs on a thread of its own, so requests overlap and the transcriber's mailbox never
waits for one: :meth:`SpeechClient.send` hands a request to the loop and returns a
``concurrent.futures.Future`` of the transcript at once; cancelling that future cancels the
request. The key goes in the ``Authorization`` header only, never into an error's text.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import ssl
import threading

from actors.audio.core.stt import (
    MAX_ANSWER_BYTES,
    SttBadAnswer,
    SttConnectionError,
    SttRequest,
    SttTimeout,
    read_answer,
)
from actors.common.http_library import httpx
from actors.core.error_text import safe_error_text
from config.audio.settings import SttApi


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every incarnation (building one loads the CA bundle)."""
    return httpx.create_ssl_context()


class SpeechClient:
    """One ``httpx.AsyncClient`` on a private event loop; owned by one transcriber."""

    def __init__(
        self,
        api: SttApi,
        api_key: str,
        *,
        connections: int,
        name: str,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """Start the loop's thread and the client."""
        self._api: SttApi = api
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._thread.start()
        slots = max(connections, 1)
        self._client = httpx.AsyncClient(
            transport=transport,
            verify=_tls_context(),
            limits=httpx.Limits(max_connections=slots, max_keepalive_connections=slots),
            headers={"X-Title": "sinain-relay"},
        )

    def send(self, request: SttRequest, timeout_s: float) -> concurrent.futures.Future[str]:
        """Start ``request``; the future holds the transcript, or an
        :class:`~actors.audio.core.stt.SttError` (or, for a bug, any exception)."""
        return asyncio.run_coroutine_threadsafe(self._post(request, timeout_s), self._loop)

    def close(self) -> None:
        """Close the client, stop the loop and its thread (requests still out are dropped)."""
        closing = asyncio.run_coroutine_threadsafe(self._client.aclose(), self._loop)
        with contextlib.suppress(Exception):  # a client that will not close is dropped with it
            closing.result(timeout=5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self._loop.close()

    async def _post(self, request: SttRequest, timeout_s: float) -> str:
        try:
            async with self._client.stream(
                "POST",
                request.url,
                json=request.json,
                data=request.data,
                files=request.files,
                headers=self._headers,
                timeout=httpx.Timeout(timeout_s),
            ) as response:
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_ANSWER_BYTES:
                        msg = f"answer larger than {MAX_ANSWER_BYTES} bytes"
                        raise SttBadAnswer(msg)
        except httpx.TimeoutException as exc:
            msg = f"no answer within {round(timeout_s * 1000)} ms"
            raise SttTimeout(msg) from exc
        except httpx.HTTPError as exc:
            raise SttConnectionError(safe_error_text(exc)) from exc
        return read_answer(self._api, response.status_code, bytes(body))
