"""Each route's guard: access rules, error mapping and the request's log line, in one place.

Every error answer is ``{"ok": false, "error": "..."}`` with a 4xx for what the client got
wrong and a 503 when an actor is restarting or did not answer in time (:func:`guarded`).
"""

from __future__ import annotations

import contextvars
import itertools
import time
from collections.abc import Awaitable, Callable, Mapping

import structlog
from aiohttp import HttpVersion11, hdrs, web
from aiohttp.typedefs import Handler

from actors.core.errors import ActorUnavailable, BadRequest, FeatureUnavailable, RelayError
from actors.core.shapes import Shape, encode
from actors.kernel.base import CURRENT_REQUEST
from config.common.errors import ConfigError
from transport.shell.answers import Error
from transport.shell.auth import Access, Admit, Forbidden, Misdirected, Unauthorized, challenge
from transport.shell.metrics import RouteStats
from transport.shell.state import ACCESS, BODY_HOLD, CONNECTIONS, REQUEST_ID, ROUTES
from transport.streams.fanout import (
    StreamRefused,
)

log = structlog.get_logger("relay")


ExpectHandler = Callable[[web.Request], Awaitable[web.StreamResponse | None]]


class Refused(BadRequest):
    """A request refused for how it was sent rather than for what its body says: the status
    is the class's, and the answer carries :attr:`headers`."""

    status = 400
    close = False
    """Whether the connection is closed after the answer (the request's body is not all in)."""

    def __init__(self, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.headers: Mapping[str, str] = headers or {}


class PayloadTooLarge(Refused):
    """The body is over the endpoint's limit (HTTP 413)."""

    status = 413


class UnsupportedMediaType(Refused):
    """The body is in a coding or a media type the relay does not read (HTTP 415)."""

    status = 415


class BodyTimeout(Refused):
    """The body stopped coming before it was whole (HTTP 408); the connection is closed after
    the answer, as what is left of the body may still arrive."""

    status = 408
    close = True


class BodiesFull(Refused):
    """The request bodies held at once are at their budget (``RELAY_BODY_MEMORY_MB``), or this
    one was cut to make room for another: HTTP 503 with ``Retry-After``, the rest of the body
    unread and the connection closed."""

    status = 503
    close = True


class ExpectationFailed(Refused):
    """An ``Expect`` the relay cannot meet: anything but ``100-continue`` (HTTP 417)."""

    status = 417


_request_ids = itertools.count(1)

_STATUSES: tuple[tuple[type[RelayError], int], ...] = (
    (Forbidden, 403),
    (Misdirected, 421),
    (ActorUnavailable, 503),
    (FeatureUnavailable, 503),
)
"""The statuses of the errors answered with their message alone."""


def _status_of(exc: RelayError) -> int:
    return next(status for kind, status in _STATUSES if isinstance(exc, kind))


def json_response(body: Shape, status: int = 200) -> web.Response:
    """``body`` encoded as JSON (:mod:`transport.shell.answers`); the route's guard adds the CORS
    headers."""
    return web.Response(body=encode(body), status=status, content_type="application/json")


def raw_json_response(body: bytes) -> web.Response:
    """A 200 whose JSON body is already serialised."""
    return web.Response(body=body, content_type="application/json")


def error_response(status: int, message: str) -> web.Response:
    return json_response(Error(ok=False, error=message), status)


def _http_message(exc: web.HTTPException) -> str:
    return "not found" if exc.status == 404 else exc.reason.lower()


def http_error(exc: web.HTTPException) -> web.Response:
    response = error_response(exc.status, _http_message(exc))
    if "Allow" in exc.headers:  # a 405 says what is allowed
        response.headers["Allow"] = exc.headers["Allow"]
    return response


def guarded(
    handler: Handler,
    *,
    trace: bool,
    access: Access,
    admit: Admit,
    stats: RouteStats,
) -> Handler:
    """``handler`` with the relay's access rules, error mapping and request log, applied route
    by route.

    ``trace`` logs every request and gives actors its id (``LOG_LEVEL=debug``). A ``Host``
    the relay does not serve is a 421 before anything else
    (:meth:`~transport.shell.auth.Access.check_host`; a set look-up here, the method on a miss).
    ``admit`` is the route's gate
    (:meth:`transport.shell.auth.Access.gate`): the origin, the site and the token are checked
    before the handler runs; every answer, errors included, gets the request's CORS headers.
    ``stats`` counts the route's requests and latencies for ``GET /metrics``
    (:mod:`transport.shell.metrics`). Once the handler is done, whatever became of it, the bytes its
    body was charged (:class:`transport.shell.connections.BodyBudget`) are given back.

    An aiohttp middleware would do the same through two more coroutine calls per request;
    requests that match no route reach :func:`no_route`, which is guarded the same way.
    """

    hosts = access.hosts  # a set the access policy keeps up to date

    async def guarded(request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        request_id, traced = _traced(request) if trace else ("", None)
        status = 500
        error: str | None = None
        response: web.StreamResponse | None = None
        cors: Mapping[str, str] | None = None  # None: no CORS headers
        try:
            if request.headers.get(hdrs.HOST) not in hosts:
                access.check_host(request)  # 421 unless a spelling the set lacks
            cors = access.cors(request)  # None: a web page of an origin that is not allowed
            admit(request, cors)
            response = await handler(request)
            status = response.status
        except (BadRequest, ConfigError) as exc:  # 400, 413 (PayloadTooLarge), 415, 417
            status, error, response = _refusal(exc)
        except Unauthorized as exc:
            status, error = 401, str(exc)
            response = error_response(status, error)
            response.headers["WWW-Authenticate"] = challenge(exc)
        except (Forbidden, Misdirected, ActorUnavailable, FeatureUnavailable) as exc:
            status, error = _status_of(exc), str(exc)
        except StreamRefused as exc:
            status, error = 503, str(exc)
            response = error_response(status, error)
            response.headers["Retry-After"] = str(exc.retry_after_s)
        except web.HTTPException as exc:
            status, error = exc.status, _http_message(exc)
            response = http_error(exc)
        except Exception as exc:  # keeps the server answering; the traceback goes to the log
            request_id = request_id or f"{next(_request_ids):x}"
            log.exception("http.unhandled", actor="http", request_id=request_id, path=request.path)
            status, error = 500, f"internal error: {type(exc).__name__}"
        finally:
            if (hold := request.get(BODY_HOLD)) is not None:  # the handler is done with it
                request.app[CONNECTIONS].bodies.give_back(hold)
            if traced is not None:
                CURRENT_REQUEST.reset(traced)
            stats.observe(status, time.perf_counter() - started)
            if trace or status >= 400:  # a success is logged only when tracing (LOG_LEVEL=debug)
                _log_request(
                    request, request_id or f"{next(_request_ids):x}", status, error, started
                )
        if response is None:
            response = error_response(status, error or "")
        if cors and not response.prepared:  # a stream sent its own (it is under way)
            response.headers.update(cors)
        return response

    return guarded


def _traced(request: web.Request) -> tuple[str, contextvars.Token[str | None]]:
    """Give ``request`` an id, which the actors' log lines carry for the asks it makes."""
    request_id = f"{next(_request_ids):x}"
    request[REQUEST_ID] = request_id
    return request_id, CURRENT_REQUEST.set(request_id)


def expecting(refuse: Handler, access: Access) -> ExpectHandler:
    """A route's ``Expect`` handler, which aiohttp runs before the route's handler when the
    request has the header.

    ``100-continue`` gets its interim answer, as aiohttp's own handler gives it, and the
    request goes on. Any other expectation is answered by ``refuse``, the route's guard around
    :func:`refuse_expectation`: a JSON 417, with the route's access rules and counts (aiohttp's
    own is a plain-text 417). So is a request for a host the relay does not serve, which the
    guard answers 421 without the interim answer. HTTP/1.0 has no ``Expect``: it is ignored
    there.
    """
    hosts = access.hosts

    async def expect(request: web.Request) -> web.StreamResponse | None:
        if request.version != HttpVersion11:
            return None
        if request.headers.get("Expect", "").lower() != "100-continue" or (
            request.headers.get(hdrs.HOST) not in hosts and not access.serves(request)
        ):
            return await refuse(request)
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        request.writer.output_size = 0  # the answer proper is still to come
        return None

    return expect


async def refuse_expectation(request: web.Request) -> web.Response:
    """A request whose ``Expect`` is not ``100-continue``: 417, and the request is not run."""
    expected = request.headers.get("Expect", "")[:100]
    msg = f"Expect: {expected!r} cannot be met; the only expectation known is 100-continue"
    raise ExpectationFailed(msg)


def _refusal(exc: BadRequest | ConfigError) -> tuple[int, str, web.Response]:
    """The status, error and answer for a request refused for its input."""
    error = str(exc)
    if not isinstance(exc, Refused):
        return 400, error, error_response(400, error)
    response = error_response(exc.status, error)
    response.headers.update(exc.headers)
    if exc.close:
        response.force_close()
    return exc.status, error, response


async def no_route(request: web.Request) -> web.Response:
    """Any path and method no route takes: CORS preflight (204), else 405 or 404.

    With a token set, the guard has already answered 401 to a caller without it, whatever
    the path: 404 and 405 (with ``Allow``) would let it map the API.
    """
    if request.method == "OPTIONS":
        return request.app[ACCESS].preflight(request)
    allowed = request.app[ROUTES].get(request.path)
    if allowed:
        raise web.HTTPMethodNotAllowed(request.method, allowed)
    raise web.HTTPNotFound


def _log_request(
    request: web.Request, request_id: str, status: int, error: str | None, started: float
) -> None:
    """The request's one log line (every request at ``debug``, errors at ``info``/``warning``)."""
    elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
    level = "debug" if status < 400 else "info" if status < 500 else "warning"
    getattr(log, level)(
        "http.request",
        actor="http",
        request_id=request_id,
        method=request.method,
        path=request.path,
        status=status,
        ms=elapsed_ms,
        **({"error": error} if error else {}),
    )
