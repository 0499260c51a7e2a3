"""FeedBuffer and SenseBuffer as actors: ids, rings, activity counters, server time."""

from __future__ import annotations

import sqlite3
from typing import Any

import pykka

from actors.core.bodies import sense_input
from actors.core.records import FeedPost
from actors.ingest.feed_buffer import FeedBuffer
from actors.ingest.sense_buffer import SenseBuffer
from actors.kernel.clock import FakeClock
from actors.kernel.storage import StorageInfo


def start(cls: Any, clock: FakeClock, storage: StorageInfo) -> Any:
    part = "feed" if cls is FeedBuffer else "sense"
    return cls.start(clock=clock, store=storage.stores[part]).proxy()


def test_feed_ids_grow_and_the_ring_keeps_100(clock: FakeClock, storage: StorageInfo) -> None:
    feed = start(FeedBuffer, clock, storage)
    for n in range(130):
        feed.append(f"m{n}").get(timeout=5)
    items = feed.items_after(0).get(timeout=5)
    assert [i.id for i in items] == list(range(31, 131))
    assert [i.id for i in feed.items_after(128).get(timeout=5)] == [129, 130]
    assert feed.count().get(timeout=5) == 100


def test_feed_items_carry_server_time(clock: FakeClock, storage: StorageInfo) -> None:
    feed = start(FeedBuffer, clock, storage)
    first = feed.append("a").get(timeout=5)
    clock.advance(2.5)
    second = feed.append("b").get(timeout=5)
    assert second.ts - first.ts == 2500


def test_agent_push_is_stored_but_not_counted_as_activity(
    clock: FakeClock, storage: StorageInfo
) -> None:
    feed = start(FeedBuffer, clock, storage)
    feed.append("client").get(timeout=5)
    before = feed.snapshot().get(timeout=5).activity
    pushed = feed.push_agent("Editing in IDEA").get(timeout=5)
    snap = feed.snapshot().get(timeout=5)
    assert snap.activity == before == 1
    assert pushed.text == "[🧠] Editing in IDEA"
    assert pushed.to_json() == {
        "id": 2,
        "text": "[🧠] Editing in IDEA",
        "priority": "normal",
        "ts": clock.now_ms(),
        "source": "agent",
        "channel": "stream",
    }


def test_sense_ring_ids_and_received_at(clock: FakeClock, storage: StorageInfo) -> None:
    sense = start(SenseBuffer, clock, storage)
    for n in range(33):
        sense.append(sense_input({"type": "text", "ts": n, "ocr": str(n)})).get(timeout=5)
        clock.advance(1)
    events = sense.events_after(0).get(timeout=5)
    assert [e.id for e in events] == list(range(4, 34))
    assert events[-1].received_at == clock.now_ms() - 1000
    snap = sense.snapshot().get(timeout=5)
    assert snap.activity == 33


def test_a_crashed_buffer_answers_queued_asks_with_actor_dead(
    clock: FakeClock, storage: StorageInfo
) -> None:
    feed = start(FeedBuffer, clock, storage)
    feed.inject_fault.defer("crash")
    try:
        feed.count().get(timeout=5)
    except pykka.ActorDeadError:
        pass
    else:  # the crash may not have been processed yet; it must be by now
        assert not feed.actor_ref.is_alive() or feed.count().get(timeout=5) == 0


def test_a_burst_of_any_size_is_stored_whole_and_in_order(
    clock: FakeClock, storage: StorageInfo
) -> None:
    feed = start(FeedBuffer, clock, storage)
    sent = 0
    for size in (1, 3, 20, 127, 129, 300):  # inserts of one, several and many statement sizes
        batch = tuple(FeedPost(f"m{sent + n}") for n in range(size))
        items = feed.append_many(batch).get(timeout=5)
        assert [i.id for i in items] == list(range(sent + 1, sent + size + 1))
        sent += size
    ring = [i.text for i in feed.items_after(0).get(timeout=5)]
    feed.actor_ref.stop(timeout=5)  # commits what is pending (a proxy's answer does not wait)
    db = sqlite3.connect(storage.stores["feed"].path)
    try:
        stored = db.execute("SELECT id, text FROM feed ORDER BY id").fetchall()
    finally:
        db.close()
    assert stored == [(n + 1, f"m{n}") for n in range(sent)]  # nothing pruned yet
    assert ring == [f"m{n}" for n in range(sent - 100, sent)]
