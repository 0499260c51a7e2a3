"""HttpTransport: the actor that owns the aiohttp server and its event-loop thread."""

from __future__ import annotations

import asyncio
import errno
import socket
import threading
from typing import Any

import structlog
from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod, InvalidURLError, LineTooLong

from actors.core.error_text import safe_error_text
from actors.core.errors import InUse
from actors.core.shapes import encode
from actors.kernel.base import RelayActor, Reporter
from transport.app import build_app
from transport.server.aiohttp_compat import ConnectionHandler, HandlerRunner
from transport.shell.answers import Error
from transport.shell.connections import REFUSED_HEAD_TIMEOUT_S, ConnectionLimits, Connections
from transport.shell.state import Peers, Policy

START_TIMEOUT_S = 10.0
SHUTDOWN_TIMEOUT_S = 3.0
LINGERING_S = 10.0
"""At most how long the rest of a refused request's body is read before the connection
closes, so that the client reads the answer rather than a reset (aiohttp's default)."""


class CannotServe(RuntimeError):
    """The server could not start listening; the message says why in one line, and
    ``__cause__`` is the error of the bind (an ``OSError`` for a bind the system refused)."""


class PortInUse(CannotServe, InUse):
    """Another process listens on the port; another ``port`` setting is the remedy."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(f"port {port} on {host} is in use", setting="port", instead="a free port")


def cannot_serve(host: str, port: int, cause: BaseException) -> CannotServe:
    """The error to raise, in one line for a user, when ``host:port`` could not be served."""
    if isinstance(cause, OSError) and cause.errno == errno.EADDRINUSE:
        return PortInUse(host, port)
    return CannotServe(f"cannot serve on {host}:{port}: {cause}")


def check_port(host: str, port: int) -> None:
    """Bind ``host:port`` once and let it go, as the server will bind it (address reuse on).

    Called before anything starts, so a port in use is one line and nothing else: no actor
    has started, logged or opened anything yet. The server's own bind still decides (another
    process may take the port in between); port 0 is any free port and is not checked.

    Raises:
        CannotServe: the address cannot be bound; the message says why in one line.
    """
    if port == 0:
        return
    try:
        addresses = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except OSError as exc:
        raise cannot_serve(host, port, exc) from exc
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                raise cannot_serve(host, port, exc) from exc


def new_event_loop() -> asyncio.AbstractEventLoop:
    """The event loop the transport runs on: uvloop when installed, else asyncio's own."""
    try:
        import uvloop  # noqa: PLC0415 - optional: the relay runs on asyncio's loop without it
    except ImportError:
        return asyncio.new_event_loop()
    loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    return loop


class HttpTransport(RelayActor):
    """Serves the HTTP API on its own event-loop thread.

    The actor's thread stays free for messages; the loop thread runs aiohttp. A failed bind
    fails ``on_start``, so the supervisor sees it. Stopping (or crashing) closes the server
    so that a new incarnation can bind the same port.
    """

    name = "http"

    def __init__(
        self,
        *,
        host: str,
        port: int,
        peers: Peers,
        policy: Policy,
        limits: ConnectionLimits,
        report: Reporter | None = None,
    ) -> None:
        super().__init__(report=report)
        self._host = host
        self._port = port
        self._peers = peers
        self._policy = policy
        self._limits = limits
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._address: tuple[str, int] | None = None

    def started(self) -> None:
        """Bind and serve.

        Raises:
            CannotServe: the address could not be bound (a port in use says just that).
        """
        loop = new_event_loop()
        self._loop = loop
        bound = threading.Event()
        failure: list[BaseException] = []

        limits = self._limits
        connections = Connections(
            limits.cap(),
            header_timeout_s=limits.header_timeout_s,
            body_timeout_s=limits.body_timeout_s,
            body_memory_bytes=limits.body_memory_bytes,
        )

        async def serve() -> None:
            def handler(server: web.Server, /, **kwargs: Any) -> JsonErrorHandler:
                return JsonErrorHandler(server, connections=connections, **kwargs)

            runner = HandlerRunner(
                build_app(self._peers, self._policy, connections=connections),
                handler=handler,
                keepalive_timeout=limits.keepalive_timeout_s,
                # the rest of a refused body (413, 408) is read and dropped no longer than a
                # body may take to come
                lingering_time=min(LINGERING_S, limits.body_timeout_s),
                access_log=None,
                shutdown_timeout=SHUTDOWN_TIMEOUT_S,
            )
            await runner.setup()
            site = web.TCPSite(runner, self._host, self._port, backlog=1024)
            await site.start()
            self._runner = runner
            address = runner.addresses[0]
            self._address = (str(address[0]), int(address[1]))

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(serve())
            except BaseException as exc:  # reported to on_start, which fails the start
                failure.append(exc)
                bound.set()
                return
            bound.set()
            loop.run_forever()

        self._thread = threading.Thread(target=run, name="http-loop", daemon=True)
        self._thread.start()
        if not bound.wait(START_TIMEOUT_S):
            msg = f"HTTP server did not bind {self._host}:{self._port} in {START_TIMEOUT_S} s"
            raise CannotServe(msg)
        if failure:
            raise cannot_serve(self._host, self._port, failure[0]) from failure[0]
        self._log.info(
            "http.listening",
            host=self._address[0] if self._address else self._host,
            port=self._address[1] if self._address else self._port,
            max_connections=connections.limit,
        )

    def stopped(self) -> None:
        """Stop accepting, let in-flight requests finish (bounded), close the loop."""
        loop, thread, runner = self._loop, self._thread, self._runner
        self._loop = self._thread = self._runner = None
        if loop is None or thread is None:
            return
        if runner is not None and thread.is_alive():
            done = asyncio.run_coroutine_threadsafe(runner.cleanup(), loop)
            try:
                done.result(timeout=SHUTDOWN_TIMEOUT_S + 2)
            except Exception as exc:  # still stop the loop below
                self._log.warning("http.cleanup_failed", error=safe_error_text(exc))
        if thread.is_alive():
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=SHUTDOWN_TIMEOUT_S)
        if not thread.is_alive():
            loop.close()

    def inject_fault(self, kind: str, seconds: float = 0.0) -> None:
        """A ``hang`` of the transport blocks its event loop (every request stalls), which
        is what a hung transport is; a ``crash`` is as for any actor."""
        if kind == "hang" and self._loop is not None:
            self._log.warning("actor.fault_injected", kind=kind, seconds=seconds, where="loop")
            self._loop.call_soon_threadsafe(self._hang, seconds)
            return
        super().inject_fault(kind, seconds)

    def address(self) -> tuple[str, int]:
        """The (host, port) the server is bound to (useful with port 0)."""
        if self._address is None:
            msg = "not listening"
            raise RuntimeError(msg)
        return self._address


# -- what aiohttp answers before any route ----------------------------------------------------

log = structlog.get_logger("relay")


class JsonErrorHandler(ConnectionHandler):
    """aiohttp's connection handler, with the API's JSON for the errors it answers itself, and
    the bounds of a connection (:mod:`transport.shell.connections`).

    aiohttp answers a request its HTTP parser refuses (a bad or repeated ``Content-Length``,
    ``Content-Length`` with ``Transfer-Encoding``, a chunk that arrives broken with the
    headers, a line over 8190 bytes, a missing ``Host``, bytes that are not HTTP) before any
    route runs, through
    :meth:`handle_error`: in plain text, quoting the bytes it refused, with a traceback in the
    log. Here the answer is ``{"ok": false, "error": "malformed HTTP request: ..."}`` with the
    same status, saying what was wrong but quoting nothing that was sent (it may be a header
    with a token), and the log line is one ``http.malformed`` event. aiohttp still closes the
    connection after it.

    A new connection is counted in :class:`Connections`, which at the cap closes an idle one to
    make room (:meth:`evict`) or refuses it: a refused connection's first request is answered a
    JSON 503, and the connection closes. A connection that has not sent a whole request head
    :attr:`Connections.header_timeout_s` after it opened (:data:`REFUSED_HEAD_TIMEOUT_S` when
    refused) is closed: one timer a connection, which looks at aiohttp's count of parsed
    requests when it fires. Between requests, aiohttp's keep-alive timeout closes an idle
    connection (it counts only while no request is being handled, so a stream or a WebSocket
    outlives it); a connection that starts its next request head and stops is idle for it too.
    What it reads and changes of aiohttp's own state, it does through
    :class:`~transport.server.aiohttp_compat.ConnectionHandler`.
    """

    __slots__ = ("_connections", "_counted", "_head_timer")

    def __init__(self, manager: web.Server, *, connections: Connections, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._connections = connections
        self._counted = False
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Count the connection in (or refuse it), and start the clock of its request head."""
        head_timeout_s = self._connections.header_timeout_s
        if self._connections.admit(self):
            self._counted = True
        else:
            self.answer_with(self._refuse)  # its request is answered 503, then closed
            head_timeout_s = min(head_timeout_s, REFUSED_HEAD_TIMEOUT_S)
        super().connection_made(transport)
        self._head_timer = self.loop.call_later(head_timeout_s, self._head_late)

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        if self._counted:
            self._counted = False
            self._connections.release(self)
        super().connection_lost(exc)

    def evict(self) -> None:
        """Close this idle connection to make room for a new one (no longer counted)."""
        self._counted = False
        log.debug("http.connection_evicted", actor="http", waiting_for=self.waiting_for())
        self.force_close()

    def _head_late(self) -> None:
        """Close the connection if no request head has been parsed on it yet."""
        self._head_timer = None
        if self.requests_parsed() == 0 and self.transport is not None:
            self._connections.head_timeouts += 1
            log.debug("http.head_timeout", actor="http", seconds=self._connections.header_timeout_s)
            self.force_close()

    async def _refuse(self, _request: web.BaseRequest) -> web.StreamResponse:
        """The answer on a connection over the cap: a JSON 503, and the connection closes."""
        limit = self._connections.limit
        response = web.Response(
            body=encode(
                Error(
                    ok=False,
                    error=f"too many connections: the relay serves {limit} at once; "
                    "retry when one has closed",
                )
            ),
            status=503,
            content_type="application/json",
            headers={"Retry-After": "1"},
        )
        response.force_close()
        return response

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        """The answer to a request aiohttp could not hand to the application."""
        if request.writer.output_size > 0:  # as aiohttp: part of an answer is out already
            msg = "Response is sent already, cannot send another response with the error message"
            raise ConnectionError(msg)
        if status >= 500:
            log.error("http.internal_error", actor="http", status=status, exc_info=exc)
            error = "internal error"
        else:
            error = f"malformed HTTP request: {_parser_refusal(exc, message, self.max_line_size)}"
            # Bytes that are not HTTP (TLS, a port scan) are not worth more than debug.
            level = "debug" if isinstance(exc, BadHttpMethod) else "info"
            getattr(log, level)(
                "http.malformed", actor="http", status=status, error=error, remote=request.remote
            )
        response = web.Response(
            body=encode(Error(ok=False, error=error)),
            status=status,
            content_type="application/json",
        )
        response.force_close()
        return response


def _parser_refusal(exc: BaseException | None, message: str | None, max_line_size: int) -> str:
    """What aiohttp's parser refused, without what was sent: the first line of its message,
    cut where it starts quoting the request (``...: b'...'``)."""
    if isinstance(exc, LineTooLong):
        return f"the request line or a header is longer than {max_line_size} bytes"
    if isinstance(exc, InvalidURLError):  # its message is the target itself
        return "the request target is not a valid URL"
    text = (message or (str(exc) if exc else "") or "bad request").split("\n", 1)[0]
    for quote in (": b'", ': b"', " b'", ' b"'):
        text = text.split(quote, 1)[0]
    return text.rstrip(" :.") or "bad request"
