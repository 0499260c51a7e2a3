"""What a request brings: its JSON body, decoded and bounded, and its query parameters."""

from __future__ import annotations

import asyncio
import math
import zlib
from typing import Any, TypeVar

import msgspec
import orjson
import structlog
from aiohttp import web

from actors.core.bodies import decode
from actors.core.errors import BadRequest
from transport.shell.connections import BODY_RETRY_AFTER_S, BodyHold, Connections
from transport.shell.guard import (
    BodiesFull,
    BodyTimeout,
    PayloadTooLarge,
    Refused,
    UnsupportedMediaType,
)
from transport.shell.state import BODY_HOLD, CONNECTIONS
from transport.streams.fanout import (
    LONG_POLL_MAX_S,
)

log = structlog.get_logger("relay")


ACCEPTED_ENCODINGS = "gzip, deflate"
"""The content codings a request body may have besides ``identity`` (the ``Accept-Encoding``
of a 415 for a coding)."""


_CODINGS = {"gzip": "gzip", "x-gzip": "gzip", "deflate": "deflate"}
"""``Content-Encoding`` values (lower case) read, by the coding they name."""


GZIP_MEMBERS = 16
"""gzip members a body may have (one, from any client that compresses a body once)."""


T = TypeVar("T", bound=msgspec.Struct)


async def read_body(request: web.Request, limit: int, kind: type[T]) -> T:
    """The body decoded into ``kind``, which validates it (:mod:`actors.core.bodies`); read as
    :func:`read_json` reads it.

    Raises:
        BadRequest: as :func:`read_json`, or the body is not a ``kind`` (naming the field).
    """
    body = await _read(request, limit)
    try:
        if not body.isascii():  # the decoder checks the strings it keeps, not those it skips
            body.decode("utf-8")
        return decode(body, kind)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise _not_json(request, body, exc) from None


async def read_json(request: web.Request, limit: int) -> Any:
    """The body as JSON: at most ``limit`` bytes, as sent and as decoded, of valid UTF-8.

    A body may be compressed (``Content-Encoding: gzip`` or ``deflate``); :func:`_inflate`
    decodes it with ``limit`` on the decoded size, so a small body that would inflate to
    gigabytes stops there (aiohttp's own decompression, which would inflate it before this
    sees it, is off: :func:`build_app`). Any other coding is a 415 before the body is read.

    The body is parsed as JSON whatever its ``Content-Type`` says: clients post JSON without
    one, or as ``text/plain`` (a web page spares itself a CORS preflight so). A body that does
    not parse is a 400 that says where, or a 415 saying that JSON is expected when its
    ``Content-Type`` names another media type (a form, plain text).

    The bytes of a body count against the budget every request shares
    (:class:`transport.shell.connections.BodyBudget`) as they are read, its ``Content-Length``
    before any of it: past it, a 503 with ``Retry-After``
    (:class:`transport.shell.guard.BodiesFull`), the rest unread, unless cutting slower bodies
    makes room. A body not yet whole when its head came must keep to a minimum rate as it
    arrives (:func:`_read_arriving`): a 408 else.
    """
    body = await _read(request, limit)
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise _not_json(request, body, exc) from None


async def read_bytes(request: web.Request, limit: int) -> bytes | bytearray:
    """The body as bytes, read as :func:`read_json` reads it (limits, codings, timeout), for
    an endpoint whose body is not JSON.

    Raises:
        BadRequest: empty, too large (413), in a coding the relay does not read (415), cut
            short, or not whole in time (408).
    """
    return await _read(request, limit, "send the audio")


async def _read(
    request: web.Request, limit: int, expected: str = "send a JSON object"
) -> bytes | bytearray:
    """The body, whole, decompressed and not empty (see :func:`read_json`); ``expected``
    says what an empty body should have been."""
    coding = request.headers.get("Content-Encoding")
    if coding is not None:  # checked once: a plain body costs this lookup and no more
        coding = _coding(coding)
    declared = request.content_length
    if declared is not None and declared > limit:
        raise PayloadTooLarge(_too_large(limit))
    if declared is not None:
        _charge(request, declared)  # before any of it is read
    try:
        if request.content.is_eof():  # the common case: the body came with the head
            body = await _read_body(request, declared, limit)
        else:
            body = await _read_arriving(request, declared, limit)
    except ConnectionResetError:  # nobody reads the answer; the log and metrics see a 4xx
        raise BadRequest("the connection closed before the whole body arrived") from None
    except web.RequestPayloadError:  # aiohttp's parser refused the rest of the body
        raise BadRequest("the body ended early or its chunked coding is broken") from None
    if not body:
        raise BadRequest(f"body is empty; {expected}")
    if coding is not None:
        body = _inflate(body, coding, limit)
        _charge(request, len(body))  # held besides the body as sent, until the handler is done
        if not body:
            raise BadRequest(f"body is empty; {expected}")
    return body


async def _read_body(request: web.Request, declared: int | None, limit: int) -> bytes | bytearray:
    """The body as sent, all of it here already: one read of a known length, or chunks
    counted against ``limit``."""
    if declared is not None:
        return await request.read()
    body = bytearray()
    async for chunk in request.content.iter_any():
        _charge(request, len(chunk))
        body += chunk
        if len(body) > limit:
            raise PayloadTooLarge(_too_large(limit))
    return body


async def _read_arriving(request: web.Request, declared: int | None, limit: int) -> bytearray:
    """The body as sent, while it arrives: whole within the body timeout, and at the minimum
    rate (:data:`transport.shell.connections.BODY_MIN_RATE`) after its first seconds.

    The deadline moves on with each chunk, so a body that keeps to the rate costs one timer
    for all its chunks. While the body arrives, the budget may cut it for a faster one
    (:class:`transport.shell.connections.BodyBudget`), which ends the read at once.

    Raises:
        BodyTimeout: the body was not whole within the body timeout, or came too slowly.
        BodiesFull: the budget cut it for another body.
    """
    connections = request.app[CONNECTIONS]
    budget, hold = connections.bodies, _hold(request)
    loop = asyncio.get_running_loop()
    begun = loop.time()
    last = begun + connections.body_timeout_s
    grace, rate = begun + connections.body_grace_s, connections.body_min_rate
    body = bytearray()
    content = request.content
    try:
        async with asyncio.timeout_at(min(last, grace)) as deadline:

            def cut() -> None:
                if not deadline.expired():
                    deadline.reschedule(loop.time())

            budget.arriving(hold, cut)
            try:
                while chunk := await content.readany():
                    if declared is None:
                        _charge(request, len(chunk))
                    body += chunk
                    if len(body) > limit:
                        raise PayloadTooLarge(_too_large(limit))
                    hold.received = len(body)
                    deadline.reschedule(min(last, grace + len(body) / rate))
            finally:
                budget.arrived(hold)
    except TimeoutError:
        raise _cut_short(connections, hold, loop.time() - begun, deadline.when() == last) from None
    return body


def _cut_short(
    connections: Connections, hold: BodyHold, elapsed_s: float, at_timeout: bool
) -> Refused:
    """The error for a body whose read was cut: for another body, at the body timeout, or
    for coming too slowly."""
    if hold.cut_for_another:
        msg = (
            "the relay needed the request body memory this body held (RELAY_BODY_MEMORY_MB) "
            "for another, and this one was arriving the slowest; send it again"
        )
        return BodiesFull(msg, {"Retry-After": str(BODY_RETRY_AFTER_S)})
    if at_timeout:
        timeout_s = connections.body_timeout_s
        return BodyTimeout(
            f"the body did not arrive whole within {timeout_s:g} s of the request head"
        )
    connections.bodies.too_slow += 1
    return BodyTimeout(
        f"the body came too slowly: {hold.received} bytes in {elapsed_s:.1f} s; after its "
        f"first {connections.body_grace_s:g} s a body must come at "
        f"{connections.body_min_rate} bytes a second at least"
    )


def _hold(request: web.Request) -> BodyHold:
    """What the request's body holds of the body budget (nothing yet, at first)."""
    hold = request.get(BODY_HOLD)
    if hold is None:
        hold = request[BODY_HOLD] = BodyHold()
    return hold


def _charge(request: web.Request, size: int) -> None:
    """Charge ``size`` bytes of the request's body to the body budget, which the guard gives
    back once the handler is done (:class:`transport.shell.connections.BodyBudget`).

    Raises:
        BodiesFull: the bodies held at once would be past the budget; nothing is charged.
    """
    if not request.app[CONNECTIONS].bodies.take(_hold(request), size):
        msg = (
            "the relay holds as much request body memory as it may (RELAY_BODY_MEMORY_MB); "
            "send it again in a moment"
        )
        raise BodiesFull(msg, {"Retry-After": str(BODY_RETRY_AFTER_S)})


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
    if not media.isascii():
        return BadRequest(
            "the Content-Type header is not a media type: it has bytes that are not ASCII"
        )
    if media and "json" not in media:  # no type, or any JSON type, reads as JSON
        msg = (
            "expected a JSON body (Content-Type: application/json); this one, sent as "
            f"{media[:100]}, is not JSON"
        )
        return UnsupportedMediaType(msg)
    try:
        body.decode("utf-8")
        orjson.loads(body)  # its words say where: what the decoder stopped at, it stops at too
    except UnicodeDecodeError:
        return BadRequest("body is not valid UTF-8")
    except orjson.JSONDecodeError as error:
        exc = error
    return BadRequest(f"body is not valid JSON: {exc}")


def int_param(request: web.Request, name: str, default: int) -> int:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        msg = f"{name} must be a whole number, got {raw!r}"
        raise BadRequest(msg) from None


def optional_int(request: web.Request, name: str) -> int | None:
    if not request.query.get(name):
        return None
    return int_param(request, name, 0)


def wait_param(request: web.Request) -> float:
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
