"""The HTTP API of the v2 spec on aiohttp. Handlers only validate, ask actors and render.

Errors are mapped to statuses here, in one place (:func:`_guarded`): every error answer is
``{"ok": false, "error": "..."}``.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import math
import time
import zlib
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
import structlog
from aiohttp import HttpVersion11, web

from actors.context_builder import ContextBuilder
from actors.core.entries import AgentSnapshot
from actors.core.errors import (
    ActorUnavailable,
    BadRequest,
    Forbidden,
    PayloadTooLarge,
    Unauthorized,
)
from actors.core.exclusion import Exclusions
from actors.core.records import FeedSnapshot, SenseSnapshot, json_list
from actors.core.redaction import Redactor
from actors.core.validation import SENSE_BODY_LIMIT, validate_feed, validate_sense
from actors.digest_store import DigestStore
from actors.feed_buffer import FeedBuffer
from actors.kernel.base import CURRENT_REQUEST, ChildHandle, RelayActor
from actors.kernel.published import Published
from actors.kernel.storage import StorageInfo
from actors.sense_buffer import SenseBuffer
from actors.ticker import Ticker
from config.settings import ConfigError
from transport.auth import ANY_METHOD, Access, Admit, challenge
from transport.batching import Batcher
from transport.bridge import Asker
from transport.metrics import UNMATCHED, HttpStats, RouteStats
from transport.streams import (
    LONG_POLL_MAX_S,
    Event,
    Hub,
    StreamLimits,
    StreamRefused,
    Streams,
    serve,
)

FEED_BODY_LIMIT = 256 * 1024
"""Largest ``POST /feed`` body, in bytes (a long transcript batch fits many times over)."""
CONFIG_BODY_LIMIT = 16 * 1024
ACCEPTED_ENCODINGS = "gzip, deflate"
"""The content codings a request body may have besides ``identity`` (the ``Accept-Encoding``
of a 415 for a coding)."""
_CODINGS = {"gzip": "gzip", "x-gzip": "gzip", "deflate": "deflate"}
"""``Content-Encoding`` values (lower case) read, by the coding they name."""
GZIP_MEMBERS = 16
"""gzip members a body may have (one, from any client that compresses a body once)."""
HISTORY_DEFAULT = 10
HISTORY_MAX = 50
RANGE_DEFAULT = 50
RANGE_MAX = 500

log = structlog.get_logger("relay")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
ExpectHandler = Callable[[web.Request], Awaitable[web.StreamResponse | None]]


class Refused(BadRequest):
    """A request refused for how it was sent rather than for what its body says: the status
    is the class's, and the answer carries :attr:`headers`."""

    status = 400

    def __init__(self, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.headers: Mapping[str, str] = headers or {}


class UnsupportedMediaType(Refused):
    """The body is in a coding or a media type the relay does not read (HTTP 415)."""

    status = 415


class ExpectationFailed(Refused):
    """An ``Expect`` the relay cannot meet: anything but ``100-continue`` (HTTP 417)."""

    status = 417


@dataclass(frozen=True, slots=True)
class Peers:
    """The handles the transport may talk to, and how long it waits for them."""

    feed: ChildHandle[FeedBuffer]
    sense: ChildHandle[SenseBuffer]
    feed_view: Published[FeedSnapshot]
    """What the feed buffer last committed: ``GET /feed`` reads it without a message."""
    sense_view: Published[SenseSnapshot]
    """What the sense buffer last committed, for ``GET /sense``."""
    agent_view: Published[AgentSnapshot]
    """The newest agent entries the digest store committed: streams and long-polls."""
    digest: ChildHandle[DigestStore]
    context: ChildHandle[ContextBuilder]
    ticker: ChildHandle[Ticker]
    actors: dict[str, ChildHandle[Any]]
    """Every supervised actor by short name, for ``/health.actors``."""
    timeout_s: float
    token: str
    storage: StorageInfo
    """Static for the process: the epoch and where the data lives."""
    faults: bool = False
    """Whether ``POST /debug/fault`` exists."""
    max_streams: int = 32
    """Concurrent stream clients at most (``RELAY_MAX_STREAMS``)."""
    trace_requests: bool = False
    """Log every request and give actors its id (``LOG_LEVEL=debug``); errors are always logged."""
    cors_origins: tuple[str, ...] = ()
    """Origins browser pages may call from (``RELAY_CORS_ORIGINS``); see :mod:`transport.auth`."""
    exclusions: Exclusions = field(default_factory=Exclusions)
    """Which screen events ``POST /sense`` drops (``RELAY_EXCLUDE_*``), and how many it did."""
    redactor: Redactor = field(default_factory=Redactor)
    """The buffers' redactor: its ``counts()`` of secrets replaced, by kind (for metrics)."""


class ListAnswers:
    """The answers of one list endpoint for the newest snapshot, reused while nothing changed.

    Pollers and dashboards ask the same question of the same snapshot many times between two
    posts. Answers are kept for one snapshot only, recognised by identity (hashing it would
    hash the whole ring): the first request that sees a newer one drops them. At most
    :attr:`SIZE` answers and :attr:`BUDGET` bytes are kept; a larger answer (a ring of
    megabyte screen events) is built for each request. Used on the loop only.
    """

    SIZE = 8
    BUDGET = 1024 * 1024

    def __init__(self) -> None:
        self._snapshot: object = None
        self._answers: dict[Hashable, bytes] = {}
        self._bytes = 0

    def get(self, snapshot: object, query: Hashable, build: Callable[[], bytes]) -> bytes:
        """The answer to ``query`` over ``snapshot``, built by ``build`` on a miss."""
        if snapshot is not self._snapshot:
            self._snapshot, self._answers, self._bytes = snapshot, {}, 0
        body = self._answers.get(query)
        if body is None:
            body = build()
            if len(self._answers) < self.SIZE and self._bytes + len(body) <= self.BUDGET:
                self._answers[query] = body
                self._bytes += len(body)
        return body


PEERS = web.AppKey("peers", Peers)
ASK = web.AppKey("ask", Asker)
"""Asks the actors, each answer awaited for the actor timeout."""
FEED_ANSWERS = web.AppKey("feed_answers", ListAnswers)
SENSE_ANSWERS = web.AppKey("sense_answers", ListAnswers)
ROUTES = web.AppKey("routes", dict[str, set[str]])
"""The methods each path answers, for the ``Allow`` header of a 405."""
FEED_POSTS = web.AppKey("feed_posts", Batcher)
SENSE_POSTS = web.AppKey("sense_posts", Batcher)
STREAMS = web.AppKey("streams", Streams)
REQUEST_ID = web.RequestKey("request_id", str)
HTTP_STATS = web.AppKey("http_stats", HttpStats)
"""Requests and latencies per route, for ``GET /metrics``."""
ACCESS = web.AppKey("access", Access)
"""The token and CORS policy; the guard adds each answer's CORS headers (:func:`_guarded`)."""
SSE_HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",  # nginx: pass each event on, do not buffer the stream
}
_request_ids = itertools.count(1)


def json_response(body: Any, status: int = 200) -> web.Response:
    """A JSON answer (orjson); the route's guard adds the CORS headers."""
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")


def raw_json_response(body: bytes) -> web.Response:
    """A 200 whose JSON body is already serialised."""
    return web.Response(body=body, content_type="application/json")


def _error(status: int, message: str) -> web.Response:
    return json_response({"ok": False, "error": message}, status)


def _http_message(exc: web.HTTPException) -> str:
    return "not found" if exc.status == 404 else exc.reason.lower()


def _http_error(exc: web.HTTPException) -> web.Response:
    response = _error(exc.status, _http_message(exc))
    if "Allow" in exc.headers:  # a 405 says what is allowed
        response.headers["Allow"] = exc.headers["Allow"]
    return response


def _guarded(
    handler: Handler,
    *,
    trace: bool,
    access: Access,
    admit: Admit,
    stats: RouteStats,
) -> Handler:
    """``handler`` with the relay's access rules, error mapping and request log, applied route
    by route.

    ``trace`` logs every request and gives actors its id (``LOG_LEVEL=debug``). ``admit`` is
    the route's gate (:meth:`transport.auth.Access.gate`): the token and the origin are checked
    before the handler runs; every answer, errors included, gets the request's CORS headers.
    ``stats`` counts the route's requests and latencies for ``GET /metrics`` (a fraction of
    a microsecond: :mod:`transport.metrics`).

    An aiohttp middleware would do the same through two more coroutine calls per request
    (about 1.4 us of a 22 us ``GET /health`` on these machines); requests that match no
    route reach :func:`_no_route`, which is guarded the same way.
    """

    async def guarded(request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        request_id = ""
        traced = None
        if trace:
            request_id = f"{next(_request_ids):x}"
            request[REQUEST_ID] = request_id
            traced = CURRENT_REQUEST.set(request_id)  # asks carry it to the actors' log lines
        status = 500
        error: str | None = None
        response: web.StreamResponse | None = None
        cors = access.cors(request)  # None: a web page of an origin that is not allowed
        try:
            admit(request, cors)
            response = await handler(request)
            status = response.status
        except (BadRequest, ConfigError) as exc:  # 400, 413 (PayloadTooLarge), 415, 417
            status, error, response = _refusal(exc)
        except Unauthorized as exc:
            status, error = 401, str(exc)
            response = _error(status, error)
            response.headers["WWW-Authenticate"] = challenge(exc)
        except Forbidden as exc:
            status, error = 403, str(exc)
        except ActorUnavailable as exc:
            status, error = 503, str(exc)
        except StreamRefused as exc:
            status, error = 503, str(exc)
            response = _error(status, error)
            response.headers["Retry-After"] = str(exc.retry_after_s)
        except web.HTTPException as exc:
            status, error = exc.status, _http_message(exc)
            response = _http_error(exc)
        except Exception as exc:  # keeps the server answering; the traceback goes to the log
            request_id = request_id or f"{next(_request_ids):x}"
            log.exception("http.unhandled", actor="http", request_id=request_id, path=request.path)
            status, error = 500, f"internal error: {type(exc).__name__}"
        finally:
            if traced is not None:
                CURRENT_REQUEST.reset(traced)
            stats.observe(status, time.perf_counter() - started)
            if trace or status >= 400:  # a success is logged only when tracing (LOG_LEVEL=debug)
                _log_request(
                    request, request_id or f"{next(_request_ids):x}", status, error, started
                )
        if response is None:
            response = _error(status, error or "")
        if cors and not response.prepared:  # a stream sent its own (it is under way)
            response.headers.update(cors)
        return response

    return guarded


class _AnyTarget(web.DynamicResource):
    """The resource of :func:`_no_route`: every request target the router asks about.

    A pattern matches targets that start with ``/``; this also takes ``*`` (``OPTIONS *``),
    which aiohttp would otherwise answer with a plain-text 404 of its own. The router asks it
    only when no other resource matched. (A ``CONNECT``'s ``host:port`` is no path at all: the
    router answers it without asking any resource.)
    """

    def _match(self, path: str) -> dict[str, str] | None:
        return {"path": path}


def _expecting(refuse: Handler) -> ExpectHandler:
    """A route's ``Expect`` handler, which aiohttp runs before the route's handler when the
    request has the header.

    ``100-continue`` gets its interim answer, as aiohttp's own handler gives it, and the
    request goes on. Any other expectation is answered by ``refuse``, the route's guard around
    :func:`_refuse_expectation`: a JSON 417, with the route's access rules and counts (aiohttp's
    own is a plain-text 417). HTTP/1.0 has no ``Expect``: it is ignored there.
    """

    async def expect(request: web.Request) -> web.StreamResponse | None:
        if request.version != HttpVersion11:
            return None
        if request.headers.get("Expect", "").lower() != "100-continue":
            return await refuse(request)
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        request.writer.output_size = 0  # the answer proper is still to come
        return None

    return expect


async def _refuse_expectation(request: web.Request) -> web.Response:
    """A request whose ``Expect`` is not ``100-continue``: 417, and the request is not run."""
    expected = request.headers.get("Expect", "")[:100]
    msg = f"Expect: {expected!r} cannot be met; the only expectation known is 100-continue"
    raise ExpectationFailed(msg)


def _refusal(exc: BadRequest | ConfigError) -> tuple[int, str, web.Response]:
    """The status, error and answer for a request refused for its input."""
    status = 413 if isinstance(exc, PayloadTooLarge) else 400
    error = str(exc)
    if not isinstance(exc, Refused):
        return status, error, _error(status, error)
    response = _error(exc.status, error)
    response.headers.update(exc.headers)
    return exc.status, error, response


async def _no_route(request: web.Request) -> web.Response:
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


async def _read_json(request: web.Request, limit: int) -> Any:
    """The body as JSON: at most ``limit`` bytes, as sent and as decoded, of valid UTF-8.

    A body may be compressed (``Content-Encoding: gzip`` or ``deflate``); :func:`_inflate`
    decodes it with ``limit`` on the decoded size, so a small body that would inflate to
    gigabytes stops there (aiohttp's own decompression, which would inflate it before this
    sees it, is off: :func:`build_app`). Any other coding is a 415 before the body is read.

    The body is parsed as JSON whatever its ``Content-Type`` says: clients post JSON without
    one, or as ``text/plain`` (a web page spares itself a CORS preflight so). A body that does
    not parse is a 400 that says where, or a 415 saying that JSON is expected when its
    ``Content-Type`` names another media type (a form, plain text).
    """
    coding = request.headers.get("Content-Encoding")
    if coding is not None:  # checked once: a plain body costs this lookup and no more
        coding = _coding(coding)
    declared = request.content_length
    if declared is not None and declared > limit:
        raise PayloadTooLarge(_too_large(limit))
    body: bytes | bytearray
    try:
        if declared is not None:
            body = await request.read()  # the common case: one read of a known length
        else:
            body = bytearray()  # chunked: count as it comes
            async for chunk in request.content.iter_any():
                body += chunk
                if len(body) > limit:
                    raise PayloadTooLarge(_too_large(limit))
    except ConnectionResetError:  # nobody reads the answer; the log and metrics see a 4xx
        raise BadRequest("the connection closed before the whole body arrived") from None
    except web.RequestPayloadError:  # aiohttp's parser refused the rest of the body
        raise BadRequest("the body ended early or its chunked coding is broken") from None
    if not body:
        raise BadRequest("body is empty; send a JSON object")
    if coding is not None:
        body = _inflate(body, coding, limit)
        if not body:
            raise BadRequest("body is empty; send a JSON object")
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise _not_json(request, body, exc) from None


def _too_large(limit: int) -> str:
    return f"body is larger than {limit} bytes"


def _coding(header: str) -> str | None:
    """The coding a ``Content-Encoding`` names (``gzip`` or ``deflate``), ``None`` for none
    (``identity``, or empty).

    Raises:
        UnsupportedMediaType: any other coding (``br``, ``zstd``, ``compress``, unknown), or
            more than one (stacked codings are not decoded).
    """
    codings = [c for c in (part.strip().lower() for part in header.split(",")) if c]
    codings = [c for c in codings if c != "identity"]
    if not codings:
        return None
    if len(codings) == 1 and codings[0] in _CODINGS:
        return _CODINGS[codings[0]]
    msg = (
        f"Content-Encoding {header[:100]!r} is not supported: send the body as gzip, deflate "
        "or identity (not compressed), one coding at most"
    )
    raise UnsupportedMediaType(msg, {"Accept-Encoding": ACCEPTED_ENCODINGS})


def _inflate(body: bytes | bytearray, coding: str, limit: int) -> bytearray:
    """``body`` decoded from ``coding`` (``gzip``, or ``deflate``: zlib-wrapped as HTTP says,
    or raw as some clients send it).

    Inflating stops one byte past ``limit``: however much the body would inflate to, this
    costs at most ``limit`` bytes and the time to make them. Several gzip members in a row are
    one body, as gzip itself reads them, up to :data:`GZIP_MEMBERS` (each costs a decoder:
    thousands of empty members must not cost thousands).

    Raises:
        PayloadTooLarge: the decoded body is larger than ``limit``.
        BadRequest: the body is not in ``coding``, is cut short, or has bytes after its end.
    """
    if coding == "gzip":
        wbits = zlib.MAX_WBITS | 16
    elif len(body) > 1 and body[0] & 0x0F == 8 and ((body[0] << 8) | body[1]) % 31 == 0:
        wbits = zlib.MAX_WBITS  # a zlib header: HTTP's deflate
    else:
        wbits = -zlib.MAX_WBITS  # raw deflate
    out = bytearray()
    rest: bytes | bytearray = body
    for _ in range(GZIP_MEMBERS):
        decoder = zlib.decompressobj(wbits)
        try:
            # At most one byte past the limit: output stops there, the rest of the input waits.
            out += decoder.decompress(rest, limit + 1 - len(out))
        except zlib.error:
            raise BadRequest(f"body is not valid {coding}") from None
        if len(out) > limit:
            raise PayloadTooLarge(_too_large(limit))
        if not decoder.eof:
            raise BadRequest(f"body is not valid {coding}: it ends before the compressed data")
        rest = decoder.unused_data
        if not rest:
            return out
        if coding != "gzip":
            break
    msg = f"body is not valid {coding}: there are bytes after its end"
    raise BadRequest(msg)


def _not_json(request: web.Request, body: bytes | bytearray, exc: Exception) -> BadRequest:
    """The error for a body that does not parse as JSON."""
    media = request.headers.get("Content-Type", "").partition(";")[0].strip().lower()
    if media and "json" not in media:  # no type, or any JSON type, reads as JSON
        msg = (
            "expected a JSON body (Content-Type: application/json); this one, sent as "
            f"{media[:100]}, is not JSON"
        )
        return UnsupportedMediaType(msg)
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return BadRequest("body is not valid UTF-8")
    return BadRequest(f"body is not valid JSON: {exc}")


def _int_param(request: web.Request, name: str, default: int) -> int:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        msg = f"{name} must be a whole number, got {raw!r}"
        raise BadRequest(msg) from None


# -- handlers -------------------------------------------------------------------------------


async def post_feed(request: web.Request) -> web.Response:
    """``POST /feed``: store a message; answers ``{ok, id}``."""
    text, priority = validate_feed(await _read_json(request, FEED_BODY_LIMIT))
    item = await request.app[FEED_POSTS].submit((text, priority))
    return json_response({"ok": True, "id": item.id})


async def get_feed(request: web.Request) -> web.Response:
    """``GET /feed?after=N``: messages with an id above N, oldest first."""
    after = _int_param(request, "after", 0)
    peers = request.app[PEERS]
    snapshot = peers.feed_view.value
    body = request.app[FEED_ANSWERS].get(
        snapshot,
        after,
        lambda: json_list("messages", [i.json for i in snapshot.after(after)], peers.storage.epoch),
    )
    return raw_json_response(body)


async def post_sense(request: web.Request) -> web.Response:
    """``POST /sense``: store a screen event; answers ``{ok, id}``.

    An event of an excluded app or window (``RELAY_EXCLUDE_APPS``/``_TITLES``) is dropped
    here, before any actor sees it, and answered ``{ok, dropped: "excluded"}``, without an id.
    """
    event = validate_sense(await _read_json(request, SENSE_BODY_LIMIT))
    reason = request.app[PEERS].exclusions.check(event)
    if reason is not None:  # the title is not logged: it may be what is private
        log.debug("sense.excluded", actor="http", reason=reason, request_id=request.get(REQUEST_ID))
        return json_response({"ok": True, "dropped": "excluded"})
    stored = await request.app[SENSE_POSTS].submit(event)
    return json_response({"ok": True, "id": stored.id})


async def get_sense(request: web.Request) -> web.Response:
    """``GET /sense?after=N&meta_only=true``: events above N; meta_only drops image data."""
    after = _int_param(request, "after", 0)
    meta_only = request.query.get("meta_only", "").lower() in ("true", "1")
    peers = request.app[PEERS]
    snapshot = peers.sense_view.value

    def build() -> bytes:
        events = snapshot.after(after)
        bodies = [e.json_meta_only if meta_only else e.json for e in events]
        return json_list("events", bodies, peers.storage.epoch)

    return raw_json_response(request.app[SENSE_ANSWERS].get(snapshot, (after, meta_only), build))


async def get_digest(request: web.Request) -> web.Response:
    """``GET /agent/digest``: the latest digest, or null before the first.

    With ``wait`` (seconds, above 0 and at most 60) it is a long-poll: the answer comes as
    soon as the digest's id is above ``after`` (default 0), or with the current digest (maybe
    null) once ``wait`` has passed. It reads what the digest store last committed.
    """
    if not request.query.get("wait"):
        digest = await request.app[ASK](request.app[PEERS].digest, DigestStore.latest_digest)
        return json_response({"ok": True, "digest": digest})
    wait_s = _wait_param(request)
    after = _int_param(request, "after", 0)
    latest = await request.app[STREAMS].newer_entry(after, wait_s)
    return json_response({"ok": True, "digest": latest.digest_json() if latest else None})


def _wait_param(request: web.Request) -> float:
    raw = request.query["wait"]
    try:
        wait_s = float(raw)
    except ValueError:
        wait_s = math.nan
    if not 0 < wait_s <= LONG_POLL_MAX_S:  # also refuses nan
        msg = (
            f"wait must be a number of seconds above 0 and at most {LONG_POLL_MAX_S:g}, got {raw!r}"
        )
        raise BadRequest(msg)
    return wait_s


async def get_feed_stream(request: web.Request) -> web.StreamResponse:
    """``GET /feed/stream``: Server-Sent Events, one ``feed`` event per feed item."""
    return await _stream(request, request.app[STREAMS].feed)


async def get_agent_stream(request: web.Request) -> web.StreamResponse:
    """``GET /agent/stream``: Server-Sent Events, one ``agent`` event per agent entry."""
    return await _stream(request, request.app[STREAMS].agent)


async def _stream(request: web.Request, hub: Hub[Any]) -> web.StreamResponse:
    """Replay from the resume point (``Last-Event-ID``, else ``?after=``, else none), then
    go live; see :mod:`transport.streams`."""
    resume = _resume_point(request)
    if request.method == "HEAD":
        return web.Response(headers=SSE_HEADERS)
    streams = request.app[STREAMS]
    sub, ring = streams.subscribe(hub, request)
    try:
        replay = [] if resume is None else await hub.replay(resume, ring)
        headers: Mapping[str, str] = {**SSE_HEADERS, **(request.app[ACCESS].cors(request) or {})}
        return await serve(request, hub, sub, replay=replay, headers=headers, limits=streams.limits)
    finally:
        hub.release(sub)


def _resume_point(request: web.Request) -> int | None:
    """The id after which to replay, or ``None`` for live only; below 0 counts as 0."""
    raw = request.headers.get("Last-Event-ID", "").strip()
    if not raw:
        after = _optional_int(request, "after")
        return None if after is None else max(after, 0)
    try:
        return max(int(raw), 0)
    except ValueError:
        msg = f"Last-Event-ID must be a whole number, got {raw!r}"
        raise BadRequest(msg) from None


async def get_last(request: web.Request) -> web.Response:
    """``GET /agent/last``: the newest agent entry, or null."""
    result = await request.app[ASK](request.app[PEERS].digest, DigestStore.last)
    return json_response({"ok": True, "result": result})


async def get_history(request: web.Request) -> web.Response:
    """``GET /agent/history``: the newest entries, or a time range page by page.

    Without ``since``/``until``: the spec's behaviour, newest first, ``limit`` 10 by default
    and 50 at most. With either: entries with ``since <= ts < until`` (epoch ms) from the
    whole retention, newest first, ``limit`` 50 by default and 500 at most; ``next`` is the
    ``before`` cursor of the next page, or null on the last.
    """
    peers = request.app[PEERS]
    ranged = any(k in request.query for k in ("since", "until", "before"))
    limit = _int_param(request, "limit", RANGE_DEFAULT if ranged else HISTORY_DEFAULT)
    if limit < 1:
        msg = f"limit must be at least 1, got {limit}"
        raise BadRequest(msg)
    if not ranged:
        results = await request.app[ASK](peers.digest, DigestStore.history, min(limit, HISTORY_MAX))
        return json_response({"ok": True, "results": results, "epoch": peers.storage.epoch})
    since = _optional_int(request, "since")
    until = _optional_int(request, "until")
    before = _optional_int(request, "before")
    if since is not None and until is not None and until < since:
        msg = "until must not be before since"
        raise BadRequest(msg)
    results, cursor = await request.app[ASK](
        peers.digest, DigestStore.history_range, since, until, before, min(limit, RANGE_MAX)
    )
    return json_response(
        {"ok": True, "results": results, "next": cursor, "epoch": peers.storage.epoch}
    )


def _optional_int(request: web.Request, name: str) -> int | None:
    if not request.query.get(name):
        return None
    return _int_param(request, name, 0)


async def get_context(request: web.Request) -> web.Response:
    """``GET /agent/context``: the context window as the next tick would see it."""
    peers = request.app[PEERS]
    config = await request.app[ASK](peers.ticker, Ticker.config)
    window = await request.app[ASK](peers.context, ContextBuilder.window, config.max_age_ms)
    return json_response({"ok": True, "context": window.to_json()})


async def get_config(request: web.Request) -> web.Response:
    """``GET /agent/config``: the runtime configuration; ``hasApiKey``, never the key."""
    config = await request.app[ASK](request.app[PEERS].ticker, Ticker.config)
    return json_response({"ok": True, "config": config.to_public()})


async def post_config(request: web.Request) -> web.Response:
    """``POST /agent/config``: change fields at runtime; a bad field changes nothing.

    The guard has checked the token. ``openrouterApiKey`` is refused (403) while no token is
    set: on a relay anyone on this machine (or a web page, were its origin allowed) can
    call, the key would be theirs to swap, pointing the user's context at their account.
    """
    peers = request.app[PEERS]
    body = await _read_json(request, CONFIG_BODY_LIMIT)
    if not isinstance(body, dict):
        raise BadRequest("body must be a JSON object")
    if "openrouterApiKey" in body and not peers.token:
        msg = (
            "openrouterApiKey can be changed over HTTP only when the relay has a token: set "
            "RELAY_TOKEN (and send Authorization: Bearer <token>), or set OPENROUTER_API_KEY "
            "in the relay's environment"
        )
        raise Forbidden(msg)
    config = await request.app[ASK](peers.ticker, Ticker.update_config, body)
    return json_response({"ok": True, "config": config.to_public()})


FAULT_ACTORS = ("feed", "sense", "context", "llm", "digest", "ticker", "http")
FAULT_KINDS = ("crash", "hang")
MAX_HANG_S = 3600


async def post_fault(request: web.Request) -> web.Response:
    """``POST /debug/fault``: make an actor crash on its next message or hang for N seconds.

    Only with ``RELAY_FAULTS=1``. Answers before the fault fires.
    """
    body = await _read_json(request, CONFIG_BODY_LIMIT)
    if not isinstance(body, dict):
        raise BadRequest("body must be a JSON object")
    actor, kind, seconds = body.get("actor"), body.get("kind"), body.get("seconds", 0)
    if actor not in FAULT_ACTORS:
        msg = f"actor must be one of {', '.join(FAULT_ACTORS)}"
        raise BadRequest(msg)
    if kind not in FAULT_KINDS:
        msg = f"kind must be one of {', '.join(FAULT_KINDS)}"
        raise BadRequest(msg)
    if kind == "hang" and (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not 0 < seconds <= MAX_HANG_S
    ):
        msg = f"seconds must be a number above 0 and at most {MAX_HANG_S} for a hang"
        raise BadRequest(msg)
    peers = request.app[PEERS]
    peers.actors[actor].tell(RelayActor.inject_fault, kind, float(seconds))
    log.warning("debug.fault", actor="http", target=actor, kind=kind, seconds=seconds)
    return json_response({"ok": True})


async def get_health(request: web.Request) -> web.Response:
    """``GET /health``: counts, agent stats and every actor's state; 503 if one is stuck.

    Each figure is asked of the actor that owns it, after the request arrived, and nothing
    is cached: a ``/health`` asked after a write's answer shows that write. An actor that
    does not answer within the actor timeout makes the answer a 503 naming it.
    """
    peers, ask = request.app[PEERS], request.app[ASK]
    names = ("messages", "senseEvents", "agent", "config", "ticker")
    results = await asyncio.gather(
        ask(peers.feed, FeedBuffer.count),
        ask(peers.sense, SenseBuffer.count),
        ask(peers.digest, DigestStore.stats),
        ask(peers.ticker, Ticker.config),
        ask(peers.ticker, Ticker.status),
        return_exceptions=True,
    )
    answers = dict(zip(names, results, strict=True))
    errors = [str(v) for v in answers.values() if isinstance(v, BaseException)]
    for value in answers.values():
        if isinstance(value, BaseException) and not isinstance(value, ActorUnavailable):
            raise value
    stats = answers["agent"] if isinstance(answers["agent"], dict) else {}
    config = answers["config"]
    agent: dict[str, Any] = {}
    if not isinstance(config, BaseException):
        agent.update(
            enabled=config.enabled,
            active=config.active,
            hasApiKey=bool(config.api_key),
            model=config.model,
            intervalMs=config.interval_ms,
            debounceMs=config.effective_debounce_ms,
            cooldownMs=config.cooldown_ms,
        )
    agent.update(stats)
    if isinstance(answers["ticker"], dict):
        agent.update(answers["ticker"])
    if not request.app[ACCESS].authorized(request):
        for key in PRIVATE_HEALTH_FIELDS:
            if key in agent:
                agent[key] = None
    body: dict[str, Any] = {
        "ok": not errors,
        "epoch": peers.storage.epoch,
        "messages": answers["messages"] if isinstance(answers["messages"], int) else None,
        "senseEvents": answers["senseEvents"] if isinstance(answers["senseEvents"], int) else None,
        "agent": agent,
        "actors": {
            name: {
                "alive": handle.alive,
                "restarts": handle.restarts,
                "lastRestart": handle.last_restart_ms,
                "state": handle.state,
            }
            for name, handle in peers.actors.items()
        },
        "storage": peers.storage.to_json(),
        "streams": request.app[STREAMS].health(),
    }
    if errors:
        body["error"] = "; ".join(errors)
    return json_response(body, 200 if not errors else 503)


PRIVATE_HEALTH_FIELDS = ("lastDigest", "lastError")
"""``/health.agent`` fields that say what the user did (the digest's first 200 characters,
an LLM error that may quote the prompt): ``null`` for callers without the token, since
``/health`` needs none."""


async def get_metrics(request: web.Request) -> web.Response:
    """``GET /metrics``: the Prometheus text format (:mod:`transport.exposition`)."""
    # imported at the first scrape: prometheus-client costs 2.4 MB and 30 ms to import
    from transport.exposition import CONTENT_TYPE, render  # noqa: PLC0415

    peers, http = request.app[PEERS], request.app[HTTP_STATS]
    excluded = sum(peers.exclusions.counts().values()) - http.excluded_before
    body = await render(
        peers,
        request.app[ASK],
        http,
        request.app[STREAMS],
        excluded={"sense": excluded},
        redactions=peers.redactor.counts(),
    )
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})


async def get_openapi(_request: web.Request) -> web.Response:
    """``GET /openapi.json``: the OpenAPI 3.1 description of this API (:mod:`transport.openapi`)."""
    # imported at the first request: the document and importlib.metadata cost 1.5 MB resident
    from transport.openapi import openapi_json  # noqa: PLC0415

    return raw_json_response(openapi_json())


def _feed_items(snapshot: FeedSnapshot) -> tuple[Event, ...]:
    return snapshot.items


def _agent_entries(snapshot: AgentSnapshot) -> tuple[Event, ...]:
    return snapshot.entries


def _streams(peers: Peers, ask: Asker, limits: StreamLimits) -> Streams:
    async def stored_feed(after: int, limit: int) -> tuple[Event, ...]:
        return await ask(peers.feed, FeedBuffer.stored_after, after, limit)

    async def stored_entries(after: int, limit: int) -> tuple[Event, ...]:
        return await ask(peers.digest, DigestStore.entries_after, after, limit)

    return Streams(
        feed=Hub("feed", peers.feed_view, _feed_items, stored_feed, limits),
        agent=Hub("agent", peers.agent_view, _agent_entries, stored_entries, limits),
        max_streams=peers.max_streams,
        limits=limits,
    )


def build_app(peers: Peers, *, stream_limits: StreamLimits | None = None) -> web.Application:
    """The aiohttp application with every route of the v2 spec, and the streams.

    ``stream_limits``: the streams' keepalive, timeouts and bounds; by default the constants
    of :mod:`transport.streams` as they are when the app is built.
    """
    # Bodies are decoded by _read_json, which bounds the decoded size; aiohttp would inflate
    # them first, and answer a coding it cannot decode in plain text before any route runs.
    app = web.Application(
        client_max_size=SENSE_BODY_LIMIT + 1, handler_args={"auto_decompress": False}
    )
    app[PEERS] = peers
    app[ASK] = ask = Asker(peers.timeout_s)
    streams = _streams(peers, ask, stream_limits or StreamLimits.current())
    app[STREAMS] = streams
    app.on_startup.append(streams.on_startup)
    app.on_shutdown.append(streams.on_shutdown)  # before the server waits for its handlers
    app.on_cleanup.append(streams.on_cleanup)
    app[FEED_POSTS] = Batcher(peers.feed, FeedBuffer.append_many, peers.timeout_s)
    app[SENSE_POSTS] = Batcher(peers.sense, SenseBuffer.append_many, peers.timeout_s)
    app[FEED_ANSWERS] = ListAnswers()
    app[SENSE_ANSWERS] = ListAnswers()
    access = Access(peers.token, peers.cors_origins)
    app[ACCESS] = access
    http_stats = app[HTTP_STATS] = HttpStats(sum(peers.exclusions.counts().values()))
    routes: list[tuple[str, str, Handler]] = [
        ("POST", "/feed", post_feed),
        ("GET", "/feed", get_feed),
        ("GET", "/feed/stream", get_feed_stream),
        ("POST", "/sense", post_sense),
        ("GET", "/sense", get_sense),
        ("GET", "/agent/digest", get_digest),
        ("GET", "/agent/stream", get_agent_stream),
        ("GET", "/agent/last", get_last),
        ("GET", "/agent/history", get_history),
        ("GET", "/agent/context", get_context),
        ("GET", "/agent/config", get_config),
        ("POST", "/agent/config", post_config),
        ("GET", "/health", get_health),
        ("GET", "/metrics", get_metrics),
        ("GET", "/openapi.json", get_openapi),
    ]
    if peers.faults:
        routes.append(("POST", "/debug/fault", post_fault))
    allowed: dict[str, set[str]] = {}
    for method, path, handler in routes:
        guard = functools.partial(
            _guarded,
            trace=peers.trace_requests,
            access=access,
            admit=access.gate(method, path),
            stats=http_stats.route(method, path),
        )
        guarded = guard(handler)
        expect = _expecting(guard(_refuse_expectation))
        if method == "GET":
            app.router.add_get(path, guarded, expect_handler=expect)  # and HEAD
        else:
            app.router.add_route(method, path, guarded, expect_handler=expect)
        allowed.setdefault(path, {"OPTIONS"}).update(
            {method, "HEAD"} if method == "GET" else {method}
        )
    app[ROUTES] = allowed
    guard = functools.partial(
        _guarded,
        trace=peers.trace_requests,
        access=access,
        admit=access.gate(ANY_METHOD, ""),
        stats=http_stats.route(ANY_METHOD, UNMATCHED),
    )
    anywhere = _AnyTarget("/{path:.*}")
    app.router.register_resource(anywhere)  # last: only what no route took
    anywhere.add_route("*", guard(_no_route), expect_handler=_expecting(guard(_refuse_expectation)))
    return app
