"""Immutable records that actors own and pass around (Pykka copies nothing)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

import msgspec
import orjson
from msgspec import Struct

from actors.core import shapes
from actors.core.screen_image import ImageRefusal, ScreenImage, image_data, read_image
from actors.core.shapes import STREAM, Channel

JSONDict = dict[str, Any]
_UNREAD = object()
"""A sense event's image before :meth:`SenseRecord.image` read it."""


class FeedPost(Struct, frozen=True):
    """A message for the feed, before it is stored: a validated ``POST /feed`` body (its wire
    struct is :class:`actors.core.bodies.FeedInput`), an overlay's typed message, a transcript
    or the agent's hud line.

    A struct rather than a dataclass, as :class:`SensePost`: one is made per post, and a
    struct costs less to make."""

    text: str
    priority: str = "normal"
    source: str | None = None
    """Who or what it comes from, as the client says: ``"audio"`` marks a transcript."""
    channel: Channel = STREAM
    """One of :data:`CHANNELS`."""


@dataclass(frozen=True, slots=True)
class FeedRecord:
    """One message in the feed ring."""

    id: int
    text: str
    priority: str
    ts: int
    source: str | None = None
    """``"agent"`` for the agent's own hud lines; what the client said, or absent, for posts."""
    channel: Channel = STREAM
    """Where the overlay shows it: :data:`STREAM` or :data:`AGENT` (its Agent tab)."""
    json: bytes = field(default=b"", compare=False, repr=False)
    """:meth:`shape` encoded, made once (reads join these bytes)."""

    def __post_init__(self) -> None:
        if not self.json:
            object.__setattr__(self, "json", shapes.encode(self.shape()))

    @classmethod
    def stored(cls, item_id: int, ts: int, message: FeedPost) -> FeedRecord:
        """``message`` (validated) as the feed buffer stores it, with its id and arrival."""
        return cls(
            id=item_id,
            text=message.text,
            priority=message.priority,
            ts=ts,
            source=message.source,
            channel=message.channel,
        )

    def shape(self) -> shapes.FeedItem:
        """The wire shape Sinain's clients read: ``{id, text, priority, ts, channel}``, and
        ``source`` when there is one."""
        return shapes.FeedItem(
            id=self.id,
            text=self.text,
            priority=self.priority,
            ts=self.ts,
            source=msgspec.UNSET if self.source is None else self.source,
            channel=self.channel,
        )

    def to_json(self) -> JSONDict:
        """:meth:`shape` as plain data."""
        out: JSONDict = msgspec.to_builtins(self.shape())
        return out


class SensePost(Struct, frozen=True):
    """A validated ``POST /sense`` body (its wire struct is
    :class:`actors.core.bodies.SenseInput`), before the buffer gives it an id."""

    type: str
    ts: float
    ocr: str
    app: str
    ssim: float | None
    payload: JSONDict
    """The client's object as sent (less ``id``/``receivedAt``); never mutated after validation."""


@dataclass(frozen=True, slots=True)
class SenseRecord:
    """One screen event in the sense ring."""

    id: int
    received_at: int
    type: str
    ts: float
    ocr: str
    app: str
    ssim: float | None
    payload: JSONDict = field(repr=False)
    json: bytes = field(default=b"", compare=False, repr=False)
    """``to_json()`` serialised, made once (without its image data once it is ``spilled``)."""
    json_meta_only: bytes = field(default=b"", compare=False, repr=False)
    """``to_json(meta_only=True)`` serialised, made once."""
    spilled: bool = field(default=False, compare=False)
    """Its image data was let go from memory (:meth:`without_image_data`): the stored row
    holds the event's JSON as served, with it."""
    _image: Any = field(default=_UNREAD, init=False, compare=False, repr=False)
    """What :meth:`image` read, once it has."""

    def __post_init__(self) -> None:
        if not self.json:
            # One serialisation of the payload, which can be megabytes of OCR: the server's
            # fields are spliced around it, in the order to_json gives.
            inner = memoryview(orjson.dumps(self.payload))[1:-1]
            full = b"".join(
                (
                    b'{"id":%d,' % self.id,
                    inner,
                    b"," if inner else b"",
                    b'"receivedAt":%d}' % self.received_at,
                )
            )
            stripped = _strips_image_data(self.payload)
            meta = orjson.dumps(self.to_json(meta_only=True)) if stripped else full
            object.__setattr__(self, "json", full)
            object.__setattr__(self, "json_meta_only", meta)

    @classmethod
    def stored(cls, event_id: int, received_at: int, event: SensePost) -> SenseRecord:
        """``event`` (validated) as the sense buffer stores it, with its id and arrival."""
        return cls(
            id=event_id,
            received_at=received_at,
            type=event.type,
            ts=event.ts,
            ocr=event.ocr,
            app=event.app,
            ssim=event.ssim,
            payload=event.payload,
        )

    @property
    def has_image_data(self) -> bool:
        """Whether it came with ``roi.data`` or ``diff.data`` (held in memory or not)."""
        return self.spilled or _strips_image_data(self.payload)

    def without_image_data(self) -> SenseRecord:
        """This event without its image data in memory: ``roi.data`` and ``diff.data`` dropped
        from ``payload`` and ``json`` (which is then ``json_meta_only``), and no image
        (:meth:`image` answers ``None``). The JSON served with them is the stored row."""
        event = SenseRecord(
            id=self.id,
            received_at=self.received_at,
            type=self.type,
            ts=self.ts,
            ocr=self.ocr,
            app=self.app,
            ssim=self.ssim,
            payload=_without_data(self.payload),
            json=self.json_meta_only,
            json_meta_only=self.json_meta_only,
            spilled=True,
        )
        object.__setattr__(event, "_image", None)
        return event

    def image(self) -> tuple[ScreenImage | ImageRefusal | None, bool]:
        """The event's image (``roi.data``) checked (:func:`read_image`), or ``None`` without
        one; and whether this call was the first to read it (it is read once, when a tick
        first looks: ingestion never pays for decoding a picture)."""
        if self._image is not _UNREAD:
            return self._image, False
        data = image_data(self.payload)
        image = read_image(self.id, data) if data is not None else None
        object.__setattr__(self, "_image", image)
        return image, True

    @property
    def window_title(self) -> str:
        """``meta.windowTitle`` as the capture client sent it, or empty."""
        meta = self.payload.get("meta")
        value = meta.get("windowTitle") if isinstance(meta, dict) else None
        return value if isinstance(value, str) else ""

    @property
    def title(self) -> str:
        """``observation.title``, or empty."""
        return self._observation_text("title")

    @property
    def narrative(self) -> str:
        """``observation.narrative``, or empty."""
        return self._observation_text("narrative")

    def _observation_text(self, key: str) -> str:
        observation = self.payload.get("observation")
        value = observation.get(key) if isinstance(observation, dict) else None
        return value if isinstance(value, str) else ""

    def to_json(self, *, meta_only: bool = False) -> JSONDict:
        """``{id, ...payload, receivedAt}``; ``meta_only`` drops ``roi.data`` and ``diff.data``
        (a ``spilled`` event has none to give)."""
        payload = _without_data(self.payload) if meta_only else self.payload
        return {"id": self.id, **payload, "receivedAt": self.received_at}


_IMAGE_KEYS = ("roi", "diff")


def _strips_image_data(payload: JSONDict) -> bool:
    return any(isinstance(payload.get(key), dict) and "data" in payload[key] for key in _IMAGE_KEYS)


def _without_data(payload: JSONDict) -> JSONDict:
    """``payload`` less ``roi.data`` and ``diff.data`` (itself when it has neither)."""
    if not _strips_image_data(payload):
        return payload
    return {
        key: (
            {k: v for k, v in value.items() if k != "data"}
            if key in _IMAGE_KEYS and isinstance(value, dict)
            else value
        )
        for key, value in payload.items()
    }


@dataclass(frozen=True, slots=True)
class FeedSnapshot:
    """The feed ring at one moment, with its activity counter."""

    items: tuple[FeedRecord, ...]
    """Oldest first; ids ascending."""
    activity: int
    """Counts client posts only; the agent's own hud push is not new activity."""

    def after(self, after: int) -> tuple[FeedRecord, ...]:
        """Items with an id above ``after``, oldest first."""
        return self.items[bisect.bisect_right(self.items, after, key=_item_id) :]


@dataclass(frozen=True, slots=True)
class SenseSnapshot:
    """The sense ring at one moment, with its activity counter."""

    events: tuple[SenseRecord, ...]
    """Oldest first; ids ascending."""
    activity: int

    def after(self, after: int) -> tuple[SenseRecord, ...]:
        """Events with an id above ``after``, oldest first."""
        return self.events[bisect.bisect_right(self.events, after, key=_item_id) :]


EMPTY_FEED = FeedSnapshot(items=(), activity=0)
EMPTY_SENSE = SenseSnapshot(events=(), activity=0)


def _item_id(item: FeedRecord | SenseRecord) -> int:
    return item.id
