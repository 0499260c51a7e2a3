"""The overlay's protocol: the messages the relay sends it, and reading what it sends.

Pure: no socket, no event loop. Each message the relay sends is made as a whole WebSocket
text frame (:func:`text_frame`), so that a feed item's frame is made once for every overlay
and the frames a wake-up brings are written in one piece (:mod:`transport.overlay.socket`).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal

import orjson
from msgspec import UNSET, Meta, Struct

from actors.core import bodies
from actors.core.errors import BadRequest
from actors.core.records import FeedPost, FeedRecord
from actors.core.shapes import STREAM, encode
from transport.shell.answers import OverlayFeed, OverlayPing, OverlayStatus

MAX_MESSAGE_BYTES = 64 * 1024
"""A message from the overlay larger than this is ignored (a typed message fits many times)."""
OVERLAY_SOURCE = "overlay"
"""The ``source`` of what the user typed in the overlay."""
CommandAction = Literal["toggle_audio", "toggle_screen", "switch_device"]
COMMAND_NOTICES: Final[dict[CommandAction, str]] = {
    "toggle_audio": "The relay captures no audio (no AUDIO_SOURCE or MIC_SOURCE): mute or "
    "unmute it in the capture client that sends the transcripts.",
    "toggle_screen": "The relay does not capture the screen: pause or resume it in the capture "
    "client (sense_client).",
    "switch_device": "The relay captures no audio (no AUDIO_SOURCE): choose the device in the "
    "capture client that sends the transcripts.",
}
"""The line that answers a switch the relay does not own: the screen's always, the audio
ones when it captures no audio (then the capture clients own them)."""


# -- what the relay sends ----------------------------------------------------------------------


def feed_message(item: FeedRecord) -> bytes:
    """A feed item as the overlay reads it; no ``id``."""
    message = OverlayFeed(
        type="feed",
        text=item.text,
        priority=item.priority,
        ts=item.ts,
        channel=item.channel,
        sender="user" if item.source == OVERLAY_SOURCE else UNSET,
    )
    return encode(message)


def text_frame(message: bytes) -> bytes:
    """``message`` as one WebSocket text frame from the server (final, unmasked)."""
    size = len(message)
    if size < 126:
        return bytes((0x81, size)) + message
    if size < 1 << 16:
        return struct.pack("!BBH", 0x81, 126, size) + message
    return struct.pack("!BBQ", 0x81, 127, size) + message


def feed_frame(item: FeedRecord) -> bytes:
    """:func:`feed_message` as a WebSocket frame."""
    return text_frame(feed_message(item))


def notice_frame(text: str, ts: int) -> bytes:
    """A feed line for one overlay only, from the relay itself."""
    message = OverlayFeed(type="feed", text=text, priority="normal", ts=ts, channel=STREAM)
    return text_frame(encode(message))


def ping_frame(ts: int) -> bytes:
    return text_frame(encode(OverlayPing(type="ping", ts=ts)))


@dataclass(frozen=True, slots=True)
class Status:
    """What the overlay's ``status`` says of the capture."""

    audio: Literal["active", "muted"]
    screen: Literal["active", "off"]
    paused: bool = False
    """The privacy controls pause capture."""

    def frame(self) -> bytes:
        """The ``status`` message, as a WebSocket frame."""
        message = OverlayStatus(
            type="status",
            audio=self.audio,
            screen=self.screen,
            connection="connected",
            paused=self.paused,
        )
        return text_frame(encode(message))


def status_at(heard_ms: int | None, seen_ms: int | None, now_ms: int, quiet_ms: int) -> Status:
    """The status at ``now_ms``, given when the newest transcript (``heard_ms``) and screen
    event (``seen_ms``) arrived (``None``: none yet)."""
    heard = heard_ms is not None and now_ms - heard_ms < quiet_ms
    seen = seen_ms is not None and now_ms - seen_ms < quiet_ms
    return Status("active" if heard else "muted", "active" if seen else "off")


# -- what the overlay sends ----------------------------------------------------------------------


class Ignored(Exception):
    """A message from the overlay that the relay does not act on; the reason says why."""


class OverlayPong(Struct, frozen=True, tag="pong", tag_field="type"):
    """Overlay → relay: the answer to a `ping`."""

    ts: Annotated[Any, Meta(description="The overlay's clock; not read.")] = None


class OverlayProfiling(bodies.ProcessReport, frozen=True, tag="profiling", tag_field="type"):
    """Overlay → relay: its process's figures, every 30 s; shown in `/health.profiling.overlay`
    and `/metrics`. Other fields are ignored."""


class OverlayCommand(Struct, frozen=True, tag="command", tag_field="type"):
    """Overlay → relay: a capture switch. With an audio source set, `toggle_audio` stops
    every capture or starts them again and `switch_device` swaps `AUDIO_SOURCE` for
    `AUDIO_ALT_SOURCE` and back; every overlay gets a feed line saying so ("Audio capture
    stopped", "Audio device → ..."). Otherwise, and for `toggle_screen`, this overlay alone
    gets a line saying the capture clients own the switch. Other actions and other fields
    are ignored."""

    action: CommandAction


class OverlayMessage(Struct, frozen=True, tag="message", tag_field="type"):
    """Overlay → relay: what the user typed. Stored in the feed with `source: "overlay"`
    (redacted and batched as `POST /feed`), so it reaches every overlay and `GET /feed`. Other
    fields are ignored."""

    text: bodies.Text

    def __post_init__(self) -> None:
        bodies.not_blank("text", self.text)

    def feed_input(self) -> FeedPost:
        """What the feed stores for it."""
        return FeedPost(self.text, source=OVERLAY_SOURCE)


Inbound = OverlayPong | OverlayProfiling | OverlayCommand | OverlayMessage
INBOUND_TYPES: Final = (OverlayPong, OverlayProfiling, OverlayCommand, OverlayMessage)
"""What the overlay may send, by its ``type``; the API description's components come from them."""
_BY_KIND: Final[dict[str, type[Inbound]]] = {
    str(kind.__struct_config__.tag): kind for kind in INBOUND_TYPES
}


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
    inbound_type = _BY_KIND.get(kind) if isinstance(kind, str) else None
    if inbound_type is None:
        raise Ignored("not a type the relay reads")
    try:
        return bodies.convert(message, inbound_type)
    except BadRequest as exc:
        msg = f"{kind}: {exc}"
        raise Ignored(msg) from None
