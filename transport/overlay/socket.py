"""The overlay's WebSocket: Sinain's HUD connects to the relay as it does to Sinain's server.

The overlay opens ``ws://<relay>/`` (or ``/ws``) and speaks JSON text messages:

- relay → overlay: a ``status`` on connect (``{"type": "status", "audio", "screen",
  "connection"}``) and again whenever it changes; the newest :data:`REPLAY_ITEMS` feed items,
  oldest first, then each committed one (``{"type": "feed", "text", "priority", "ts",
  "channel"}``, with ``"sender": "user"`` on what the user typed in the overlay; never an
  ``id``: the overlay reads it as a string and shows a message whose ``id`` is a number as raw
  text); a ``{"type": "ping", "ts"}`` every :data:`PING_INTERVAL_S`, with a WebSocket ping.
- overlay → relay: ``pong``; ``profiling`` (``rssMb``, ``uptimeS``, ``ts``: kept for
  ``/health`` and ``/metrics``, :mod:`transport.shell.profiling`); ``command`` (``toggle_audio``,
  ``toggle_screen``, ``switch_device``: the relay captures nothing itself, so it answers that
  socket alone with a feed line saying the capture clients own that switch); ``message``
  (``text`` the user typed: stored in the feed with ``source: "overlay"``, through the same
  validation, redaction and batching as ``POST /feed``). Anything else, malformed, binary or
  over 64 KiB is logged at debug and ignored; the socket stays open.

The messages themselves are :mod:`transport.overlay.messages`; the status is
:mod:`transport.overlay.presence`; this module serves the sockets.

Status. ``audio`` is ``active`` while transcripts arrive (feed items the agent hears as
audio) and ``muted`` once none has come for a quiet spell, :data:`QUIET_SPELL_S`; ``screen``
is ``active`` while screen events arrive and ``off`` after a quiet spell; ``connection`` is
``connected``. A spell's end is a timer on the relay's clock, so a fresh ``status`` goes out
when it ends, not at the next event.

The overlay is one more subscriber of the feed hub (:mod:`transport.streams.hub`), with framing
of its own: it shares the stream slots (``RELAY_MAX_STREAMS``) with the SSE streams, and
gets one beyond them while no other overlay is connected
(:data:`~transport.streams.fanout.OVERLAY_SLOTS`); a feed item's message is made once for every
overlay, and an overlay that falls behind is dropped as a stream client is. One that has
answered neither kind of ping for :data:`SILENCE_LIMIT_S` is dropped too. When the relay
stops, every socket is closed with 1001 ("going away").
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import structlog
from aiohttp import WSMsgType, web

from actors.core.errors import ActorUnavailable, BadRequest
from actors.core.records import FeedPost, FeedRecord
from actors.kernel.clock import Clock
from transport.host.switches import Switches
from transport.overlay.messages import (
    COMMAND_NOTICES,
    CommandAction,
    Ignored,
    OverlayCommand,
    OverlayPong,
    OverlayProfiling,
    Status,
    feed_frame,
    notice_frame,
    parse_inbound,
    ping_frame,
)
from transport.overlay.presence import Presence
from transport.shell.batching import Batcher
from transport.shell.profiling import ClientReports, report_of
from transport.streams.fanout import OVERLAY, Streams, abort
from transport.streams.hub import Hub
from transport.streams.sse import pieces
from transport.streams.subscriber import DROPPED, SHUTDOWN, Event, Framing, Subscriber

PING_INTERVAL_S = 10.0
"""How often each overlay is sent a ``ping`` message and a WebSocket ping."""
SILENCE_LIMIT_S = 30.0
"""An overlay that has answered neither kind of ping for this long is dropped."""
QUIET_SPELL_S = 60.0
"""A minute without a transcript turns ``audio`` to ``muted``, and one without a screen event
turns ``screen`` to ``off``."""
REPLAY_ITEMS = 20
"""Feed items a new overlay is sent on connect, the newest."""
READ_LIMIT_BYTES = 1024 * 1024
"""A message larger than this is not even read: the socket is closed with 1009 (message too
big), as the WebSocket protocol has it."""
CLOSE_TIMEOUT_S = 1.0
"""How long closing a socket waits for the close frame to go out."""

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


def _feed_frame(event: Event) -> bytes:
    return feed_frame(cast("FeedRecord", event))


FRAMING = Framing(OVERLAY, _feed_frame)
"""How the feed hub frames items for the overlays: whole WebSocket frames, made once per item
for every overlay; no gap is announced (the overlay has no cursor to resume from)."""


class Overlays:
    """The overlay sockets of one transport incarnation: their status, their heartbeat and
    their bounds.

    One heartbeat task serves every socket (:meth:`_beats`): every :attr:`beat_s` it queues a
    ``ping`` for the sockets that are due one (their writer then sends the WebSocket ping after
    it), and drops a socket that has answered no ping for :data:`SILENCE_LIMIT_S` or has not
    taken a write within the streams' write timeout. The writers themselves only wait for
    their queue. The status goes to every socket when it changes (:class:`Presence`).
    """

    def __init__(
        self,
        *,
        streams: Streams[Any],
        presence: Presence,
        limits: OverlayLimits,
        clock: Clock,
        figures: ClientReports,
        feed_posts: Batcher[Any, FeedPost, FeedRecord],
        audio: Switches | None = None,
    ) -> None:
        self.streams = streams
        self.audio = audio
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
        """Serve ``connection`` (the status is followed already: :func:`serve`)."""
        self._connections.add(connection)
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

    async def command(self, connection: _Connection | None, action: CommandAction) -> str:
        """Act on a switch an overlay (``connection``) or the console (``None``) asked for: the
        audio ones through the captures (every overlay is told what changed), or, with no
        source to capture, a line for the one that asked saying the capture clients own it.
        Returns that line."""
        audio = self.audio
        owned = audio is not None and audio.capturing and action != "toggle_screen"
        text, everyone = COMMAND_NOTICES[action], False
        if owned and audio is not None:
            answer = await (audio.toggle() if action == "toggle_audio" else audio.switch())
            text, everyone = answer.text, answer.everyone
        frame = notice_frame(text, self.clock.now_ms())
        for each in self._connections if everyone else (connection,) if connection else ():
            each.sub.put(frame)
        if owned:
            self.presence.update()
        return text

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


OVERLAYS = web.AppKey("overlays", Overlays)
"""The overlay sockets, their status and their bounds (the app sets it; the overlay's routes
and the console's page read it)."""


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

        The frames go to the connection joined, in pieces of about
        :data:`~transport.streams.sse.WRITE_CHUNK_BYTES`, each followed by the connection's flow
        control, as a stream's events are: one write
        for what a wake-up brought rather than one per frame. No timeout per write: a write
        the overlay does not take is the heartbeat's to catch (:meth:`beat`), which drops the
        socket and so ends the write.
        """
        request, sub = self.request, self.sub
        self.write_started = self.loop.time()  # and again for each piece
        sub.writing = True
        try:
            for piece in pieces(frames):
                transport = request.transport
                if transport is None or transport.is_closing():
                    raise ConnectionResetError("the overlay's connection is closed")
                self.write_started = self.loop.time()
                transport.write(piece)
                await request.writer.drain()
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
        if isinstance(inbound, OverlayPong):
            self.answered = self.loop.time()
        elif isinstance(inbound, OverlayProfiling):
            received = overlays.clock.now_ms()
            overlays.figures.report(OVERLAY, report_of(inbound).arrived(received))
        elif isinstance(inbound, OverlayCommand):
            await overlays.command(self, inbound.action)
        else:
            try:
                await overlays.feed_posts.submit(inbound.feed_input())
            except ActorUnavailable as exc:
                log.warning("overlay.message_not_stored", actor="http", error=str(exc))
                text = "⚠ Your message was not stored: the relay is busy; send it again."
                self.sub.put(notice_frame(text, overlays.clock.now_ms()))

    def _ignored(self, reason: str) -> None:
        log.debug("overlay.ignored", actor="http", reason=reason, peer=self.sub.peer)
