"""Immutable records that actors own and pass around (Pykka copies nothing)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

JSONDict = dict[str, Any]


@dataclass(frozen=True, slots=True)
class FeedItem:
    """One message in the feed ring."""

    id: int
    text: str
    priority: str
    ts: int
    source: str | None = None
    """``"agent"`` for the agent's own hud lines; absent for what clients post."""

    def to_json(self) -> JSONDict:
        """The wire shape of the v2 spec: ``{id, text, priority, ts}`` (+ ``source``)."""
        out: JSONDict = {"id": self.id, "text": self.text, "priority": self.priority, "ts": self.ts}
        if self.source is not None:
            out["source"] = self.source
        return out


@dataclass(frozen=True, slots=True)
class SenseInput:
    """A validated ``POST /sense`` body, before the buffer gives it an id."""

    type: str
    ts: float
    ocr: str
    app: str
    ssim: float | None
    payload: JSONDict
    """The client's object as sent (less ``id``/``receivedAt``); never mutated after validation."""


@dataclass(frozen=True, slots=True)
class SenseEvent:
    """One screen event in the sense ring."""

    id: int
    received_at: int
    type: str
    ts: float
    ocr: str
    app: str
    ssim: float | None
    payload: JSONDict = field(repr=False)

    def to_json(self, *, meta_only: bool = False) -> JSONDict:
        """``{id, ...payload, receivedAt}``; ``meta_only`` drops ``roi.data`` and ``diff.data``."""
        out: JSONDict = {"id": self.id}
        for key, value in self.payload.items():
            if meta_only and key in ("roi", "diff") and isinstance(value, dict) and "data" in value:
                out[key] = {k: v for k, v in value.items() if k != "data"}
            else:
                out[key] = value
        out["receivedAt"] = self.received_at
        return out


@dataclass(frozen=True, slots=True)
class FeedSnapshot:
    """The feed ring at one moment, with its activity counter."""

    items: tuple[FeedItem, ...]
    activity: int
    """Counts client posts only; the agent's own hud push is not new activity."""


@dataclass(frozen=True, slots=True)
class SenseSnapshot:
    """The sense ring at one moment, with its activity counter."""

    events: tuple[SenseEvent, ...]
    activity: int
