"""What clients post, each body declared once: a typed struct with its limits.

Decoding a body into its struct is its validation (msgspec, in C): a wrong type, a missing
field or a value out of range fails the decode, and :func:`decode`/:func:`convert` turn that
failure into a :class:`~actors.core.errors.BadRequest` that names the field
(:mod:`actors.core.body_errors`). The OpenAPI components of the request bodies are generated
from the same structs (each route names its body's struct,
:data:`transport.openapi.REQUEST_TYPES`), so the document says what the decoder does. The
agent's ``POST /agent/config`` body is the agent's own
(:mod:`actors.agent.core.config_update`).

A ``POST /sense`` event is kept exactly as the client sent it, extra fields included: it is
parsed once into a dict (orjson), which :func:`sense_input` checks against :class:`SenseInput`
and keeps as the event's payload.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, TypeVar

import msgspec
from msgspec import Meta, Struct

from actors.core import records, shapes
from actors.core.body_errors import bad_body
from actors.core.errors import BadRequest

FEED_BODY_LIMIT = 256 * 1024
"""Largest ``POST /feed`` body, in bytes (a long transcript batch fits many times over)."""
SENSE_BODY_LIMIT = 2 * 1024 * 1024
"""Largest ``POST /sense`` body, in bytes."""
CONFIG_BODY_LIMIT = 16 * 1024
"""Largest body of the small posts: ``/agent/config``, ``/profiling/sense``, ``/debug/fault``."""
MAX_PRIORITY_CHARS = 32
MAX_SOURCE_CHARS = 32
MAX_NESTING = 100
"""Levels of objects and arrays a sense event may nest (the capture client's nest 3). The
relay writes each event back out as JSON, which orjson does to 255 levels at most: a deeper
event is refused here rather than fail its batch's write."""
MAX_EXTRA_FIELDS = 64
"""Fields a process report's ``extra`` object may have at most (the capture client sends 11)."""
MAX_EXTRA_NAME_CHARS = 64
"""Characters of one ``extra`` field's name at most."""
NOT_BLANK = r"\S"
"""The pattern of a text that is not only whitespace."""
_SERVER_FIELDS = ("id", "receivedAt")
"""Fields the server sets on a stored event; dropped from what a client sends."""

Text = Annotated[
    str, Meta(extra_json_schema={"pattern": NOT_BLANK}, description="Not only whitespace.")
]
"""Not only whitespace: the document states the pattern, :func:`not_blank` checks it (with
``str.isspace``, the whitespace of Python's ``\\S``: no ``re`` search per post)."""
Number = int | float
"""A JSON number, kept as sent (``60`` is shown again as ``60``, not ``60.0``)."""
NotNegative = Annotated[int, Meta(ge=0)] | Annotated[float, Meta(ge=0)]
Whole = Annotated[float, Meta(multiple_of=1)]
"""A whole number, also when written with a fraction of zero (``6000.0``)."""
EpochMs = Annotated[Number, Meta(description="The client's clock, epoch milliseconds.")]
Image = Annotated[dict[str, Any], Meta(description="`data`: the image, base64.")]
Roi = Annotated[
    dict[str, Any],
    Meta(
        description="The region of the screen that changed: `data`, the picture, base64 (a "
        "JPEG or a PNG of at most 1 MiB is sent to the vision model, unless "
        "`AGENT_VISION_ENABLED=false`); `bbox` `[x, y, w, h]` and `thumb` as sent."
    ),
]


class FeedInput(Struct, frozen=True):
    """`priority` defaults to `normal` and `channel` to `stream` (`null` counts as absent).
    Other fields are ignored."""

    text: Text
    priority: Annotated[str, Meta(min_length=1, max_length=MAX_PRIORITY_CHARS)] | None = "normal"
    source: (
        Annotated[
            str,
            Meta(
                min_length=1,
                max_length=MAX_SOURCE_CHARS,
                description="Who or what the item comes from. `audio` marks a transcript: the "
                "agent hears it (so does text starting with `[🔊] `, `[🎙] ` or `[📝] `).",
            ),
        ]
        | None
    ) = None
    channel: (
        Annotated[
            shapes.Channel,
            Meta(
                description="Where the overlay shows it: `stream` (its feed, the default) or "
                "`agent` (its Agent tab, for advice to the user)."
            ),
        ]
        | None
    ) = None

    def __post_init__(self) -> None:
        not_blank("text", self.text)

    def record(self) -> records.FeedPost:
        """The message as the feed buffer takes it, ``null`` fields at their defaults."""
        return records.FeedPost(
            self.text, self.priority or "normal", self.source, self.channel or shapes.STREAM
        )


class SenseMeta(Struct, frozen=True, rename="camel"):
    """What the capture client says of the screen: its app, window and change."""

    app: str | None = None
    window_title: str | None = None
    ssim: float | None = None
    screen: Number | str | None = None


class Observation(Struct, frozen=True):
    """What the capture client says of the moment."""

    title: str | None = None
    subtitle: str | None = None
    narrative: str | None = None
    facts: list[str] | None = None
    concepts: list[str] | None = None


class SenseInput(Struct, frozen=True):
    __doc__ = (
        "A screen event as Sinain's capture client sends it. `null` counts as absent; other "
        "fields are kept as sent; `id` and `receivedAt` are the server's and are dropped. "
        f"Objects and arrays may nest {MAX_NESTING} levels deep at most (the body is the first)."
    )

    type: Annotated[str, Meta(min_length=1, examples=["text", "context"])]
    ts: EpochMs
    ocr: str | None = None
    meta: SenseMeta | None = None
    roi: Roi | None = None
    diff: Image | None = None
    observation: Observation | None = None


class ProcessReport(Struct, frozen=True, rename="camel"):
    """A client process's figures, as the capture client posts them every 60 s. `null` counts
    as absent; other fields are ignored."""

    rss_mb: Annotated[NotNegative, Meta(description="Resident memory, MB.")]
    uptime_s: Annotated[NotNegative, Meta(description="Seconds since start.")]
    ts: EpochMs
    extra: (
        Annotated[
            dict[Annotated[str, Meta(max_length=MAX_EXTRA_NAME_CHARS)], Number],
            Meta(max_length=MAX_EXTRA_FIELDS, description="The client's own counters, by name."),
        ]
        | None
    ) = None


def not_blank(name: str, value: str) -> None:
    """Refuse a :data:`Text` that is only whitespace (or empty)."""
    if not value or value.isspace():
        raise ValueError(f"{name} must be a string that is not blank")


T = TypeVar("T", bound=Struct)


@cache
def _decoder(kind: type[T]) -> msgspec.json.Decoder[T]:
    return msgspec.json.Decoder(kind)


def decode(body: bytes | bytearray, kind: type[T]) -> T:
    """``body`` (JSON bytes) decoded into ``kind``.

    Raises:
        BadRequest: the body is JSON but not a ``kind``, saying which field is wrong.
        msgspec.DecodeError: the body is not JSON (the caller says how; a field of a string
            that is not UTF-8 counts).
        RecursionError: it nests deeper than the decoder goes.
    """
    decoder: msgspec.json.Decoder[T] = _decoder(kind)
    try:
        return decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise bad_body(exc, kind) from None
    except UnicodeDecodeError:
        raise msgspec.DecodeError("a string is not valid UTF-8") from None


def convert(value: Any, kind: type[T]) -> T:
    """``value`` (parsed JSON) checked as a ``kind``.

    Raises:
        BadRequest: it is not a ``kind``, saying which field is wrong.
    """
    try:
        checked: T = msgspec.convert(value, type=kind)
    except msgspec.ValidationError as exc:
        raise bad_body(exc, kind) from None
    return checked


def sense_input(payload: Any) -> records.SensePost:
    """Check a ``POST /sense`` event (parsed JSON); return what the buffer stores.

    The payload is the client's object as sent, less the server's ``id`` and ``receivedAt``;
    ``ts`` is the number as sent.

    Raises:
        BadRequest: what is wrong, by field name, or that it nests too deep.
    """
    event = convert(payload, SenseInput)
    if _nests_deeper(payload, MAX_NESTING):
        raise BadRequest(f"body nests objects and arrays deeper than {MAX_NESTING} levels")
    if "id" in payload or "receivedAt" in payload:  # the server's fields
        payload = {k: v for k, v in payload.items() if k not in _SERVER_FIELDS}
    meta = event.meta
    ssim = meta.ssim if meta else None
    return records.SensePost(
        type=event.type,
        ts=payload["ts"],
        ocr=event.ocr or "",
        app=(meta.app if meta else None) or "",
        ssim=float(ssim) if ssim is not None else None,
        payload=payload,
    )


def _nests_deeper(body: dict[str, Any], limit: int) -> bool:
    """Whether ``body`` nests objects and arrays more than ``limit`` levels (itself: 1).

    Level by level, looking only at containers, so a capture client's event costs little.
    ``type() is`` rather than ``isinstance``: parsed JSON has exact dicts and lists.
    """
    level: list[Any] = [body]
    for _ in range(limit):
        deeper = []
        for node in level:
            for child in node.values() if type(node) is dict else node:
                if type(child) is dict or type(child) is list:
                    deeper.append(child)
        if not deeper:
            return False
        level = deeper
    return True
