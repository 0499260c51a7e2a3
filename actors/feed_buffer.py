"""FeedBuffer: owns the feed ring, its ids and its activity counter."""

from __future__ import annotations

import sqlite3

from actors.core.records import EMPTY_FEED, FeedItem, FeedSnapshot
from actors.ring_buffer import RingBuffer

FEED_RING = 100
"""Items the feed keeps (the newest)."""
PRUNE_SLACK = 1000
"""Rows beyond the ring are deleted in batches of about this many."""

AGENT_SOURCE = "agent"


class FeedBuffer(RingBuffer[FeedItem, FeedSnapshot]):
    """The feed ring of :data:`FEED_RING` items, kept in memory and in the ``feed`` table.

    Ids only grow, across restarts too. ``activity`` counts what clients post, not the
    agent's own hud lines, so the agent's push never makes the next tick look busy. After
    each commit the ring is published to ``published``, where the HTTP transport reads it.
    What clients post is redacted by ``redactor`` before it is stored
    (:mod:`actors.core.redaction`).
    """

    name = "feed"
    ring_size = FEED_RING
    empty = EMPTY_FEED

    def restore(self, db: sqlite3.Connection) -> None:
        """Reload the ring; continue the ids after the highest ever stored."""
        rows = db.execute(
            "SELECT id, ts, text, priority, source FROM feed ORDER BY id DESC LIMIT ?", (FEED_RING,)
        ).fetchall()
        self._ring.extend(
            FeedItem(id=i, ts=ts, text=text, priority=priority, source=source)
            for i, ts, text, priority, source in reversed(rows)
        )
        first, last = db.execute("SELECT MIN(id), MAX(id) FROM feed").fetchone()
        self._next_id = (last or 0) + 1
        self._kept_from = first or self._next_id
        if rows:
            self._log.info("feed.restored", items=len(rows), next_id=self._next_id)

    def _stamp(self, messages: tuple[tuple[str, str, str | None], ...]) -> tuple[FeedItem, ...]:
        """Give ``(text, priority, source)`` messages ids and server time; write them at once."""
        now = self._clock.now_ms()
        first = self._next_id
        items = tuple(
            FeedItem(id=first + n, text=text, priority=priority, ts=now, source=source)
            for n, (text, priority, source) in enumerate(messages)
        )
        self._insert(
            "feed",
            ("id", "ts", "text", "priority", "source"),
            [(i.id, i.ts, i.text, i.priority, i.source) for i in items],
        )
        self._next_id += len(items)
        self._ring.extend(items)
        if self._next_id - self._kept_from > FEED_RING + PRUNE_SLACK:
            self._request_prune()
        return items

    def prune(self) -> None:
        """Drop the rows that fell out of the ring (batched: once per PRUNE_SLACK items)."""
        keep_from = self._next_id - FEED_RING
        self._write("DELETE FROM feed WHERE id < ?", (keep_from,))
        self._kept_from = keep_from

    def append(self, text: str, priority: str = "normal") -> FeedItem:
        """Store a client's message (already validated) and count it as activity."""
        return self.append_many(((text, priority),))[0]

    def append_many(self, messages: tuple[tuple[str, str], ...]) -> tuple[FeedItem, ...]:
        """Store several clients' messages (``(text, priority)`` pairs), in order, as activity.

        Both strings are redacted first: the one place where client text enters the feed.
        """
        parts = self._redactor.texts([part for message in messages for part in message])
        items = self._stamp(tuple((parts[n], parts[n + 1], None) for n in range(0, len(parts), 2)))
        self._activity += len(items)
        return items

    def push_agent(self, hud: str) -> FeedItem:
        """Store the agent's hud line as ``[🧠] <hud>``; not counted as activity."""
        (item,) = self._stamp(((f"[🧠] {hud}", "normal", AGENT_SOURCE),))
        self._log.info("feed.agent_push", id=item.id, hud=hud)
        return item

    def committed(self) -> None:
        """Publish the ring as it is on disk now."""
        self._published.publish(self.snapshot())

    def items_after(self, after: int) -> tuple[FeedItem, ...]:
        """Items with an id above ``after``, oldest first (committed or not)."""
        return self.snapshot().after(after)

    def stored_after(self, after: int, limit: int) -> tuple[FeedItem, ...]:
        """Up to ``limit`` stored items with an id above ``after``, oldest first.

        Read from the ``feed`` table, which keeps up to about :data:`PRUNE_SLACK` rows beyond
        the ring: what a stream replays to a client that reconnects after more than the ring.
        """
        assert self._db is not None, "started() opened the connection"
        rows = self._db.execute(
            "SELECT id, ts, text, priority, source FROM feed WHERE id > ? ORDER BY id LIMIT ?",
            (after, limit),
        ).fetchall()
        return tuple(
            FeedItem(id=i, ts=ts, text=text, priority=priority, source=source)
            for i, ts, text, priority, source in rows
        )

    def snapshot(self) -> FeedSnapshot:
        """The whole ring and the activity counter, for the context builder."""
        return FeedSnapshot(items=tuple(self._ring), activity=self._activity)

    def count(self) -> int:
        """Items in the ring."""
        return len(self._ring)
