"""FeedBuffer: owns the feed ring, its ids and its activity counter."""

from __future__ import annotations

import sqlite3
from collections import deque

from msgspec.structs import replace

from actors.common.forgetting import Forgotten, Span
from actors.core.records import EMPTY_FEED, FeedPost, FeedRecord, FeedSnapshot
from actors.core.shapes import AGENT, MARKS, STREAM, TRANSCRIPT_SOURCE, Channel
from actors.core.window import MEMO
from actors.ingest.ring_buffer import RingBuffer
from config.privacy import SHOWN, SPEECH_SUMMARY, Level

FEED_RING = 100
"""Items the feed keeps (the newest)."""
REPLY_SOURCE = "openclaw"
"""The source of an agent's answer to an escalation, as Sinain marks it."""
PRUNE_SLACK = 1000
"""Rows beyond the ring are deleted in batches of about this many."""

_Row = tuple[int, int, str, str, "str | None", Channel]
TRANSCRIPT_MARKS = (*MARKS.values(), MEMO)
"""The marks a transcript's text starts with."""


class FeedBuffer(RingBuffer[FeedRecord, FeedSnapshot]):
    """The feed ring of :data:`FEED_RING` items, kept in memory and in the ``feed`` table.

    Ids only grow, across restarts too. ``activity`` counts what clients post, not the
    agent's own hud lines, so the agent's push never makes the next tick look busy. After
    each commit the ring is published to ``published``, where the HTTP transport reads it.
    What clients post is redacted by ``redactor`` before it is stored
    (:mod:`actors.core.redaction.text`).
    """

    name = "feed"
    ring_size = FEED_RING
    empty = EMPTY_FEED

    def restore(self, db: sqlite3.Connection) -> None:
        """Reload the ring; continue the ids after the highest ever stored."""
        rows = db.execute(
            "SELECT id, ts, text, priority, source, channel FROM feed ORDER BY id DESC LIMIT ?",
            (FEED_RING,),
        ).fetchall()
        self._ring.extend(_item(row) for row in reversed(rows))
        first, last = db.execute("SELECT MIN(id), MAX(id) FROM feed").fetchone()
        self._next_id = (last or 0) + 1
        self._kept_from = first or self._next_id
        if rows:
            self._log.info("feed.restored", items=len(rows), next_id=self._next_id)

    def _stamp(self, messages: tuple[FeedPost, ...]) -> tuple[FeedRecord, ...]:
        """Give messages ids and server time; write them at once."""
        now = self._clock.now_ms()
        first = self._next_id
        items = tuple(FeedRecord.stored(first + n, now, m) for n, m in enumerate(messages))
        self._insert(
            "feed",
            ("id", "ts", "text", "priority", "source", "channel"),
            [(i.id, i.ts, i.text, i.priority, i.source, i.channel) for i in items],
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

    def forget(self, span: Span) -> Forgotten:
        """Delete the items that arrived in ``span``, from the table and the ring, their bytes
        gone from the files (:meth:`_erase`) before this answers."""

        def work(db: sqlite3.Connection) -> tuple[int, int]:
            bounds = (span.since, span.until)
            heard = db.execute(
                "SELECT COUNT(*) FROM feed WHERE ts BETWEEN ? AND ? AND source = ?",
                (*bounds, TRANSCRIPT_SOURCE),
            ).fetchone()[0]
            return db.execute("DELETE FROM feed WHERE ts BETWEEN ? AND ?", bounds).rowcount, heard

        items, heard = self._erase(work)
        self._ring = deque((i for i in self._ring if not span.holds(i.ts)), maxlen=FEED_RING)
        self.committed()
        return Forgotten(feed=items, transcripts=heard)

    def append(
        self,
        text: str,
        priority: str = "normal",
        source: str | None = None,
        channel: Channel = STREAM,
    ) -> FeedRecord:
        """Store a client's message (already validated) and count it as activity."""
        return self.append_many((FeedPost(text, priority, source, channel),))[0]

    def append_many(self, messages: tuple[FeedPost, ...]) -> tuple[FeedRecord, ...]:
        """Store several clients' messages, in order, and count them as activity.

        Their text, priority and source are redacted first: the one place where client text
        enters the feed. A transcript's words are then kept as the privacy matrix's
        ``LOCAL_BUFFER`` column says (:func:`kept_transcript`).
        """
        fields = [(m.text, m.priority, m.source or "") for m in messages]
        parts = self._redactor.texts([part for triple in fields for part in triple])
        posts = tuple(
            FeedPost(parts[3 * n], parts[3 * n + 1], parts[3 * n + 2] or None, m.channel)
            for n, m in enumerate(messages)
        )
        if not SHOWN[self._stored.audio]:
            posts = tuple(kept_transcript(post, self._stored.audio) for post in posts)
        items = self._stamp(posts)
        self._activity += len(items)
        return items

    def push_agent(self, hud: str) -> FeedRecord:
        """Store the agent's hud line as ``[🧠] <hud>``; not counted as activity."""
        (item,) = self._stamp((FeedPost(f"[🧠] {hud}", source=AGENT),))
        self._log.info("feed.agent_push", id=item.id, hud=hud)
        return item

    def push_reply(self, text: str) -> FeedRecord:
        """Store an answer of Sinain's agent to an escalation (``[🤖] ...``, redacted) on the
        agent channel, priority ``high``, source ``openclaw``; not counted as activity."""
        (clean,) = self._redactor.texts([text])
        (item,) = self._stamp((FeedPost(clean, "high", REPLY_SOURCE, AGENT),))
        self._log.info("feed.agent_reply", id=item.id, chars=len(clean))
        return item

    def committed(self) -> None:
        """Publish the ring as it is on disk now."""
        self._published.publish(self.snapshot())

    def items_after(self, after: int) -> tuple[FeedRecord, ...]:
        """Items with an id above ``after``, oldest first (committed or not)."""
        return self.snapshot().after(after)

    def stored_after(self, after: int, limit: int) -> tuple[FeedRecord, ...]:
        """Up to ``limit`` stored items with an id above ``after``, oldest first.

        Read from the ``feed`` table, which keeps up to about :data:`PRUNE_SLACK` rows beyond
        the ring: what a stream replays to a client that reconnects after more than the ring.
        """
        assert self._db is not None, "started() opened the connection"
        rows = self._db.execute(
            "SELECT id, ts, text, priority, source, channel FROM feed"
            " WHERE id > ? ORDER BY id LIMIT ?",
            (after, limit),
        ).fetchall()
        return tuple(_item(row) for row in rows)

    def snapshot(self) -> FeedSnapshot:
        """The whole ring and the activity counter, for the context builder."""
        return FeedSnapshot(items=tuple(self._ring), activity=self._activity)

    def count(self) -> int:
        """Items in the ring."""
        return len(self._ring)


def _item(row: _Row) -> FeedRecord:
    """A row of the ``feed`` table as an item."""
    item_id, ts, text, priority, source, channel = row
    return FeedRecord(
        id=item_id, ts=ts, text=text, priority=priority, source=source, channel=channel
    )


SPEECH_NOT_KEPT = "(speech not kept)"
"""What the feed stores of a transcript whose words ``PRIVACY_AUDIO_LOCAL_BUFFER=none`` keeps
out: when something was said, and by whom when its mark says, never what."""


def kept_transcript(post: FeedPost, level: Level) -> FeedPost:
    """``post`` as the feed stores it at ``level`` (``summary`` or ``none``) when it is a
    transcript (posted with ``source: "audio"`` or starting with a transcript's mark): its
    mark, then how many words it had (``summary``) or :data:`SPEECH_NOT_KEPT` (``none``).
    Any other post is kept as it is."""
    mark = next((m for m in TRANSCRIPT_MARKS if post.text.startswith(m)), "")
    if not mark and post.source != TRANSCRIPT_SOURCE:
        return post
    words = len(post.text.removeprefix(mark).split())
    said = SPEECH_SUMMARY.format(words=words) if level == "summary" else SPEECH_NOT_KEPT
    return replace(post, text=mark + said)
