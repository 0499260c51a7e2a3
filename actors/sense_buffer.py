"""SenseBuffer: owns the sense ring, validation of sense events and ``receivedAt``."""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from actors.base import RelayActor, Reporter
from actors.clock import Clock
from actors.errors import BadRequest
from actors.records import SenseEvent, SenseInput, SenseSnapshot

SENSE_RING = 30
"""Events the sense ring keeps (the newest)."""
SENSE_BODY_LIMIT = 2 * 1024 * 1024
"""Largest ``POST /sense`` body, in bytes."""
_SERVER_FIELDS = ("id", "receivedAt")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def validate_sense(body: Any) -> SenseInput:
    """Check a ``POST /sense`` body; return what the buffer stores.

    ``type`` (a non-empty string) and ``ts`` (a number) are required. ``ocr`` must be a string,
    ``meta`` an object (``meta.app`` a string, ``meta.ssim`` a number), ``roi`` and ``diff``
    objects, when present. Other fields are kept as sent. ``id`` and ``receivedAt`` are the
    server's and are dropped from the client's object.

    Raises:
        BadRequest: what is wrong, by field name.
    """
    if not isinstance(body, dict):
        raise BadRequest("body must be a JSON object")
    kind = body.get("type")
    if kind is None or "ts" not in body:
        raise BadRequest("missing type or ts")
    if not isinstance(kind, str) or not kind:
        raise BadRequest("type must be a non-empty string")
    ts = body["ts"]
    if not _is_number(ts):
        raise BadRequest("ts must be a number")
    ocr = body.get("ocr")
    if ocr is not None and not isinstance(ocr, str):
        raise BadRequest("ocr must be a string")
    meta = body.get("meta")
    if meta is not None and not isinstance(meta, dict):
        raise BadRequest("meta must be an object")
    meta = meta or {}
    app = meta.get("app")
    if app is not None and not isinstance(app, str):
        raise BadRequest("meta.app must be a string")
    ssim = meta.get("ssim")
    if ssim is not None and not _is_number(ssim):
        raise BadRequest("meta.ssim must be a number")
    for key in ("roi", "diff"):
        value = body.get(key)
        if value is not None and not isinstance(value, dict):
            raise BadRequest(f"{key} must be an object")
    payload = body
    if any(key in body for key in _SERVER_FIELDS):
        payload = {k: v for k, v in body.items() if k not in _SERVER_FIELDS}
    return SenseInput(
        type=kind,
        ts=ts,
        ocr=ocr or "",
        app=app or "",
        ssim=float(ssim) if ssim is not None else None,
        payload=payload,
    )


class SenseBuffer(RelayActor):
    """The sense ring of :data:`SENSE_RING` events; ids only grow."""

    name = "sense"

    def __init__(self, *, clock: Clock, report: Reporter | None = None) -> None:
        super().__init__(report=report)
        self._clock = clock
        self._events: deque[SenseEvent] = deque(maxlen=SENSE_RING)
        self._next_id = 1
        self._activity = 0

    def append(self, event: SenseInput) -> SenseEvent:
        """Store a validated event with its id and ``receivedAt``."""
        stored = SenseEvent(
            id=self._next_id,
            received_at=self._clock.now_ms(),
            type=event.type,
            ts=event.ts,
            ocr=event.ocr,
            app=event.app,
            ssim=event.ssim,
            payload=event.payload,
        )
        self._next_id += 1
        self._activity += 1
        self._events.append(stored)
        return stored

    def events_after(self, after: int) -> tuple[SenseEvent, ...]:
        """Events with an id above ``after``, oldest first."""
        if after <= 0:
            return tuple(self._events)
        return tuple(e for e in self._events if e.id > after)

    def snapshot(self) -> SenseSnapshot:
        """The whole ring and the activity counter, for the context builder."""
        return SenseSnapshot(events=tuple(self._events), activity=self._activity)

    def count(self) -> int:
        """Events in the ring."""
        return len(self._events)
