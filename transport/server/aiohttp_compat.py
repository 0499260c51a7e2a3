"""The private parts of aiohttp the transport relies on, all here, for aiohttp 3.14.

aiohttp gives no public way to see what a connection is doing, to serve an application
with a connection handler of one's own, nor to route every request target no route takes;
the relay's handler (:class:`transport.http_transport.JsonErrorHandler`) needs the first
two, its application (:func:`transport.app.build_app`) the third. These are the only private
names of aiohttp the relay touches, and nothing outside this module touches them:

- ``RequestHandler._waiter``: the future a connection awaits for its next request head
  (``None`` or done while a request is handled). aiohttp's own keep-alive check reads it so.
- ``RequestHandler._request_count``: how many request heads were parsed on the connection.
- ``RequestHandler._request_handler``: the coroutine each request of the connection is
  handed to (replaced to answer every request of a refused connection the same way).
- ``BaseProtocol._loop``: the connection's event loop.
- ``AppRunner._make_server``: the coroutine that builds the runner's ``web.Server`` (through
  ``Application._make_handler``, with every argument the runner and the application give);
  its result's class is swapped for :class:`_Server`, which keeps all of them.
- ``Server.__call__``, ``Server._loop`` and ``Server._kwargs``: the factory of a connection's
  handler, and the loop and arguments it makes it with.
- ``DynamicResource._match``: whether a resource takes a request target (and the match
  info it gives the handler), overridden by :class:`AnyTarget` to take every one.

``tests/transport/test_aiohttp_compat.py`` checks each name on the installed aiohttp, and the
behaviour built on them against a real server; ``pyproject.toml`` pins aiohttp to
:data:`SUPPORTED`, the versions those tests were run against.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol, cast

from aiohttp import web

SUPPORTED = ">=3.14,<3.15"
"""The aiohttp versions this module was checked against (``pyproject.toml`` pins the same)."""

RequestCoroutine = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]
"""What answers one request of a connection."""


class ConnectionHandler(web.RequestHandler):
    """aiohttp's handler of one client connection, with what the relay reads and changes of
    its private state as methods."""

    __slots__ = ()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the connection is served on."""
        return self._loop

    def requests_parsed(self) -> int:
        """How many request heads have been parsed on this connection so far."""
        return self._request_count

    def waiting_for(self) -> Literal["first", "next"] | None:
        """``first``: no request head yet; ``next``: idle between two requests; ``None``: a
        request is being handled."""
        waiter = self._waiter
        if waiter is None or waiter.done():
            return None
        return "first" if self._request_count == 0 else "next"

    def answer_with(self, answer: RequestCoroutine) -> None:
        """Hand every request of this connection to ``answer`` rather than the application
        (called before aiohttp starts reading it, in :meth:`connection_made`)."""
        self._request_handler = answer


class HandlerFactory(Protocol):
    """Makes a connection's handler for ``server`` with aiohttp's arguments (``loop`` and
    the runner's and application's settings, ``keepalive_timeout`` among them)."""

    def __call__(self, server: web.Server, /, **kwargs: Any) -> ConnectionHandler: ...


class HandlerRunner(web.AppRunner):
    """An ``AppRunner`` whose connections are handled by what ``handler`` makes.

    aiohttp builds its server with every argument the runner and the application give it;
    only the server's class changes here, so each of them still applies.
    """

    def __init__(self, app: web.Application, *, handler: HandlerFactory, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._handler_factory = handler

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = _Server
        served = cast("_Server", server)
        served.handler_factory = self._handler_factory
        return served


class _Server(web.Server):
    """aiohttp's server, whose connections' handlers :attr:`handler_factory` makes."""

    handler_factory: HandlerFactory

    def __call__(self) -> web.RequestHandler:
        return self.handler_factory(self, loop=self._loop, **self._kwargs)


class AnyTarget(web.DynamicResource):
    """The resource of every request target the router asks about (``no_route``'s).

    A pattern matches targets that start with ``/``; this also takes ``*`` (``OPTIONS *``),
    which aiohttp would otherwise answer with a plain-text 404 of its own. Registered last,
    the router asks it only when no other resource matched. (A ``CONNECT``'s ``host:port`` is
    no path at all: the router answers it without asking any resource.)
    """

    def _match(self, path: str) -> dict[str, str] | None:
        return {"path": path}
