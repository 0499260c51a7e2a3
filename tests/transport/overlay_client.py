"""A WebSocket client of the relay's overlay socket that reads each message as Sinain's overlay
does, over a plain socket (RFC 6455, no library), so tests see exactly what goes on the wire.

The overlay (a Flutter app) decodes each text message as a JSON object and dispatches on
``type`` with Dart's checked casts: ``json['id'] as String?`` throws on a number, and a
message whose handling throws is shown on screen as raw text. :meth:`OverlayClient.read`
does the same casts and returns what the overlay would show: a :class:`Feed` item (``feed``
messages, wrapped in ``data`` or not, and unknown types that have a ``text``), a
:class:`Status`, a :class:`Ping` (answered with ``{"type": "pong"}`` as the overlay does),
or a :class:`Raw` item when the overlay's parse fails. Used by the tests and the fuzz
(``tests/transport/socket_fuzz.py``).
"""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import struct
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

TEXT, BINARY, CLOSE, PING, PONG = 0x1, 0x2, 0x8, 0x9, 0xA
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Closed(Exception):
    """The relay closed the socket: with a close frame (``code``, ``reason``) or without."""

    def __init__(self, code: int | None, reason: str = "") -> None:
        super().__init__(f"closed: {code} {reason}")
        self.code = code
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Refusal:
    """The relay's answer to an upgrade it refused."""

    status: int
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True, slots=True)
class Feed:
    """A feed item as the overlay builds it (``FeedItem.fromJson``)."""

    id: str | None
    text: str
    priority: str | None
    channel: str
    sender: str | None
    message: Mapping[str, Any]
    """The message as it came."""


@dataclass(frozen=True, slots=True)
class Status:
    audio: str | None
    mic: str | None
    screen: str | None
    message: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Ping:
    ts: Any


@dataclass(frozen=True, slots=True)
class Raw:
    """What the overlay shows when it cannot parse a message: its raw text, as a feed item."""

    text: str
    error: str


Shown = Feed | Status | Ping | Raw


def _as(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    """Dart's ``value as T?``: ``None`` or a ``T``, else the cast throws."""
    if value is not None and not isinstance(value, kind):
        msg = f"type {type(value).__name__} is not a subtype of {what}?"
        raise TypeError(msg)
    return value


def parse_as_overlay(data: str) -> Shown | None:
    """What the overlay makes of one text message (``None``: it shows nothing)."""
    try:
        message = orjson.loads(data)
        if not isinstance(message, dict):
            raise TypeError("not a Map<String, dynamic>")
        kind = _as(message.get("type"), str, "String")
        if kind == "feed":
            return _feed(_as(message.get("data"), dict, "Map") or message, message)
        if kind == "status":
            status = _as(message.get("data"), dict, "Map") or message
            for key in ("escalation", "idleMessages", "responseSize", "envPath"):
                _as(status.get(key), str, "String")
            _as(status.get("services"), list, "List")
            _as(status.get("agents"), dict, "Map")
            return Status(
                audio=_as(status.get("audio"), str, "String"),
                mic=_as(status.get("mic"), str, "String"),
                screen=_as(status.get("screen"), str, "String"),
                message=message,
            )
        if kind == "ping":
            return Ping(message.get("ts"))
        if kind in ("spawn_task", "region_highlight", "thinking", "cost"):
            return None
        if "text" in message:
            return _feed(message, message)
        return None
    except (TypeError, ValueError) as exc:
        return Raw(data, str(exc))


def _feed(item: Mapping[str, Any], message: Mapping[str, Any]) -> Feed:
    timestamp = _as(item.get("timestamp"), str, "String")
    del timestamp  # parsed, not kept
    _as(item.get("opacity"), (int, float), "num")
    _as(item.get("regionId"), str, "String")
    channel = _as(item.get("channel"), str, "String")
    return Feed(
        id=_as(item.get("id"), str, "String"),
        text=_as(item.get("text"), str, "String") or "",
        priority=_as(item.get("priority"), str, "String"),
        channel="agent" if channel == "agent" else "stream",
        sender=_as(item.get("sender"), str, "String"),
        message=message,
    )


class OverlayClient:
    """One connection to the overlay socket (close it, or use it in a ``with``).

    ``host_header``: the ``Host`` sent (``host:port`` by default). ``answer_pings``: reply to
    the relay's ``ping`` messages with ``pong`` (as the overlay does); ``answer_ws_pings``:
    reply to WebSocket pings (as its WebSocket library does). Every read waits ``timeout_s``
    at most.
    """

    def __init__(
        self,
        host: str,
        port: int,
        path: str = "/",
        *,
        headers: Mapping[str, str] | None = None,
        host_header: str | None = None,
        timeout_s: float = 5.0,
        answer_pings: bool = True,
        answer_ws_pings: bool = True,
        receive_buffer: int | None = None,
    ) -> None:
        self.answer_pings = answer_pings
        self.answer_ws_pings = answer_ws_pings
        self.timeout_s = timeout_s
        self.shown: list[Shown] = []
        """Everything :meth:`read` returned, in order."""
        self.ws_pings = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.settimeout(timeout_s)
        self.sock.connect((host, port))
        self._buffer = b""
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: {host_header or f'{host}:{port}'}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
            *(f"{name}: {value}" for name, value in (headers or {}).items()),
        ]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        status, answer_headers = self._head()
        self.refusal: Refusal | None = None
        if status != 101:
            length = int(answer_headers.get("content-length", "0"))
            body = self._exactly(length)
            self.refusal = Refusal(status, answer_headers, orjson.loads(body) if body else None)
            self.sock.close()
            return
        accept = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest()).decode()
        assert answer_headers.get("sec-websocket-accept") == accept

    # -- the wire ----------------------------------------------------------------------------

    def _head(self) -> tuple[int, dict[str, str]]:
        while b"\r\n\r\n" not in self._buffer:
            self._fill()
        head, self._buffer = self._buffer.split(b"\r\n\r\n", 1)
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return int(status_line.split(" ")[1]), headers

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise Closed(None, "connection closed without a close frame")
        self._buffer += chunk

    def _exactly(self, size: int) -> bytes:
        while len(self._buffer) < size:
            self._fill()
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def send_frame(self, opcode: int, payload: bytes, *, fin: bool = True) -> None:
        """One masked frame, as a client sends it."""
        head = bytes([(0x80 if fin else 0) | opcode])
        size = len(payload)
        if size < 126:
            head += bytes([0x80 | size])
        elif size < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack("!H", size)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", size)
        mask = os.urandom(4)
        keys = (mask * (size // 4 + 1))[:size]
        masked = (int.from_bytes(payload) ^ int.from_bytes(keys)).to_bytes(size)
        self.sock.sendall(head + mask + masked)

    def send_text(self, text: str | bytes) -> None:
        self.send_frame(TEXT, text.encode() if isinstance(text, str) else text)

    def send(self, message: Any) -> None:
        """A JSON message, as the overlay's ``send`` does."""
        self.send_text(orjson.dumps(message))

    def frame(self) -> tuple[int, bytes]:
        """The next frame from the relay: its opcode and payload (fragments joined)."""
        opcode = -1
        payload = b""
        while True:
            first, second = self._exactly(2)
            size = second & 0x7F
            if size == 126:
                (size,) = struct.unpack("!H", self._exactly(2))
            elif size == 127:
                (size,) = struct.unpack("!Q", self._exactly(8))
            assert not second & 0x80, "frames from the server are not masked"
            data = self._exactly(size)
            code = first & 0x0F
            if code in (CLOSE, PING, PONG):
                return code, data
            opcode = code if code else opcode
            payload += data
            if first & 0x80:
                return opcode, payload

    def message(self) -> str:
        """The next text message, answering pings on the way.

        Raises:
            Closed: the relay closed the socket.
            TimeoutError: nothing came for ``timeout_s``.
        """
        while True:
            opcode, data = self.frame()
            if opcode == PING:
                self.ws_pings += 1
                if self.answer_ws_pings:
                    self.send_frame(PONG, data)
            elif opcode == CLOSE:
                code = struct.unpack("!H", data[:2])[0] if len(data) >= 2 else None
                raise Closed(code, data[2:].decode(errors="replace"))
            elif opcode == TEXT:
                return data.decode()

    def read(self) -> Shown:
        """The next message the overlay would act on, as it would parse it."""
        while True:
            shown = parse_as_overlay(self.message())
            if shown is None:
                continue
            self.shown.append(shown)
            if isinstance(shown, Ping) and self.answer_pings:
                self.send({"type": "pong", "ts": int(time.time() * 1000)})
            return shown

    def feed(self) -> Feed:
        """The next feed item (pings answered and skipped on the way)."""
        while True:
            shown = self.read()
            if isinstance(shown, Feed):
                return shown
            if isinstance(shown, Raw):
                raise AssertionError(f"the overlay could not parse {shown.text!r}: {shown.error}")

    def next_of(self, kind: type[Any]) -> Any:
        """The next message of ``kind`` (others are skipped, a :class:`Raw` fails)."""
        while True:
            shown = self.read()
            if isinstance(shown, Raw):
                raise AssertionError(f"the overlay could not parse {shown.text!r}: {shown.error}")
            if isinstance(shown, kind):
                return shown

    def pump(self, seconds: float) -> None:
        """Read (and answer pings) for ``seconds``; what came is in :attr:`shown`."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            self.sock.settimeout(left)
            try:
                self.read()
            except TimeoutError:
                break
            finally:
                self.sock.settimeout(self.timeout_s)

    def closed(self, timeout_s: float = 5.0) -> Closed:
        """Read until the relay closes the socket; how it closed it."""
        deadline = time.monotonic() + timeout_s
        self.sock.settimeout(timeout_s)
        try:
            while time.monotonic() < deadline:
                self.message()
        except Closed as closed:
            return closed
        except (ConnectionResetError, BrokenPipeError):
            return Closed(None, "reset")
        raise AssertionError(f"still open after {timeout_s} s")

    def close(self) -> None:
        """Send a close frame (normal closure) and close the socket."""
        try:
            if self.refusal is None:
                self.send_frame(CLOSE, struct.pack("!H", 1000))
        except OSError:
            pass
        finally:
            self.sock.close()

    def __enter__(self) -> OverlayClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
