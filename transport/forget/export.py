"""``GET /export``'s lines: what arrived in a range, read from the three files in time order.

Each kind is read from its owner's file a page at a time, on a read-only connection of its
own (:func:`~actors.kernel.storage.read_rows`), and the three are merged by time: an export
holds at most a page of each kind and a chunk of lines in memory, however long the range.
No actor is asked, and none waits for an export.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from actors.agent.core.entries import AgentRecord
from actors.common.forgetting import Span
from actors.core.bodies import sense_input
from actors.core.records import FeedRecord, SenseRecord
from actors.core.shapes import encode
from actors.kernel.storage import StorageInfo, Store, read_rows

PAGE_ROWS = 256
"""Rows read from a file at once, per kind."""
CHUNK_LINES = 256
"""Lines handed to the answer at once."""

Line = tuple[int, int, int, bytes]
"""``(ts, kind's rank, id, line)``: the merge's order, and the line."""


@dataclass(frozen=True, slots=True)
class _Kind:
    """One kind of line: its file, its query (from ``(ts, id)`` on), and its item's JSON."""

    name: str
    part: str
    sql: str
    item: Callable[[Any], bytes]


def _feed_item(row: Any) -> bytes:
    item_id, ts, text, priority, source, channel = row
    record = FeedRecord(item_id, text, priority, ts, source, channel)
    return record.json


def _screen_item(row: Any) -> bytes:
    event_id, received_at, payload = row
    event = SenseRecord.stored(event_id, received_at, sense_input(orjson.loads(payload)))
    return event.json_meta_only  # its pictures (roi.data, diff.data) left out


def _entry_item(row: Any) -> bytes:
    return encode(AgentRecord.from_record(row[2]).shape())


KINDS = (
    _Kind(
        "feed",
        "feed",
        "SELECT id, ts, text, priority, source, channel FROM feed WHERE ts BETWEEN ? AND ? "
        "AND (ts, id) > (?, ?) ORDER BY ts, id LIMIT ?",
        _feed_item,
    ),
    _Kind(
        "screen",
        "sense",
        "SELECT id, received_at, payload FROM sense WHERE received_at BETWEEN ? AND ? "
        "AND (received_at, id) > (?, ?) ORDER BY received_at, id LIMIT ?",
        _screen_item,
    ),
    _Kind(
        "entry",
        "agent",
        "SELECT id, ts, entry FROM agent_entries WHERE ts BETWEEN ? AND ? "
        "AND (ts, id) > (?, ?) ORDER BY ts, id LIMIT ?",
        _entry_item,
    ),
)
"""The kinds of line, in the order lines of the same time come."""


def _lines(kind: _Kind, rank: int, store: Store, span: Span) -> Iterator[Line]:
    """``kind``'s lines of ``span``, in time order, read a page at a time."""
    after = (span.since, 0)
    while True:
        rows = read_rows(store, kind.sql, (span.since, span.until, *after, PAGE_ROWS))
        for row in rows:
            item_id, ts = row[0], row[1]
            head = b'{"kind":"%s","ts":%d,"item":' % (kind.name.encode(), ts)
            yield ts, rank, item_id, head + kind.item(row) + b"}\n"
        if len(rows) < PAGE_ROWS:
            return
        after = (rows[-1][1], rows[-1][0])


def export_lines(storage: StorageInfo, span: Span) -> Iterator[bytes]:
    """Every line of ``span``, the three kinds merged in time order."""
    kinds = (_lines(kind, rank, storage.stores[kind.part], span) for rank, kind in enumerate(KINDS))
    for line in heapq.merge(*kinds):
        yield line[3]


def next_chunk(lines: Iterator[bytes]) -> bytes:
    """Up to :data:`CHUNK_LINES` of ``lines``, joined (empty once they are all taken)."""
    chunk = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == CHUNK_LINES:
            break
    return b"".join(chunk)
