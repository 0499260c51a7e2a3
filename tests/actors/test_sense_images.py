"""The sense ring keeps the image bytes of its newest few events with images only; the others
keep everything else, in memory and on disk, across restarts too."""

from __future__ import annotations

import sqlite3
from typing import Any

import orjson

from actors.core.bodies import sense_input
from actors.core.records import SenseRecord, SenseSnapshot
from actors.ingest.sense_buffer import IMAGES_KEPT, SENSE_RING, SenseBuffer, stored_json
from actors.kernel.clock import FakeClock
from actors.kernel.published import Published
from actors.kernel.storage import StorageInfo
from tests.support.posts import picture
from tests.support.posts import screen_with_images as screen


def carries_image(body: dict[str, Any]) -> bool:
    return "roi" in body or "diff" in body


def start(clock: FakeClock, storage: StorageInfo) -> tuple[Any, Published[SenseSnapshot]]:
    view: Published[SenseSnapshot] = Published(SenseSnapshot(events=(), activity=0))
    buffer = SenseBuffer.start(clock=clock, store=storage.stores["sense"], published=view)
    proxy = buffer.proxy()
    proxy.count().get(timeout=5)  # restored and published
    return proxy, view


def settled(buffer: Any) -> None:
    """Wait until what ``buffer`` wrote is committed and published (the commit is a message
    the buffer sent itself, queued before this one)."""
    buffer.count().get(timeout=5)


def holds_image_bytes(event: SenseRecord) -> bool:
    """Whether any copy of the event's image data is in memory: payload, JSON or image."""
    in_payload = any(
        isinstance(event.payload.get(key), dict) and "data" in event.payload[key]
        for key in ("roi", "diff")
    )
    image, _ = event.image()
    return in_payload or b'"data"' in event.json or image is not None


def assert_only_the_newest_hold_images(events: tuple[SenseRecord, ...], bodies: list[Any]) -> None:
    """The newest IMAGES_KEPT events with an image hold its bytes, no other event does, and
    every event keeps the rest of what was posted."""
    by_id = dict(zip(range(1, len(bodies) + 1), bodies, strict=True))
    with_images = [e.id for e in events if carries_image(by_id[e.id])]
    newest = set(with_images[-IMAGES_KEPT:])
    assert [e.id for e in events if holds_image_bytes(e)] == sorted(newest)
    for event in events:
        served = {"id": event.id, **by_id[event.id], "receivedAt": event.received_at}
        meta = event.to_json(meta_only=True)
        assert orjson.loads(event.json_meta_only) == meta
        assert meta == {
            k: ({kk: vv for kk, vv in v.items() if kk != "data"} if k in ("roi", "diff") else v)
            for k, v in served.items()
        }
        if event.id in newest:
            assert orjson.loads(event.json) == served
            assert event.image()[0] is not None or "roi" not in by_id[event.id]
        else:
            assert event.json == event.json_meta_only
            assert event.image() == (None, False)


def test_only_the_newest_events_with_images_keep_their_bytes(
    clock: FakeClock, storage: StorageInfo
) -> None:
    buffer, view = start(clock, storage)
    bodies = [screen(n) for n in range(1, SENSE_RING + 8)]
    for body in bodies[:20]:
        buffer.append(sense_input(body)).get(timeout=5)
        settled(buffer)
        assert_only_the_newest_hold_images(view.value.events, bodies)
    buffer.append_many(tuple(sense_input(b) for b in bodies[20:])).get(timeout=5)  # one burst
    settled(buffer)
    events = view.value.events
    assert [e.id for e in events] == list(range(8, SENSE_RING + 8))
    assert sum(carries_image(bodies[e.id - 1]) for e in events) > IMAGES_KEPT
    assert_only_the_newest_hold_images(events, bodies)
    # the ring in memory is what was published
    assert buffer.events_after(0).get(timeout=5) == events


def test_a_restart_keeps_only_the_newest_images_in_memory(
    clock: FakeClock, storage: StorageInfo
) -> None:
    buffer, _ = start(clock, storage)
    bodies = [screen(n) for n in range(1, SENSE_RING + 1)]
    buffer.append_many(tuple(sense_input(b) for b in bodies)).get(timeout=5)
    buffer.stop().get(timeout=5)

    _, view = start(clock, storage)
    assert_only_the_newest_hold_images(view.value.events, bodies)


def test_the_rows_of_events_without_their_bytes_are_served_json(
    clock: FakeClock, storage: StorageInfo
) -> None:
    """The rows the ring no longer holds the image bytes of are each event's JSON as served,
    even a row an older relay wrote as the client's object alone (rewritten at restore)."""
    older = {"type": "screen", "ts": 1, "ocr": "older row", "roi": {"data": picture(1)}}
    db = sqlite3.connect(storage.stores["sense"].path)
    with db:
        db.execute("INSERT INTO sense VALUES (1, 100, ?)", (orjson.dumps(older),))
    db.close()
    buffer, view = start(clock, storage)
    bodies = [screen(n) for n in range(2, 14)]
    buffer.append_many(tuple(sense_input(b) for b in bodies)).get(timeout=5)
    buffer.stop().get(timeout=5)
    _, view = start(clock, storage)
    events = view.value.events
    full = {
        e.id: {"id": e.id, **b, "receivedAt": e.received_at}
        for e, b in zip(events[1:], bodies, strict=True)
    }
    full[1] = {"id": 1, **older, "receivedAt": 100}
    spilled = [e.id for e in events if e.json == e.json_meta_only and carries_image(full[e.id])]
    assert spilled[0] == 1
    rows = stored_json(storage.stores["sense"], spilled)
    assert {i: orjson.loads(rows[i]) for i in spilled} == {i: full[i] for i in spilled}
    assert rows[1] == orjson.dumps(full[1])
