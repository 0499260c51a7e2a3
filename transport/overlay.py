"""The overlay's WebSocket: Sinain's HUD connects to the relay as it does to Sinain's server.

The overlay opens ``ws://<relay>/`` (or ``/ws``) and speaks JSON text messages:

- relay → overlay: a ``status`` on connect (``{"type": "status", "audio", "screen",
  "connection"}``) and again whenever it changes; the newest :data:`REPLAY_ITEMS` feed items,
  oldest first, then each committed one (``{"type": "feed", "text", "priority", "ts",
  "channel"}``, with ``"sender": "user"`` on what the user typed in the overlay; never an
  ``id``: the overlay reads it as a string and shows a message whose ``id`` is a number as raw
  text); a ``{"type": "ping", "ts"}`` every :data:`PING_INTERVAL_S`, with a WebSocket ping.
- overlay → relay: ``pong``; ``profiling`` (``rssMb``, ``uptimeS``, ``ts``: kept for
  ``/health`` and ``/metrics``, :mod:`transport.profiling`); ``command`` (``toggle_audio``,
  ``toggle_screen``, ``switch_device``: the relay captures nothing itself, so it answers that
  socket alone with a feed line saying the capture clients own that switch); ``message``
  (``text`` the user typed: stored in the feed with ``source: "overlay"``, through the same
  validation, redaction and batching as ``POST /feed``). Anything else, malformed, binary or
  over :data:`MAX_MESSAGE_BYTES` is logged at debug and ignored; the socket stays open.

Status. ``audio`` is ``active`` while transcripts arrive (feed items the agent hears as
audio) and ``muted`` once none has come for a quiet spell, :data:`QUIET_SPELL_S`; ``screen``
is ``active`` while screen events arrive and ``off`` after a quiet spell; ``connection`` is
``connected``. A spell's end is a timer on the relay's clock, so a fresh ``status`` goes out
when it ends, not at the next event.

The overlay is one more subscriber of the feed hub (:mod:`transport.streams`), with framing
of its own: it shares the stream slots (``RELAY_MAX_STREAMS``) with the SSE streams, a feed
item's message is made once for every overlay, and an overlay that falls behind is dropped
as a stream client is. One that has answered neither kind of ping for
:data:`SILENCE_LIMIT_S` is dropped too. When the relay stops, every socket is closed with
1001 ("going away").
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import orjson
import structlog
from aiohttp import WSMsgType, web

from actors.core.errors import ActorUnavailable, BadRequest
from actors.core.records import STREAM, FeedInput, FeedItem, FeedSnapshot, SenseSnapshot
from actors.core.validation import validate_feed
from actors.core.window import extract_audio
from actors.kernel.clock import Cancel, Clock
from actors.kernel.published import Published
from transport.batching import Batcher
from transport.profiling import ClientFigures, ProcessReport, parse_report
from transport.sse import WRITE_CHUNK_BYTES
from transport.streams import (
    DROPPED,
    OVERLAY,
    SHUTDOWN,
    Event,
    Framing,
    Hub,
    Streams,
    Subscriber,
    abort,
)

PING_INTERVAL_S = 10.0
"""How often each overlay is sent a ``ping`` message and a WebSocket ping."""
SILENCE_LIMIT_S = 30.0
"""An overlay that has answered neither kind of ping for this long is dropped."""
QUIET_SPELL_S = 60.0
"""A minute without a transcript turns ``audio`` to ``muted``, and one without a screen event
turns ``screen`` to ``off``."""
REPLAY_ITEMS = 20
"""Feed items a new overlay is sent on connect, the newest."""
MAX_MESSAGE_BYTES = 64 * 1024
"""A message from the overlay larger than this is ignored (a typed message fits many times)."""
READ_LIMIT_BYTES = 1024 * 1024
"""A message larger than this is not even read: the socket is closed with 1009 (message too
big), as the WebSocket protocol has it."""
CLOSE_TIMEOUT_S = 1.0
"""How long closing a socket waits for the close frame to go out."""
OVERLAY_SOURCE = "overlay"
"""The ``source`` of what the user typed in the overlay."""
COMMAND_NOTICES = {
    "toggle_audio": "The relay does not capture audio: mute or unmute it in the capture "
    "client that sends the transcripts.",
    "toggle_screen": "The relay does not capture the screen: pause or resume it in the capture "
    "client (sense_client).",
    "switch_device": "The relay does not capture audio: choose the device in the capture "
    "client that sends the transcripts.",
}
"""The feed line that answers each switch the overlay asks for: the capture clients own it."""

log = structlog.get_logger("relay")


@dataclass(frozen=True, slots=True)
class OverlayLimits:
    """The heartbeat and the quiet spell, fixed for one transport incarnation (tests lower
    them)."""

    ping_interval_s: float
    silence_limit_s: float
    quiet_spell_s: float

    @classmethod
    def current(cls) -> OverlayLimits:
        """The module's constants as they are now."""
        return cls(
            ping_interval_s=PING_INTERVAL_S,
            silence_limit_s=SILENCE_LIMIT_S,
            quiet_spell_s=QUIET_SPELL_S,
        )


# -- what the relay sends ----------------------------------------------------------------------


def feed_message(item: FeedItem) -> bytes:
    """A feed item as the overlay reads it; no ``id``."""
    message: dict[str, Any] = {
        "type": "feed",
        "text": item.text,
        "priority": item.priority,
        "ts": item.ts,
        "channel": item.channel,
    }
    if item.source == OVERLAY_SOURCE:
        message["sender"] = "user"
    return orjson.dumps(message)


def text_frame(message: bytes) -> bytes:
    """``message`` as one WebSocket text frame from the server (final, unmasked)."""
    size = len(message)
    if size < 126:
        return bytes((0x81, size)) + message
    if size < 1 << 16:
        return struct.pack("!BBH", 0x81, 126, size) + message
    return struct.pack("!BBQ", 0x81, 127, size) + message


def _feed_frame(event: Event) -> bytes:
    return text_frame(feed_message(cast("FeedItem", event)))


FRAMING = Framing(OVERLAY, _feed_frame)
"""How the feed hub frames items for the overlays: whole WebSocket frames, made once per item
for every overlay; no gap is announced (the overlay has no cursor to resume from)."""


def notice_frame(text: str, ts: int) -> bytes:
    """A feed line for one overlay only, from the relay itself."""
    message = {"type": "feed", "text": text, "priority": "normal", "ts": ts, "channel": STREAM}
    return text_frame(orjson.dumps(message))


def ping_frame(ts: int) -> bytes:
    return text_frame(orjson.dumps({"type": "ping", "ts": ts}))


@dataclass(frozen=True, slots=True)
class Status:
    """What the overlay's ``status`` says of the capture."""

    audio: Literal["active", "muted"]
    screen: Literal["active", "off"]

    def frame(self) -> bytes:
        """The ``status`` message, as a WebSocket frame."""
        message = {
            "type": "status",
            "audio": self.audio,
            "screen": self.screen,
            "connection": "connected",
        }
        return text_frame(orjson.dumps(message))


def status_at(heard_ms: int | None, seen_ms: int | None, now_ms: int, quiet_ms: int) -> Status:
    """The status at ``now_ms``, given when the newest transcript (``heard_ms``) and screen
    event (``seen_ms``) arrived (``None``: none yet)."""
    heard = heard_ms is not None and now_ms - heard_ms < quiet_ms
    seen = seen_ms is not None and now_ms - seen_ms < quiet_ms
    return Status("active" if heard else "muted", "active" if seen else "off")


# -- what the overlay sends ----------------------------------------------------------------------


class Ignored(Exception):
    """A message from the overlay that the relay does not act on; the reason says why."""


@dataclass(frozen=True, slots=True)
class Pong:
    pass


@dataclass(frozen=True, slots=True)
class Profiling:
    report: ProcessReport


@dataclass(frozen=True, slots=True)
class Command:
    action: str


@dataclass(frozen=True, slots=True)
class UserMessage:
    message: FeedInput


Inbound = Pong | Profiling | Command | UserMessage


def parse_inbound(data: bytes) -> Inbound:
    """What one text message from the overlay asks for.

    Raises:
        Ignored: it is too large, not a JSON object, of an unknown type or action, or a known
            type with fields of the wrong kind.
    """
    if len(data) > MAX_MESSAGE_BYTES:
        msg = f"larger than {MAX_MESSAGE_BYTES} bytes"
        raise Ignored(msg)
    try:
        message = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise Ignored("not JSON") from None
    if not isinstance(message, dict):
        raise Ignored("not a JSON object")
    kind = message.get("type")
    try:
        if kind == "pong":
            return Pong()
        if kind == "profiling":
            return Profiling(parse_report(message))
        if kind == "command":
            action = message.get("action")
            if isinstance(action, str) and action in COMMAND_NOTICES:
                return Command(action)
            raise Ignored("command: not an action the relay answers")
        if kind == "message":
            text = validate_feed({"text": message.get("text")}).text
            return UserMessage(FeedInput(text, source=OVERLAY_SOURCE))
    except BadRequest as exc:
        msg = f"{kind}: {exc}"
        raise Ignored(msg) from None
    raise Ignored("not a type the relay reads")


# -- the status ----------------------------------------------------------------------------------


class Presence:
    """The overlay's ``status``: whether transcripts and screen events arrive.

    Listens to the feed and sense cells while an overlay is connected, as a hub does: on the
    publisher's thread it only schedules one wake-up on the loop. The end of a quiet spell is a
    timer on the relay's clock. Everything but :meth:`_published` and :meth:`_timer_fired`
    runs on the transport's event loop.
    """

    def __init__(
        self,
        feed: Published[FeedSnapshot],
        sense: Published[SenseSnapshot],
        clock: Clock,
        quiet_spell_s: float,
    ) -> None:
        self._feed = feed
        self._sense = sense
        self._clock = clock
        self._quiet_ms = round(quiet_spell_s * 1000)
        self.status = Status("muted", "off")
        self._on_change: Callable[[Status], None] = _nothing
        self._heard: int | None = None
        """When the newest transcript seen arrived (the relay's clock, epoch ms)."""
        self._cursor = 0
        """The highest feed id looked at."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._unsubscribe: tuple[Callable[[], None], ...] = ()
        self._listening = False
        self._scheduled = False
        self._timer: Cancel | None = None

    def attach(self, loop: asyncio.AbstractEventLoop, on_change: Callable[[Status], None]) -> None:
        """Listen to both cells from ``loop``; ``on_change`` gets each new status."""
        self.detach()
        self._loop = loop
        self._on_change = on_change
        self._unsubscribe = (
            self._feed.subscribe(self._published),
            self._sense.subscribe(self._published),
        )

    def detach(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = ()
        self._cancel_timer()

    def listen(self, on: bool) -> None:
        """Follow the cells (an overlay is connected) or not (none is)."""
        self._listening = on
        if on:
            self.update()
        else:
            self._cancel_timer()

    def _published(self, _snapshot: object) -> None:
        """A cell's listener, on the publisher's thread inside its commit: keep it cheap."""
        loop = self._loop
        if loop is None or loop.is_closed():  # the transport died without its cleanup
            self.detach()
            return
        if not self._listening or self._scheduled:
            return
        self._scheduled = True
        try:
            loop.call_soon_threadsafe(self._wake)
        except RuntimeError:  # the loop closed since the check above
            self.detach()

    def _wake(self) -> None:
        self._scheduled = False
        if self._listening:
            self.update()

    def update(self) -> None:
        """Read both cells and the clock; tell ``on_change`` if the status changed."""
        now = self._clock.now_ms()
        feed = self._feed.value
        for item in feed.after(self._cursor):
            if extract_audio(item) is not None:
                self._heard = item.ts
        if feed.items:
            self._cursor = feed.items[-1].id
        events = self._sense.value.events
        seen = events[-1].received_at if events else None
        status = status_at(self._heard, seen, now, self._quiet_ms)
        ends = [t + self._quiet_ms for t in (self._heard, seen) if t is not None]
        ends = [end for end in ends if end > now]
        if ends and self._timer is None:
            self._timer = self._clock.call_later((min(ends) - now) / 1000, self._timer_fired)
        if status != self.status:
            self.status = status
            self._on_change(status)

    def _timer_fired(self) -> None:
        """A quiet spell may have ended; on the clock's thread: hand it to the loop."""
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._spell_ended)

    def _spell_ended(self) -> None:
        self._timer = None
        if self._listening:
            self.update()

    def _cancel_timer(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer()


def _nothing(_status: Status) -> None:
    pass


# -- the sockets ---------------------------------------------------------------------------------


class Overlays:
    """The overlay sockets of one transport incarnation: their status, their heartbeat and
    their bounds.

    One heartbeat task serves every socket: each :meth:`_beat` queues a ``ping`` for the
    sockets that are due one (their writer then sends the WebSocket ping after it), and drops
    a socket that has answered no ping for :data:`SILENCE_LIMIT_S` or has not taken a write
    within the streams' write timeout. The writers themselves only wait for their queue.
    """

    def __init__(
        self,
        *,
        streams: Streams,
        presence: Presence,
        limits: OverlayLimits,
        clock: Clock,
        figures: ClientFigures,
        feed_posts: Batcher[Any, FeedInput, FeedItem],
    ) -> None:
        self.streams = streams
        self.presence = presence
        self.limits = limits
        self.clock = clock
        self.figures = figures
        self.feed_posts = feed_posts
        self._connections: set[_Connection] = set()
        self._heartbeat: asyncio.Task[None] | None = None
        self.beat_s = min(1.0, limits.ping_interval_s / 2)
        """How often the heartbeat looks at the sockets."""

    def add(self, connection: _Connection) -> None:
        self._connections.add(connection)
        self.presence.listen(True)
        if self._heartbeat is None:
            self._heartbeat = asyncio.get_running_loop().create_task(self._beats())

    def remove(self, connection: _Connection) -> None:
        self._connections.discard(connection)
        if not self._connections:
            self.presence.listen(False)
            heartbeat, self._heartbeat = self._heartbeat, None
            if heartbeat is not None:
                heartbeat.cancel()

    async def _beats(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.beat_s)
            now, ts = loop.time(), self.clock.now_ms()
            for connection in list(self._connections):
                connection.beat(now, ts)

    def _broadcast(self, status: Status) -> None:
        frame = status.frame()
        for connection in self._connections:
            connection.sub.put(frame)

    async def on_startup(self, _app: web.Application) -> None:
        self.presence.attach(asyncio.get_running_loop(), self._broadcast)

    async def on_cleanup(self, _app: web.Application) -> None:
        heartbeat, self._heartbeat = self._heartbeat, None
        if heartbeat is not None:
            heartbeat.cancel()
        self.presence.detach()


def is_upgrade(request: web.Request) -> bool:
    """Whether ``request`` asks for a WebSocket (``Upgrade: websocket``)."""
    return request.headers.get("Upgrade", "").strip().lower() == "websocket"


async def serve(request: web.Request, overlays: Overlays) -> web.StreamResponse:
    """Upgrade ``request`` (an upgrade request) and serve the overlay until it leaves, is
    dropped, or the relay stops.

    Raises:
        BadRequest: the handshake is not a valid WebSocket one.
        StreamRefused: every stream slot is taken, or the relay is stopping.
    """
    ws: web.WebSocketResponse[Literal[False]] = web.WebSocketResponse(
        autoping=False,
        compress=False,
        max_msg_size=READ_LIMIT_BYTES,
        timeout=CLOSE_TIMEOUT_S,
        decode_text=False,
    )
    if not ws.can_prepare(request):
        msg = (
            "not a valid WebSocket handshake: send GET with Connection: Upgrade, "
            "Upgrade: websocket, Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key"
        )
        raise BadRequest(msg)
    streams = overlays.streams
    hub = streams.feed
    sub, ring = streams.subscribe(hub, request, FRAMING)
    try:
        # The status and the replay are made before anything can be queued for the socket:
        # a status change or an item from now on is queued, and goes out after them.
        overlays.presence.listen(True)
        first = [overlays.presence.status.frame()]
        first += [_feed_frame(item) for item in ring[-REPLAY_ITEMS:]]
        connection = _Connection(request, ws, hub, sub, overlays)
        overlays.add(connection)
        try:
            await ws.prepare(request)
            await connection.run(first)
        finally:
            overlays.remove(connection)
    finally:
        hub.release(sub)
    return ws


class _Connection:
    """One overlay's socket: a writer (its queue, then the WebSocket ping when one is due) and
    a reader (what the overlay sends); :meth:`beat` is its share of the heartbeat."""

    def __init__(
        self,
        request: web.Request,
        ws: web.WebSocketResponse[Literal[False]],
        hub: Hub[Any],
        sub: Subscriber,
        overlays: Overlays,
    ) -> None:
        self.request = request
        self.ws = ws
        self.hub = hub
        self.sub = sub
        self.overlays = overlays
        self.limits = overlays.limits
        self.write_timeout_s = overlays.streams.limits.write_timeout_s
        self.loop = asyncio.get_running_loop()
        now = self.loop.time()
        self.answered = now
        """When the overlay last answered a ping of either kind (the loop's clock)."""
        self.pinged = now
        """When the last ping was queued."""
        self.ping_due = False
        """Whether the writer owes a WebSocket ping."""
        self.write_started = now
        """When the write under way (``sub.writing``) began."""

    def beat(self, now: float, ts: int) -> None:
        """The heartbeat: drop a socket that is silent or stuck in a write; queue a due ping."""
        sub, limits = self.sub, self.limits
        if sub.closed is not None:
            return
        if sub.writing and now - self.write_started >= self.write_timeout_s:
            self.hub.drop(sub, "write_timeout")
        elif now - self.answered >= limits.silence_limit_s:
            self.hub.drop(sub, "heartbeat")
        elif now - self.pinged >= limits.ping_interval_s:
            self.pinged = now
            self.ping_due = True
            sub.put(ping_frame(ts))

    async def run(self, first: Sequence[bytes]) -> None:
        writer = asyncio.create_task(self._write(first))
        reader = asyncio.create_task(self._read())
        try:
            await asyncio.wait((writer, reader), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (writer, reader):
                task.cancel()
            results = await asyncio.gather(writer, reader, return_exceptions=True)
        for result in results:
            if isinstance(result, ConnectionError):
                continue  # the overlay left in the middle of a write
            if isinstance(result, Exception):  # keeps the server serving: only this socket ends
                log.error("overlay.failed", actor="http", peer=self.sub.peer, exc_info=result)
                abort(self.request)
        if not self.ws.closed and self.sub.closed is None:  # the overlay left
            with contextlib.suppress(Exception):
                async with asyncio.timeout(CLOSE_TIMEOUT_S):
                    await self.ws.close()

    # -- writing ----------------------------------------------------------------------------

    async def _write(self, first: Sequence[bytes]) -> None:
        sub = self.sub
        try:
            await self._send(first)
            while True:
                frames = sub.take()
                if sub.closed == DROPPED:
                    return
                if frames:
                    await self._send(frames)
                    continue
                if sub.closed == SHUTDOWN:
                    await self._going_away()
                    return
                await sub.wait(None)
        except ConnectionError:
            pass  # the overlay left, or was dropped, in the middle of a write

    async def _send(self, frames: Sequence[bytes]) -> None:
        """Write ``frames`` (whole WebSocket frames), then the WebSocket ping if one is due.

        The frames go to the connection joined, in pieces of about :data:`WRITE_CHUNK_BYTES`,
        each followed by the connection's flow control, as a stream's events are: one write
        for what a wake-up brought rather than one per frame. No timeout per write: a write
        the overlay does not take is the heartbeat's to catch (:meth:`beat`), which drops the
        socket and so ends the write.
        """
        request, sub = self.request, self.sub
        self.write_started = self.loop.time()
        sub.writing = True
        try:
            chunk: list[bytes] = []
            size = 0
            for n, frame in enumerate(frames):
                chunk.append(frame)
                size += len(frame)
                if size >= WRITE_CHUNK_BYTES or n == len(frames) - 1:
                    transport = request.transport
                    if transport is None or transport.is_closing():
                        raise ConnectionResetError("the overlay's connection is closed")
                    transport.write(b"".join(chunk))
                    await request.writer.drain()
                    chunk, size = [], 0
            if self.ping_due:
                self.ping_due = False
                await self.ws.ping()
        finally:
            sub.writing = False

    async def _going_away(self) -> None:
        """Close with 1001: the relay is stopping (a client that is behind is cut off)."""
        protocol = self.request.protocol
        if protocol is not None and protocol.writing_paused:
            abort(self.request)
            return
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                await self.ws.close(code=1001, message=b"going away")
        except TimeoutError:
            abort(self.request)

    # -- reading ----------------------------------------------------------------------------

    async def _read(self) -> None:
        ws = self.ws
        while True:
            message = await ws.receive()
            kind = message.type
            if kind is WSMsgType.TEXT:
                await self._inbound(message.data)
            elif kind is WSMsgType.PONG:
                self.answered = self.loop.time()
            elif kind is WSMsgType.PING:
                try:
                    async with asyncio.timeout(self.write_timeout_s):
                        await ws.pong(message.data)
                except TimeoutError:
                    self.hub.drop(self.sub, "write_timeout")
                    return
            elif kind is WSMsgType.BINARY:
                self._ignored("binary")
            else:  # CLOSE, CLOSING, CLOSED, ERROR: the socket is ending
                return

    async def _inbound(self, data: bytes) -> None:
        try:
            inbound = parse_inbound(data)
        except Ignored as exc:
            self._ignored(str(exc))
            return
        overlays = self.overlays
        if isinstance(inbound, Pong):
            self.answered = self.loop.time()
        elif isinstance(inbound, Profiling):
            received = overlays.clock.now_ms()
            overlays.figures.report(OVERLAY, inbound.report.arrived(received))
        elif isinstance(inbound, Command):
            notice = COMMAND_NOTICES[inbound.action]
            self.sub.put(notice_frame(notice, overlays.clock.now_ms()))
        else:
            try:
                await overlays.feed_posts.submit(inbound.message)
            except ActorUnavailable as exc:
                log.warning("overlay.message_not_stored", actor="http", error=str(exc))
                text = "⚠ Your message was not stored: the relay is busy; send it again."
                self.sub.put(notice_frame(text, overlays.clock.now_ms()))

    def _ignored(self, reason: str) -> None:
        log.debug("overlay.ignored", actor="http", reason=reason, peer=self.sub.peer)
