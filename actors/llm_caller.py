"""LLMCaller: the only actor that talks to the LLM.

One OpenAI-compatible chat-completions request per tick, through httpx, on an event loop
private to this actor's thread. ``asyncio.wait_for`` bounds the whole request, body
included, by ``AGENT_TIMEOUT_MS``: a server that trickles bytes cannot hold it longer.
"""

from __future__ import annotations

import asyncio

import httpx

from actors.base import ChildHandle, RelayActor, Reporter
from actors.clock import Clock
from actors.completion import Completion, parse_analysis, parse_chat_completion
from actors.errors import (
    LLMBadResponse,
    LLMConnectionError,
    LLMError,
    LLMHTTPError,
    LLMTimeout,
)
from actors.ticks import LLMRequest, TickDone, TickResult

MAX_RESPONSE_BYTES = 1024 * 1024
"""A chat completion larger than this is a bad response (a runaway or hostile server)."""


class LLMCaller(RelayActor):
    """Sends one chat completion per :class:`LLMRequest`, then reports to the store and ticker."""

    name = "llm"

    def __init__(
        self,
        *,
        clock: Clock,
        digest: ChildHandle,
        ticker: ChildHandle,
        transport: httpx.AsyncBaseTransport | None = None,
        report: Reporter | None = None,
    ) -> None:
        super().__init__(report=report)
        self._clock = clock
        self._digest = digest
        self._ticker = ticker
        self._transport = transport
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: httpx.AsyncClient | None = None

    def started(self) -> None:
        """Create the private event loop and the HTTP client."""
        self._loop = asyncio.new_event_loop()
        self._client = httpx.AsyncClient(
            transport=self._transport,
            limits=httpx.Limits(max_connections=4, max_keepalive_connections=2),
            headers={"X-Title": "sinain-relay"},
        )

    def stopped(self) -> None:
        """Close the client and the loop."""
        if self._loop is None:
            return
        if self._client is not None:
            self._loop.run_until_complete(self._client.aclose())
        self._loop.close()
        self._loop = None

    def complete(self, request: LLMRequest) -> None:
        """Run one request; store the result or count the failure, then finish the tick."""
        started = self._clock.monotonic()
        config = request.config
        try:
            completion = self._call(request)
        except LLMError as exc:
            latency_ms = round((self._clock.monotonic() - started) * 1000)
            self._tell_peer(self._digest, "record_failure", f"{type(exc).__name__}: {exc}")
            self._tell_peer(
                self._ticker,
                "tick_done",
                TickDone(
                    request.tick_id,
                    "failed",
                    detail={
                        "error": type(exc).__name__,
                        "message": str(exc)[:300],
                        "model": config.model,
                        "latencyMs": latency_ms,
                    },
                ),
            )
            return
        except Exception as exc:
            # A bug, not an LLM failure: finish the tick, then let the supervisor restart us.
            self._tell_peer(
                self._ticker,
                "tick_done",
                TickDone(request.tick_id, "failed", detail={"error": repr(exc)}),
            )
            raise

        latency_ms = round((self._clock.monotonic() - started) * 1000)
        analysis = parse_analysis(completion.content)
        result = TickResult(
            tick_id=request.tick_id,
            analysis=analysis,
            window=request.window,
            model=config.model,
            latency_ms=latency_ms,
            tokens_in=completion.tokens_in,
            tokens_out=completion.tokens_out,
            push_to_feed=config.push_to_feed,
        )
        self._tell_peer(self._digest, "record", result)
        detail = {
            "model": config.model,
            "latencyMs": latency_ms,
            "tokensIn": completion.tokens_in,
            "tokensOut": completion.tokens_out,
            "parsedOk": analysis.parsed_ok,
            "hud": analysis.hud,
        }
        if config.log_verbose:
            detail["digest"] = analysis.digest[:300]
        self._tell_peer(
            self._ticker, "tick_done", TickDone(request.tick_id, "ok", request.marks, detail)
        )

    def _call(self, request: LLMRequest) -> Completion:
        assert self._loop is not None, "started() creates the loop"
        timeout_s = request.config.timeout_ms / 1000
        try:
            return self._loop.run_until_complete(
                asyncio.wait_for(self._post(request, timeout_s), timeout_s)
            )
        except TimeoutError as exc:
            msg = f"no answer within {request.config.timeout_ms} ms"
            raise LLMTimeout(msg) from exc
        except httpx.TimeoutException as exc:
            msg = f"no answer within {request.config.timeout_ms} ms"
            raise LLMTimeout(msg) from exc
        except httpx.HTTPError as exc:
            raise LLMConnectionError(f"{type(exc).__name__}: {exc}") from exc

    async def _post(self, request: LLMRequest, timeout_s: float) -> Completion:
        assert self._client is not None, "started() creates the client"
        config = request.config
        body = {
            "model": config.model,
            "messages": [{"role": "user", "content": request.prompt}],
            "max_tokens": config.max_tokens,
            "temperature": config.temperature,
        }
        async with self._client.stream(
            "POST",
            f"{config.base_url}/chat/completions",
            json=body,
            headers={"Authorization": f"Bearer {config.api_key}"},
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
            raise LLMHTTPError(response.status_code, content.decode("utf-8", errors="replace"))
        return parse_chat_completion(content)
