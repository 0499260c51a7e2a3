"""What the demo's stand-ins share: each runs on a thread of its own, and ``with`` runs it;
the stand-in services serve an aiohttp app on a loopback port (:class:`LoopbackServer`)."""

from __future__ import annotations

import asyncio
import signal
import threading
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar, Self

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler


class Background:
    """Started with :meth:`start`, stopped with :meth:`stop`; ``with`` does both."""

    def start(self) -> Self:
        """Start the thread; returns ``self``."""
        raise NotImplementedError

    def stop(self) -> None:
        """Stop the thread and wait for it."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


@dataclass
class LoopbackServer(Background):
    """A stand-in service: :meth:`routes` served on a loopback port (``0``: a free one) from
    an event loop on a thread of its own. A request that hangs waits for :attr:`_stopping`,
    which :meth:`stop` sets, so that nothing is left pending."""

    port: int = 0
    host: str = "127.0.0.1"
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _runner: web.AppRunner | None = None
    _stopping: asyncio.Event | None = None
    received: list[str] = field(default_factory=list)
    """Every request it received, as ``METHOD /path``, whatever the path (an unknown one
    answered 404 too), but the test's own ``/_mode``: what reached the service."""

    name: ClassVar[str] = "stand-in"
    max_body: ClassVar[int] = 1024 * 1024

    @property
    def base_url(self) -> str:
        """The base URL an OpenAI-compatible client is pointed at."""
        return f"http://127.0.0.1:{self.port}/v1"

    def routes(self, app: web.Application) -> None:
        """Add the service's routes to ``app``."""
        raise NotImplementedError

    @web.middleware
    async def _count(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path != "/_mode":
            self.received.append(f"{request.method} {request.path}")
        return await handler(request)

    def start(self) -> Self:
        """Serve on the port; returns once it is listening."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        async def serve() -> None:
            self._stopping = asyncio.Event()
            app = web.Application(client_max_size=self.max_body, middlewares=[self._count])
            self.routes(app)
            runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
            await runner.setup()
            await web.TCPSite(runner, self.host, self.port).start()
            self._runner = runner
            self.port = int(runner.addresses[0][1])

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(serve())
            ready.set()
            loop.run_forever()

        self._loop = loop
        self._thread = threading.Thread(target=run, name=self.name, daemon=True)
        self._thread.start()
        if not ready.wait(10):
            msg = f"{self.name} did not start"
            raise RuntimeError(msg)
        return self

    def serve_until_signalled(self, event: str, **fields: Any) -> int:
        """Serve from the command line until SIGINT or SIGTERM; ``event`` is logged once it
        listens, with its base URL and ``fields``. The exit code (0)."""
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        self.start()
        structlog.get_logger("relay").info(
            event, base_url=f"http://{self.host}:{self.port}/v1", **fields
        )
        while not stop.wait(1.0):
            pass
        self.stop()
        return 0

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


@dataclass
class ModeServer(LoopbackServer):
    """A stand-in with fault modes, switched from a test (``server.mode = "hang"``) or over
    HTTP: ``POST /_mode {"mode": ..., "delay_s": ...}`` (one of :attr:`modes`, else a 400),
    ``GET /_mode`` shows the state and the requests so far."""

    mode: str = "ok"
    delay_s: float = 1.0
    """How long the ``slow`` mode waits."""

    modes: ClassVar[tuple[str, ...]] = ("ok",)

    @property
    def calls(self) -> int:
        """Requests received so far."""
        raise NotImplementedError

    def _state(self) -> dict[str, Any]:
        return {"ok": True, "mode": self.mode, "delayS": self.delay_s, "requests": self.calls}

    def _switch(self, body: dict[str, Any]) -> dict[str, Any]:
        """Apply a checked ``POST /_mode`` body's mode; what the log line says of it."""
        self.mode = body["mode"]
        return {"mode": self.mode}

    async def _get_mode(self, _request: web.Request) -> web.Response:
        return web.json_response(self._state())

    async def _set_mode(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or body.get("mode") not in self.modes:
            error = f"send {{'mode': one of {', '.join(self.modes)}}}"
            return web.json_response({"ok": False, "error": error}, status=400)
        said = self._switch(body)
        delay = body.get("delay_s")
        if isinstance(delay, int | float) and not isinstance(delay, bool) and delay >= 0:
            self.delay_s = float(delay)
        who = self.name.replace("-", "_")
        structlog.get_logger(who).info(f"{who}.mode", **said, delay_s=self.delay_s)
        return web.json_response(self._state())

    def mode_routes(self, app: web.Application) -> None:
        """``POST /_mode`` and ``GET /_mode``."""
        app.router.add_post("/_mode", self._set_mode)
        app.router.add_get("/_mode", self._get_mode)
