"""SenseBuffer: owns the sense ring, its ids, its activity counter and ``receivedAt``."""

from __future__ import annotations

import sqlite3

import orjson

from actors.core.bodies import sense_input
from actors.core.records import EMPTY_SENSE, SenseEvent, SenseInput, SenseSnapshot
from actors.ring_buffer import RingBuffer

SENSE_RING = 30
"""Events the sense ring keeps (the newest)."""
PRUNE_SLACK = 100
"""Rows beyond the ring are deleted in batches of about this many (events can be large)..."""
PRUNE_SLACK_BYTES = 8 * 1024 * 1024
"""...or once this much has been written since the last prune: with 2 MiB events, 100 rows
beyond a ring of 30 would keep 260 MiB on disk."""


class SenseBuffer(RingBuffer[SenseEvent, SenseSnapshot]):
    """The sense ring of :data:`SENSE_RING` events, in memory and in the ``sense`` table.

    After each commit the ring is published to ``published``, where the HTTP transport reads it.
    Every string of an event but its image data is redacted by ``redactor`` before it is
    stored (:mod:`actors.core.redaction`); restored rows were redacted when they were written.
    """

    name = "sense"
    ring_size = SENSE_RING
    empty = EMPTY_SENSE
    _written = 0
    """Bytes of events stored since the last prune (set on the instance once it writes)."""

    def restore(self, db: sqlite3.Connection) -> None:
        """Reload the ring; continue the ids after the highest ever stored.

        ``payload`` holds the event's JSON as served (older files: the client's object alone);
        validation drops the server's ``id`` and ``receivedAt``, which come from their columns.
        """
        rows = db.execute(
            "SELECT id, received_at, payload FROM sense ORDER BY id DESC LIMIT ?", (SENSE_RING,)
        ).fetchall()
        for event_id, received_at, payload in reversed(rows):
            self._ring.append(
                SenseEvent.stored(event_id, received_at, sense_input(orjson.loads(payload)))
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
            SenseEvent.stored(first + n, now, self._redacted(event))
            for n, event in enumerate(events)
        )
        self._insert(
            "sense",
            ("id", "received_at", "payload"),
            [(e.id, e.received_at, e.json) for e in stored],
        )
        self._next_id += len(stored)
        self._activity += len(stored)
        self._ring.extend(stored)
        self._written += sum(len(e.json) for e in stored)
        beyond = self._next_id - self._kept_from - SENSE_RING
        if beyond > PRUNE_SLACK or (beyond > 0 and self._written > PRUNE_SLACK_BYTES):
            self._request_prune()
        return stored

    def _redacted(self, event: SenseInput) -> SenseInput:
        """``event`` with its secrets redacted; its fields (``ocr``, ``app``...) are read again
        from the redacted object, so that they agree with it."""
        payload = self._redactor.payload(event.payload)
        return event if payload is event.payload else sense_input(payload)

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
        return SenseSnapshot(events=tuple(self._ring), activity=self._activity)

    def count(self) -> int:
        """Events in the ring."""
        return len(self._ring)
