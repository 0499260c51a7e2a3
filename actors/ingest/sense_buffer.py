"""SenseBuffer: owns the sense ring, its ids, its activity counter and ``receivedAt``."""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Iterable

import orjson

from actors.common.forgetting import Forgotten, Span
from actors.core.bodies import sense_input
from actors.core.records import EMPTY_SENSE, JSONDict, SensePost, SenseRecord, SenseSnapshot
from actors.ingest.ring_buffer import RingBuffer
from actors.kernel.storage import Store, read_rows
from config.agent.settings import MAX_IMAGES_LIMIT
from config.privacy import SHOWN, Column

SENSE_RING = 30
"""Events the sense ring keeps (the newest)."""
IMAGES_KEPT = MAX_IMAGES_LIMIT
"""Events whose image data (``roi.data``, ``diff.data``) the ring keeps in memory: the newest
that have some, as many as one call to a vision model may send. The ring keeps the others
without it (:meth:`SenseRecord.without_image_data`): a screen image can be megabytes, and a
call only ever sends the newest few. ``GET /sense`` reads theirs back (:func:`stored_json`)."""
PRUNE_SLACK = 100
"""Rows beyond the ring are deleted in batches of about this many (events can be large)..."""
PRUNE_SLACK_BYTES = 8 * 1024 * 1024
"""...or once this much has been written since the last prune: with 2 MiB events, 100 rows
beyond a ring of 30 would keep 260 MiB on disk."""


class SenseBuffer(RingBuffer[SenseRecord, SenseSnapshot]):
    """The sense ring of :data:`SENSE_RING` events, in memory and in the ``sense`` table.

    After each commit the ring is published to ``published``, where the HTTP transport reads it.
    Every string of an event but its image data is redacted by ``redactor`` before it is
    stored (:mod:`actors.core.redaction.text`); restored rows were redacted when they were written.
    """

    name = "sense"
    ring_size = SENSE_RING
    empty = EMPTY_SENSE
    _written = 0
    """Bytes of events stored since the last prune (set on the instance once it writes)."""

    def restore(self, db: sqlite3.Connection) -> None:
        """Reload the ring, with the image data of its newest :data:`IMAGES_KEPT` events that
        have some; continue the ids after the highest ever stored.

        ``payload`` holds the event's JSON as served (older files: the client's object alone);
        validation drops the server's ``id`` and ``receivedAt``, which come from their columns.
        The row of an event with image data that is not its JSON as served is rewritten so,
        before any reader may need it (:func:`stored_json`).
        """
        rows = db.execute(
            "SELECT * FROM (SELECT id, received_at, payload FROM sense ORDER BY id DESC LIMIT ?)"
            " ORDER BY id",
            (SENSE_RING,),
        )
        rewritten: list[tuple[bytes, int]] = []
        for event_id, received_at, payload in rows:  # one at a time: each can be megabytes
            event = SenseRecord.stored(event_id, received_at, sense_input(orjson.loads(payload)))
            if event.has_image_data and event.json != payload:
                rewritten.append((event.json, event_id))
            self._ring.append(event)
            self._drop_older_images()
        db.executemany("UPDATE sense SET payload = ? WHERE id = ?", rewritten)
        first, last = db.execute("SELECT MIN(id), MAX(id) FROM sense").fetchone()
        self._next_id = (last or 0) + 1
        self._kept_from = first or self._next_id
        if self._ring:
            self._log.info(
                "sense.restored",
                events=len(self._ring),
                next_id=self._next_id,
                rewritten=len(rewritten),
            )

    def append(self, event: SensePost) -> SenseRecord:
        """Store a validated event with its id and ``receivedAt``."""
        return self.append_many((event,))[0]

    def append_many(self, events: tuple[SensePost, ...]) -> tuple[SenseRecord, ...]:
        """Store several validated events, in order, written at once, redacted first."""
        now = self._clock.now_ms()
        first = self._next_id
        stored = tuple(
            SenseRecord.stored(first + n, now, self._redacted(event))
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
        if any(e.has_image_data for e in stored):  # else the newest with images are the same
            self._drop_older_images()
        self._written += sum(len(e.json) for e in stored)
        beyond = self._next_id - self._kept_from - SENSE_RING
        if beyond > PRUNE_SLACK or (beyond > 0 and self._written > PRUNE_SLACK_BYTES):
            self._request_prune()
        return stored

    def forget(self, span: Span) -> Forgotten:
        """Delete the events that arrived in ``span``, from the table and the ring, their bytes
        gone from the files (:meth:`_erase`) before this answers."""
        bounds = (span.since, span.until)
        events = self._erase(
            lambda db: (
                db.execute("DELETE FROM sense WHERE received_at BETWEEN ? AND ?", bounds).rowcount
            )
        )
        kept = (e for e in self._ring if not span.holds(e.received_at))
        self._ring = deque(kept, maxlen=SENSE_RING)
        self.committed()
        return Forgotten(screen=events)

    def _drop_older_images(self) -> None:
        """Keep the image data of the newest :data:`IMAGES_KEPT` events that have some; put
        the others in the ring without it (their rows hold it)."""
        kept = 0
        for index in range(len(self._ring) - 1, -1, -1):
            event = self._ring[index]
            if not event.has_image_data:
                continue
            if event.spilled:
                return  # and so are all before it
            if kept < IMAGES_KEPT:
                kept += 1
            else:
                self._ring[index] = event.without_image_data()

    def _redacted(self, event: SensePost) -> SensePost:
        """``event`` with its secrets redacted and only what the privacy matrix stores of it
        (:func:`stored_payload`); its fields (``ocr``, ``app``...) are
        read again from what is kept, so that they agree with it."""
        payload = stored_payload(self._redactor.payload(event.payload), self._stored)
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

    def events_after(self, after: int) -> tuple[SenseRecord, ...]:
        """Events with an id above ``after``, oldest first (committed or not)."""
        return self.snapshot().after(after)

    def snapshot(self) -> SenseSnapshot:
        """The whole ring and the activity counter, for the context builder."""
        return SenseSnapshot(events=tuple(self._ring), activity=self._activity)

    def count(self) -> int:
        """Events in the ring."""
        return len(self._ring)


def stored_json(store: Store, ids: Iterable[int]) -> dict[int, bytes]:
    """The stored JSON of the events ``ids`` (as ``GET /sense`` serves them, image data
    included), by id; an event whose row was pruned is missing.

    Safe from any thread: it reads in one statement on a read-only connection of its own, so
    it sees one committed state of the table and never waits for the buffer (WAL).
    """
    wanted = list(ids)
    if not wanted:
        return {}
    marks = ", ".join("?" * len(wanted))
    query = f"SELECT id, payload FROM sense WHERE id IN ({marks})"  # noqa: S608 (marks)
    return dict(read_rows(store, query, wanted))


_META_KEPT = ("app", "ssim", "screen")
"""What ``summary`` keeps of an event's ``meta`` besides its window title: where and how much
the screen changed, never what it showed."""


def stored_payload(payload: JSONDict, column: Column) -> JSONDict:
    """What the relay stores of a screen event (``payload``, redacted already), as its
    ``LOCAL_BUFFER`` ``column`` says: ``payload`` itself when that is all of it.

    Screen text not kept (``summary``, ``none``) keeps the event's ``type``, ``ts``, app and
    window only: its OCR, its observation and any field the relay does not know are left
    out. A window title not kept leaves ``meta.windowTitle`` and ``observation.subtitle``
    (where the capture client repeats it) out; images not kept (anything but ``full``: pixels
    cannot be redacted nor summarised) leave ``roi`` and ``diff`` out.
    """
    text, title, images = SHOWN[column.ocr], SHOWN[column.titles], column.images == "full"
    if text and title and images:
        return payload
    meta = payload.get("meta")
    if text:
        kept = {k: v for k, v in payload.items() if images or k not in ("roi", "diff")}
    else:
        kept = {k: payload[k] for k in ("type", "ts", "roi", "diff") if k in payload}
        if not images:
            kept.pop("roi", None)
            kept.pop("diff", None)
        if isinstance(meta, dict):
            kept["meta"] = {k: v for k, v in meta.items() if k in (*_META_KEPT, "windowTitle")}
    if not title:
        if isinstance(kept.get("meta"), dict):
            kept["meta"] = {k: v for k, v in kept["meta"].items() if k != "windowTitle"}
        observation = kept.get("observation")
        if isinstance(observation, dict):
            kept["observation"] = {k: v for k, v in observation.items() if k != "subtitle"}
    return kept
