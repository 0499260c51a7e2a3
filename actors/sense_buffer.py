"""SenseBuffer: owns the sense ring, validation of sense events and ``receivedAt``."""

from __future__ import annotations

import math
import sqlite3
from collections import deque
from typing import Any

import orjson

from actors.base import Reporter
from actors.clock import Clock
from actors.durable import DurableActor
from actors.errors import BadRequest
from actors.privacy import Redactor
from actors.published import Published
from actors.records import EMPTY_SENSE, SenseEvent, SenseInput, SenseSnapshot
from actors.storage import Store

SENSE_RING = 30
"""Events the sense ring keeps (the newest)."""
SENSE_BODY_LIMIT = 2 * 1024 * 1024
"""Largest ``POST /sense`` body, in bytes."""
_SERVER_FIELDS = ("id", "receivedAt")
PRUNE_SLACK = 100
"""Rows beyond the ring are deleted in batches of about this many (events can be large)..."""
PRUNE_SLACK_BYTES = 8 * 1024 * 1024
"""...or once this much has been written since the last prune: with 2 MiB events, 100 rows
beyond a ring of 30 would keep 260 MiB on disk."""
MAX_NESTING = 100
"""Levels of objects and arrays a sense event may nest (the capture client's nest 3). The
relay writes each event back out as JSON, which orjson does to 255 levels at most: a deeper
event used to fail its whole batch with a 500."""


def _nests_deeper(body: dict[str, Any], limit: int) -> bool:
    """Whether ``body`` nests objects and arrays more than ``limit`` levels (itself: 1).

    Level by level, looking only at containers: about 1 us for a capture client's event.
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


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_observation(observation: Any) -> None:
    if observation is None:
        return
    if not isinstance(observation, dict):
        raise BadRequest("observation must be an object")
    for key in ("title", "subtitle", "narrative"):
        value = observation.get(key)
        if value is not None and not isinstance(value, str):
            raise BadRequest(f"observation.{key} must be a string")
    for key in ("facts", "concepts"):
        value = observation.get(key)
        if value is not None and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            raise BadRequest(f"observation.{key} must be a list of strings")


def validate_sense(body: Any) -> SenseInput:
    """Check a ``POST /sense`` body; return what the buffer stores.

    ``type`` (a non-empty string) and ``ts`` (a number) are required. When present (``null``
    counts as absent): ``ocr`` is a string; ``meta`` an object with ``app`` and ``windowTitle``
    strings, ``ssim`` a number and ``screen`` a number or a string; ``roi`` and ``diff``
    objects; ``observation`` an object whose ``title``, ``subtitle`` and ``narrative`` are
    strings and ``facts`` and ``concepts`` lists of strings (Sinain's capture client sends all
    of these). Other fields are kept as sent. ``id`` and ``receivedAt`` are the server's and
    are dropped from the client's object.

    Raises:
        BadRequest: what is wrong, by field name.
    """
    if not isinstance(body, dict):
        raise BadRequest("body must be a JSON object")
    if _nests_deeper(body, MAX_NESTING):
        raise BadRequest(f"body nests objects and arrays deeper than {MAX_NESTING} levels")
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
    title = meta.get("windowTitle")
    if title is not None and not isinstance(title, str):
        raise BadRequest("meta.windowTitle must be a string")
    screen = meta.get("screen")
    if screen is not None and not (_is_number(screen) or isinstance(screen, str)):
        raise BadRequest("meta.screen must be a number or a string")
    _check_observation(body.get("observation"))
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


class SenseBuffer(DurableActor):
    """The sense ring of :data:`SENSE_RING` events, in memory and in the ``sense`` table.

    After each commit the ring is published to ``published``, where the HTTP transport reads it.
    Every string of an event but its image data is redacted by ``redactor`` before it is
    stored (:mod:`actors.privacy`); restored rows were redacted when they were written.
    """

    name = "sense"

    def __init__(
        self,
        *,
        clock: Clock,
        store: Store,
        published: Published[SenseSnapshot] | None = None,
        report: Reporter | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        super().__init__(store=store, report=report)
        self._clock = clock
        self._redactor = redactor or Redactor()
        self._published = published or Published(EMPTY_SENSE)
        self._events: deque[SenseEvent] = deque(maxlen=SENSE_RING)
        self._next_id = 1
        self._activity = 0
        self._kept_from = 1
        self._written = 0
        """Bytes of events stored since the last prune."""

    def restore(self, db: sqlite3.Connection) -> None:
        """Reload the ring; continue the ids after the highest ever stored.

        ``payload`` holds the event's JSON as served (older files: the client's object alone);
        validation drops the server's ``id`` and ``receivedAt``, which come from their columns.
        """
        rows = db.execute(
            "SELECT id, received_at, payload FROM sense ORDER BY id DESC LIMIT ?", (SENSE_RING,)
        ).fetchall()
        for event_id, received_at, payload in reversed(rows):
            self._events.append(
                _stored(event_id, received_at, validate_sense(orjson.loads(payload)))
            )
        first, last = db.execute("SELECT MIN(id), MAX(id) FROM sense").fetchone()
        self._next_id = (last or 0) + 1
        self._kept_from = first or self._next_id
        if rows:
            self._log.info("sense.restored", events=len(rows), next_id=self._next_id)

    def append(self, event: SenseInput) -> SenseEvent:
        """Store a validated event with its id and ``receivedAt``."""
        return self.append_many((event,))[0]

    def append_many(self, events: tuple[SenseInput, ...]) -> tuple[SenseEvent, ...]:
        """Store several validated events, in order, written at once, redacted first."""
        now = self._clock.now_ms()
        first = self._next_id
        stored = tuple(
            _stored(first + n, now, self._redacted(event)) for n, event in enumerate(events)
        )
        self._insert(
            "sense",
            ("id", "received_at", "payload"),
            [(e.id, e.received_at, e.json) for e in stored],
        )
        self._next_id += len(stored)
        self._activity += len(stored)
        self._events.extend(stored)
        self._written += sum(len(e.json) for e in stored)
        beyond = self._next_id - self._kept_from - SENSE_RING
        if beyond > PRUNE_SLACK or (beyond > 0 and self._written > PRUNE_SLACK_BYTES):
            self._request_prune()
        return stored

    def _redacted(self, event: SenseInput) -> SenseInput:
        """``event`` with its secrets redacted; its fields (``ocr``, ``app``...) are read again
        from the redacted object, so that they agree with it."""
        payload = self._redactor.payload(event.payload)
        return event if payload is event.payload else validate_sense(payload)

    def prune(self) -> None:
        """Drop the rows that fell out of the ring (batched: every PRUNE_SLACK events or
        PRUNE_SLACK_BYTES)."""
        keep_from = self._next_id - SENSE_RING
        self._write("DELETE FROM sense WHERE id < ?", (keep_from,))
        self._kept_from = keep_from
        self._written = 0

    def committed(self) -> None:
        """Publish the ring as it is on disk now."""
        self._published.publish(self.snapshot())

    def events_after(self, after: int) -> tuple[SenseEvent, ...]:
        """Events with an id above ``after``, oldest first (committed or not)."""
        return self.snapshot().after(after)

    def snapshot(self) -> SenseSnapshot:
        """The whole ring and the activity counter, for the context builder."""
        return SenseSnapshot(events=tuple(self._events), activity=self._activity)

    def count(self) -> int:
        """Events in the ring."""
        return len(self._events)


def _stored(event_id: int, received_at: int, event: SenseInput) -> SenseEvent:
    return SenseEvent(
        id=event_id,
        received_at=received_at,
        type=event.type,
        ts=event.ts,
        ocr=event.ocr,
        app=event.app,
        ssim=event.ssim,
        payload=event.payload,
    )
