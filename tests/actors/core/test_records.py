"""Records carry their JSON, made once: it must say exactly what ``to_json`` says.

Snapshots answer ``after=N`` reads by id."""

from __future__ import annotations

import orjson
import pytest

from actors.core.bodies import sense_input
from actors.core.records import FeedRecord, FeedSnapshot, SenseRecord


@pytest.mark.parametrize("source", [None, "agent"])
def test_a_feed_items_bytes_are_its_json(source: str | None) -> None:
    item = FeedRecord(id=7, text='Привет "quotes" \\ 👋', priority="high", ts=1, source=source)
    assert orjson.loads(item.json) == item.to_json()
    assert item == FeedRecord(id=7, text=item.text, priority="high", ts=1, source=source)


@pytest.mark.parametrize(
    "body",
    [
        {"type": "text", "ts": 1, "ocr": "x", "meta": {"app": "code"}},
        {"type": "visual", "ts": 2.5, "roi": {"x": 1, "data": "AAAA"}, "diff": {"data": "B"}},
        {"type": "visual", "ts": 3, "roi": {"x": 1}},
    ],
)
def test_a_sense_events_bytes_are_its_json_full_and_meta_only(body: dict[str, object]) -> None:
    event = SenseRecord.stored(4, 9, sense_input(body))
    assert orjson.loads(event.json) == event.to_json()
    assert orjson.loads(event.json_meta_only) == event.to_json(meta_only=True)


@pytest.mark.parametrize(
    ("after", "expected"),
    [(-5, [3, 4, 7, 9]), (0, [3, 4, 7, 9]), (3, [4, 7, 9]), (5, [7, 9]), (9, []), (99, [])],
)
def test_a_snapshot_gives_the_items_after_an_id(after: int, expected: list[int]) -> None:
    items = tuple(FeedRecord(id=i, text="t", priority="normal", ts=1) for i in (3, 4, 7, 9))
    assert [i.id for i in FeedSnapshot(items=items, activity=4).after(after)] == expected
