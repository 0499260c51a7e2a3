"""A fake OpenAI-compatible chat-completions server on loopback, with fault modes.

It is a real HTTP server (aiohttp on its own thread), so the relay's LLM path runs exactly
as in production: sockets, timeouts, status codes, bodies. Modes:

``ok``        a chat completion whose content is ``{"hud": ..., "digest": ...}``
``fenced``    the same JSON inside a Markdown code fence
``plain``     plain text content, not JSON
``nonjson``   HTTP 200 with a body that is not JSON at all
``empty``     a chat completion with empty content
``http401``   HTTP 401, as for a wrong key
``http500``   HTTP 500 with an error body
``http429``   HTTP 429 with ``Retry-After`` (``retry_after``, 1 s by default)
``slow``      waits ``delay_s`` seconds, then answers like ``ok``
``hang``      never answers (until the server stops)

Switch modes from a test with ``fake.mode = "hang"`` or over HTTP with
``POST /_mode {"mode": "hang", "delay_s": 2}``.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import orjson
from aiohttp import web

MODES = (
    "ok",
    "fenced",
    "plain",
    "nonjson",
    "empty",
    "http401",
    "http500",
    "http429",
    "slow",
    "hang",
)


@dataclass
class SeenRequest:
    """One request the fake received."""

    body: dict[str, Any]
    authorization: str


@dataclass
class FakeLLM:
    """Start with ``with FakeLLM() as llm:``; point the relay at ``llm.base_url``."""

    mode: str = "ok"
    hud: str = "Editing hud-relay.mjs in IDEA"
    digest: str = "User is in IntelliJ IDEA editing server/hud-relay.mjs."
    delay_s: float = 1.0
    tokens_in: int = 310
    tokens_out: int = 85
    retry_after: str = "1"
    model_modes: dict[str, str] = field(default_factory=dict)
    """A mode per model name, overriding ``mode`` for requests naming that model."""
    requests: list[SeenRequest] = field(default_factory=list)
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _runner: web.AppRunner | None = None
    _stopping: asyncio.Event | None = None
    port: int = 0

    @property
    def base_url(self) -> str:
        """The ``AGENT_BASE_URL`` that reaches this server."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def calls(self) -> int:
        """Chat-completion requests received so far."""
        return len(self.requests)

    def _content(self, mode: str) -> str:
        answer = orjson.dumps({"hud": self.hud, "digest": self.digest}).decode()
        if mode == "fenced":
            return f"```json\n{answer}\n```"
        if mode == "plain":
            return f"The user is busy. {self.hud}. {self.digest}"
        if mode == "empty":
            return ""
        return answer

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = {"unparseable": raw.decode("utf-8", "replace")}
        self.requests.append(SeenRequest(body, request.headers.get("Authorization", "")))
        mode = self.model_modes.get(str(body.get("model")), self.mode)
        if mode == "hang":
            assert self._stopping is not None
            await self._stopping.wait()
            return web.Response(status=503)
        if mode == "slow":
            await asyncio.sleep(self.delay_s)
        if mode == "http500":
            return web.json_response({"error": {"message": "upstream exploded"}}, status=500)
        if mode == "http401":
            return web.json_response({"error": {"message": "no auth credentials"}}, status=401)
        if mode == "http429":
            return web.json_response(
                {"error": {"message": "rate limited"}},
                status=429,
                headers={"Retry-After": self.retry_after},
            )
        if mode == "nonjson":
            return web.Response(text="<html>Bad gateway</html>", content_type="text/html")
        return web.json_response(
            {
                "id": f"fake-{len(self.requests)}",
                "object": "chat.completion",
                "model": body.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self._content(mode)},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": self.tokens_in, "completion_tokens": self.tokens_out},
            }
        )

    async def _set_mode(self, request: web.Request) -> web.Response:
        body = await request.json()
        if body.get("mode") not in MODES:
            return web.json_response(
                {"ok": False, "error": f"mode must be one of {MODES}"}, status=400
            )
        self.mode = body["mode"]
        self.delay_s = float(body.get("delay_s", self.delay_s))
        return web.json_response({"ok": True, "mode": self.mode})

    def start(self) -> FakeLLM:
        """Serve on a free loopback port; returns once it is listening."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        async def serve() -> None:
            self._stopping = asyncio.Event()
            app = web.Application()
            app.router.add_post("/v1/chat/completions", self._completions)
            app.router.add_post("/_mode", self._set_mode)
            runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", self.port)
            await site.start()
            self._runner = runner
            self.port = int(runner.addresses[0][1])

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(serve())
            ready.set()
            loop.run_forever()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="fake-llm", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            msg = "fake LLM did not start"
            raise RuntimeError(msg)
        return self

    def stop(self) -> None:
        """Release hanging requests, stop serving, close the loop."""
        loop, thread, runner = self._loop, self._thread, self._runner
        if loop is None or thread is None or runner is None:
            return

        async def shutdown() -> None:
            assert self._stopping is not None
            self._stopping.set()
            await runner.cleanup()

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()
        self._loop = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
