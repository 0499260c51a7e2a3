"""The contract of :mod:`transport.server.aiohttp_compat` with the installed aiohttp.

The module reads and replaces private parts of aiohttp. Should a release rename or change
one, these tests fail first, each naming the part and what changed, rather than the
connection cap or the JSON errors failing in some other test (or in production). The first
tests look at the names; the last serve a real application on loopback through
:class:`~transport.server.aiohttp_compat.HandlerRunner` and watch a connection go from its
first request head to idle between two.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import aiohttp
import pytest
from aiohttp import web
from aiohttp.base_protocol import BaseProtocol
from packaging.specifiers import SpecifierSet

from tests.support.pins import pinned
from transport.server.aiohttp_compat import (
    SUPPORTED,
    AnyTarget,
    ConnectionHandler,
    HandlerRunner,
)

WAIT_S = 5.0
"""The bound of every wait here (each is for the loop to run a few steps)."""
REQUEST = b"GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
CHANGED = "aiohttp {version} changed {name}, which transport/server/aiohttp_compat.py relies on"

T = TypeVar("T")


def changed(name: str) -> str:
    return CHANGED.format(version=aiohttp.__version__, name=name)


def slots_of(cls: type) -> set[str]:
    """Every ``__slots__`` name of ``cls`` and its bases."""
    return {name for klass in cls.__mro__ for name in getattr(klass, "__slots__", ())}


# -- the names ---------------------------------------------------------------------------------


def test_pyproject_pins_aiohttp_to_the_versions_the_module_was_checked_against() -> None:
    pin = pinned("aiohttp")
    assert pin == SpecifierSet(SUPPORTED)
    assert aiohttp.__version__ in pin, (
        f"aiohttp {aiohttp.__version__} is installed; transport/server/aiohttp_compat.py was "
        f"checked against {SUPPORTED} only: run these tests on it, then widen the pin"
    )


@pytest.mark.parametrize("name", ["_waiter", "_request_count", "_request_handler"])
def test_the_request_handler_has_the_private_slots_read(name: str) -> None:
    assert name in slots_of(web.RequestHandler), changed(f"RequestHandler.{name}")


def test_the_protocol_keeps_its_loop_in_a_slot() -> None:
    assert "_loop" in slots_of(BaseProtocol), changed("BaseProtocol._loop")
    assert issubclass(web.RequestHandler, BaseProtocol), changed("RequestHandler's bases")


def test_the_runner_builds_its_server_in_a_coroutine_method() -> None:
    make_server = getattr(web.AppRunner, "_make_server", None)
    assert inspect.iscoroutinefunction(make_server), changed("AppRunner._make_server")
    assert list(inspect.signature(make_server).parameters) == ["self"], changed(
        "AppRunner._make_server's parameters"
    )


def test_the_server_makes_a_handler_when_called_with_no_argument() -> None:
    assert list(inspect.signature(web.Server.__call__).parameters) == ["self"], changed(
        "Server.__call__"
    )
    assert "__slots__" not in vars(web.Server), changed("Server's layout (its class is swapped)")


def test_the_server_keeps_its_loop_and_handler_arguments() -> None:
    async def answer(_request: web.BaseRequest) -> web.StreamResponse:
        return web.Response()

    async def made() -> web.Server:
        return web.Server(answer, max_line_size=100)

    server = asyncio.run(made())
    assert isinstance(getattr(server, "_loop", None), asyncio.AbstractEventLoop), changed(
        "Server._loop"
    )
    assert getattr(server, "_kwargs", None) == {"max_line_size": 100}, changed("Server._kwargs")


def test_a_dynamic_resource_matches_a_target_in_a_private_method() -> None:
    match = getattr(web.DynamicResource, "_match", None)
    assert callable(match), changed("DynamicResource._match")
    assert list(inspect.signature(match).parameters) == ["self", "path"], changed(
        "DynamicResource._match's parameters"
    )


def test_handle_error_is_overridden_with_the_same_parameters() -> None:
    parameters = list(inspect.signature(web.RequestHandler.handle_error).parameters)
    assert parameters == ["self", "request", "status", "exc", "message"], changed(
        "RequestHandler.handle_error"
    )


# -- the behaviour, on a real server ------------------------------------------------------------


class Recorded(ConnectionHandler):
    """A connection handler that keeps itself where the test can see it."""

    __slots__ = ("made",)

    def __init__(self, server: web.Server, *, made: list[Recorded], **kwargs: Any) -> None:
        super().__init__(server, **kwargs)
        self.made = made
        made.append(self)


class Refusing(Recorded):
    """Answers every request of its connection with a 503 of its own."""

    __slots__ = ()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.answer_with(self._refuse)
        super().connection_made(transport)

    async def _refuse(self, _request: web.BaseRequest) -> web.StreamResponse:
        return web.Response(status=503, text="refused")


async def until(predicate: Callable[[], T]) -> T:
    """Let the loop run until ``predicate`` is truthy (at most :data:`WAIT_S`)."""
    async with asyncio.timeout(WAIT_S):
        while not (value := predicate()):
            await asyncio.sleep(0)
    return value


@asynccontextmanager
async def serving(
    kind: type[Recorded], release: asyncio.Event, **kwargs: Any
) -> AsyncIterator[tuple[list[Recorded], asyncio.Event, int]]:
    """An application whose ``GET /slow`` waits for ``release`` and whose :class:`AnyTarget`
    answers every other target with its path, served on a loopback port through
    :class:`HandlerRunner` with ``kind`` handlers; the handlers made, an event set when
    ``/slow`` is entered, and the port."""
    made: list[Recorded] = []
    entered = asyncio.Event()

    async def slow(_request: web.Request) -> web.Response:
        entered.set()
        await release.wait()
        return web.Response(text="done")

    async def anything(request: web.Request) -> web.Response:
        return web.Response(text=f"any {request.match_info['path']}")

    app = web.Application()
    app.router.add_get("/slow", slow)
    anywhere = AnyTarget("/{path:.*}")
    app.router.register_resource(anywhere)
    anywhere.add_route("*", anything)

    def handler(server: web.Server, /, **options: Any) -> Recorded:
        return kind(server, made=made, **options)

    runner = HandlerRunner(app, handler=handler, access_log=None, **kwargs)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        yield made, entered, int(runner.addresses[0][1])
    finally:
        await runner.cleanup()


async def read_answer(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return head + await reader.readexactly(length)


async def first(made: list[Recorded]) -> Recorded:
    """The handler of the first connection, once the server has made it."""
    await until(lambda: made)
    return made[0]


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(WAIT_S * 4):
            await scenario()

    asyncio.run(bounded())


def test_a_connection_waits_for_its_first_request_then_is_busy_then_idle() -> None:
    async def scenario() -> None:
        release = asyncio.Event()
        async with serving(Recorded, release) as (made, entered, port):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                handler = await first(made)
                assert await until(handler.waiting_for) == "first", changed("the first wait")
                assert handler.requests_parsed() == 0
                assert handler.loop is asyncio.get_running_loop(), changed("the loop")
                writer.write(REQUEST)
                await entered.wait()
                assert handler.waiting_for() is None, changed("the wait while handling")
                assert handler.requests_parsed() == 1, changed("the count of requests")
                release.set()
                assert (await read_answer(reader)).endswith(b"done")
                assert await until(handler.waiting_for) == "next", changed("the idle wait")
            finally:
                writer.close()

    run(scenario)


def test_the_runner_s_arguments_reach_the_connection_handler() -> None:
    async def scenario() -> None:
        release = asyncio.Event()
        async with serving(Recorded, release, max_line_size=1234) as (made, _, port):
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                handler = await first(made)
                assert type(handler) is Recorded, changed("how the server makes a handler")
                assert handler.max_line_size == 1234, changed("the handler's arguments")
            finally:
                writer.close()

    run(scenario)


def test_a_connection_answered_with_another_coroutine_never_reaches_the_app() -> None:
    async def scenario() -> None:
        release = asyncio.Event()
        async with serving(Refusing, release) as (_, entered, port):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                writer.write(REQUEST)
                answer = await read_answer(reader)
            finally:
                writer.close()
            assert answer.startswith(b"HTTP/1.1 503"), changed("RequestHandler._request_handler")
            assert not entered.is_set()

    run(scenario)


@pytest.mark.parametrize(
    ("request_line", "answer"),
    [
        (b"GET /slow/not HTTP/1.1", b"any /slow/not"),
        (b"POST /slow HTTP/1.1", b"any /slow"),  # a method no route of the path takes
        (b"OPTIONS * HTTP/1.1", b"any *"),
    ],
)
def test_any_target_takes_every_target_no_route_took(request_line: bytes, answer: bytes) -> None:
    async def scenario() -> None:
        async with serving(Recorded, asyncio.Event()) as (_, _, port):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                writer.write(request_line + b"\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                got = await read_answer(reader)
            finally:
                writer.close()
            assert got.startswith(b"HTTP/1.1 200"), changed("how the router asks a resource")
            assert got.endswith(answer), changed("DynamicResource._match's match info")

    run(scenario)
