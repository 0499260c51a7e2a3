"""State that outlives actors and processes: restore on start, pruning, retention."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pytest

from actors.agent.core.completion import Analysis
from actors.agent.core.events import TickFailed
from actors.agent.core.ticks import TickResult
from actors.agent.digest_store import AGENT_RING, DigestStore
from actors.core.bodies import sense_input
from actors.core.exclusion import PrivacyState
from actors.core.window import build_context_window
from actors.ingest.feed_buffer import FEED_RING, PRUNE_SLACK, FeedBuffer
from actors.ingest.sense_buffer import PRUNE_SLACK_BYTES, SENSE_RING, SenseBuffer
from actors.kernel.base import ChildHandle, RelayActor
from actors.kernel.clock import FakeClock
from actors.kernel.published import Published
from actors.kernel.storage import StorageInfo
from actors.tree import Relay
from tests.support.actor_calls import asked, last_entry, restarted, tick
from tests.support.observe import LogSink, wait_until
from tests.support.posts import TRANSCRIPT, sense
from tests.support.redaction_samples import AWS, assert_nowhere
from tests.support.relay import relay_settings
from transport.agent.fake_llm import FakeLLM


def everything(relay: Relay) -> dict[str, Any]:
    """What every read endpoint would answer."""
    return {
        "feed": [i.to_json() for i in asked(relay.handles["feed"], FeedBuffer.items_after, 0)],
        "sense": [e.to_json() for e in asked(relay.handles["sense"], SenseBuffer.events_after, 0)],
        "digest": asked(relay.handles["digest"], DigestStore.latest_digest),
        "last": asked(relay.handles["digest"], DigestStore.last),
        "history": asked(relay.handles["digest"], DigestStore.history, 50),
        "stats": asked(relay.handles["digest"], DigestStore.stats),
    }


def test_a_restart_restores_every_read_and_ids_continue(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, tmp_path: Path, logs: LogSink
) -> None:
    settings = replace(relay_settings(fake_llm), data_dir=str(tmp_path / "data"))
    relay = make_relay(settings)
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="first screen"))
    asked(relay.handles["feed"], FeedBuffer.append, TRANSCRIPT, "normal")
    assert tick(relay, logs) == "ok"
    assert tick(relay, logs) == "idle"
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="second screen"))
    before = everything(relay)
    epoch = relay.storage.epoch
    assert relay.stop()

    again = make_relay(settings)

    assert again.storage.epoch == epoch
    assert everything(again) == before
    assert (
        asked(again.handles["feed"], FeedBuffer.append, "next", "normal").id
        == before["feed"][-1]["id"] + 1
    )
    assert (
        asked(again.handles["sense"], SenseBuffer.append, sense()).id
        == before["sense"][-1]["id"] + 1
    )
    assert before["stats"]["totalCalls"] == 1 and before["stats"]["idleSkips"] == 1


def test_a_last_error_an_older_relay_stored_with_the_key_in_it_is_shown_without_it(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, tmp_path: Path
) -> None:
    key = "stored-placeholder-key-31"
    settings = replace(relay_settings(fake_llm, api_key=key), data_dir=str(tmp_path / "data"))
    relay = make_relay(settings)
    older = f"UnicodeEncodeError('ascii', 'Bearer {key}\u201d', 32, 33, 'ordinal not in range')"
    asked(relay.handles["digest"], DigestStore.on_event, TickFailed(older))
    relay.stop()

    again = make_relay(settings)
    shown = asked(again.handles["digest"], DigestStore.stats)["lastError"]
    assert shown.startswith("UnicodeEncodeError('ascii', 'Bearer [redacted:")
    assert_nowhere(key, shown)


def test_the_last_pushed_hud_survives_so_a_restart_does_not_repeat_it(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, tmp_path: Path, logs: LogSink
) -> None:
    settings = replace(relay_settings(fake_llm), data_dir=str(tmp_path / "data"))
    relay = make_relay(settings)
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="a"))
    assert tick(relay, logs) == "ok"
    assert relay.stop()
    again = make_relay(settings)
    asked(again.handles["sense"], SenseBuffer.append, sense(ocr="b"))
    assert tick(again, logs) == "ok"
    assert last_entry(again)["pushed"] is False


def test_a_crashed_buffer_comes_back_with_everything_it_acknowledged(
    make_relay: Callable[..., Relay], tmp_path: Path
) -> None:
    relay = make_relay(replace(relay_settings(), data_dir=str(tmp_path / "data")))
    for n in range(5):
        asked(relay.handles["feed"], FeedBuffer.append, f"m{n}", "normal")
        asked(relay.handles["sense"], SenseBuffer.append, sense(ocr=f"o{n}"))
    before = everything(relay)
    for name in ("feed", "sense"):
        relay.handles[name].tell(RelayActor.inject_fault, "crash")
        handle = relay.handles[name]
        wait_until(partial(restarted, handle, 1), what=f"{name} restart")
    after = everything(relay)
    assert (after["feed"], after["sense"]) == (before["feed"], before["sense"])
    assert asked(relay.handles["feed"], FeedBuffer.append, "m5", "normal").id == 6


def test_memory_mode_also_survives_an_actor_crash(make_relay: Callable[..., Relay]) -> None:
    relay = make_relay()
    asked(relay.handles["feed"], FeedBuffer.append, "kept", "normal")
    relay.handles["feed"].tell(RelayActor.inject_fault, "crash")
    wait_until(lambda: relay.handles["feed"].restarts == 1, what="feed restart")
    assert [i.text for i in asked(relay.handles["feed"], FeedBuffer.items_after, 0)] == ["kept"]


def rows(path: str, table: str) -> int:
    db = sqlite3.connect(path)
    try:
        count: int = db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        return count
    finally:
        db.close()


def test_rows_beyond_the_rings_are_pruned_in_batches(
    make_relay: Callable[..., Relay], tmp_path: Path
) -> None:
    relay = make_relay(replace(relay_settings(), data_dir=str(tmp_path / "data")))
    for n in range(FEED_RING + PRUNE_SLACK + 50):
        relay.handles["feed"].tell(FeedBuffer.append, f"m{n}")
    for n in range(300):
        relay.handles["sense"].tell(SenseBuffer.append, sense_input({"type": "t", "ts": n}))
    assert asked(relay.handles["feed"], FeedBuffer.count) == FEED_RING
    feed_db = relay.storage.stores["feed"].path
    sense_db = relay.storage.stores["sense"].path
    # Pruning is a message of its own, after the appends: wait for it, bounded.
    wait_until(lambda: rows(feed_db, "feed") <= FEED_RING + PRUNE_SLACK, what="feed prune")
    wait_until(lambda: rows(sense_db, "sense") <= 30 + 100, what="sense prune")
    assert rows(feed_db, "feed") >= FEED_RING
    ids = [i.id for i in asked(relay.handles["feed"], FeedBuffer.items_after, 0)]
    assert ids == list(range(PRUNE_SLACK + 51, FEED_RING + PRUNE_SLACK + 51))


@pytest.mark.slow
def test_large_sense_events_are_pruned_by_bytes_too(
    make_relay: Callable[..., Relay], tmp_path: Path
) -> None:
    relay = make_relay(replace(relay_settings(), data_dir=str(tmp_path / "data")))
    ocr = "x" * (1024 * 1024)  # 1 MiB events: 100 rows of slack would be 100 MiB on disk
    for n in range(SENSE_RING + 20):
        relay.handles["sense"].tell(
            SenseBuffer.append, sense_input({"type": "t", "ts": n, "ocr": ocr})
        )
    assert asked(relay.handles["sense"], SenseBuffer.count) == SENSE_RING
    sense_db = relay.storage.stores["sense"].path
    most = SENSE_RING + PRUNE_SLACK_BYTES // len(ocr) + 1
    wait_until(lambda: rows(sense_db, "sense") <= most, what="sense prune by bytes")


def result(n: int) -> TickResult:
    window = build_context_window([], [], now_ms=0, max_age_ms=1)
    return TickResult(
        tick_id=n,
        analysis=Analysis(hud=f"hud {n}", digest=f"digest {n}", parsed_ok=True),
        window=window,
        model="m",
        latency_ms=1,
        tokens_in=1,
        tokens_out=1,
        push_to_feed=False,
    )


def test_entries_beyond_the_ring_are_kept_for_the_retention_then_pruned(
    clock: FakeClock, storage: StorageInfo
) -> None:
    store = DigestStore.start(
        clock=clock, store=storage.stores["agent"], feed=ChildHandle("feed"), retention_days=1
    ).proxy()
    start_ms = clock.now_ms()
    for n in range(80):
        store.record(result(n)).get(timeout=5)
        clock.advance(60)  # one an hour-minute apart: 80 minutes in all
    everything_page, cursor = store.history_range(None, None, None, 500).get(timeout=5)
    assert len(everything_page) == 80 and cursor is None
    first_hour, _ = store.history_range(start_ms, start_ms + 3_600_000, None, 500).get(timeout=5)
    assert [e.hud for e in first_hour] == [f"hud {n}" for n in range(59, -1, -1)]

    clock.advance(86_400 + 3_600)  # past the retention; the hourly prune runs on the way

    kept, _ = store.history_range(None, None, None, 500).get(timeout=5)
    assert [e.hud for e in kept] == [f"hud {n}" for n in range(79, 79 - AGENT_RING, -1)]
    assert len(store.history(50).get(timeout=5)) == AGENT_RING


def test_a_shorter_retention_set_at_runtime_prunes_at_once(
    clock: FakeClock, storage: StorageInfo
) -> None:
    privacy = Published(PrivacyState.of(retention_days=7))
    store = DigestStore.start(
        clock=clock, store=storage.stores["agent"], feed=ChildHandle("feed"), privacy=privacy
    ).proxy()
    for n in range(80):
        store.record(result(n)).get(timeout=5)
        clock.advance(60)
    assert len(store.history_range(None, None, None, 500).get(timeout=5)[0]) == 80
    privacy.publish(PrivacyState.of(retention_days=0.01))  # 14.4 minutes: no hourly prune due
    kept, _ = store.history_range(None, None, None, 500).get(timeout=5)
    assert [e.hud for e in kept] == [f"hud {n}" for n in range(79, 79 - AGENT_RING, -1)]


def test_history_range_pages_with_a_cursor(clock: FakeClock, storage: StorageInfo) -> None:
    store = DigestStore.start(
        clock=clock, store=storage.stores["agent"], feed=ChildHandle("feed")
    ).proxy()
    for n in range(7):
        store.record(result(n)).get(timeout=5)
    seen: list[str] = []
    before = None
    for _ in range(10):
        page, before = store.history_range(None, None, before, 3).get(timeout=5)
        seen += [e.hud for e in page]
        if before is None:
            break
    assert seen == [f"hud {n}" for n in range(6, -1, -1)]


def test_sense_rows_of_either_form_restore_to_the_same_event(
    clock: FakeClock, storage: StorageInfo
) -> None:
    client = {"type": "text", "ts": 5, "ocr": "older row", "meta": {"app": "code"}}
    db = sqlite3.connect(storage.stores["sense"].path)
    with db:  # a row as earlier versions wrote it (the client's object), then as served now
        db.execute("INSERT INTO sense VALUES (1, 100, ?)", (orjson.dumps(client),))
        db.execute(
            "INSERT INTO sense VALUES (2, 200, ?)",
            (orjson.dumps({"id": 2, **client, "receivedAt": 200}),),
        )
    db.close()
    sense_buffer = SenseBuffer.start(clock=clock, store=storage.stores["sense"]).proxy()
    restored = sense_buffer.events_after(0).get(timeout=5)
    assert [e.to_json() for e in restored] == [
        {"id": 1, **client, "receivedAt": 100},
        {"id": 2, **client, "receivedAt": 200},
    ]
    assert [orjson.loads(e.json) for e in restored] == [e.to_json() for e in restored]


def test_the_count_of_secrets_taken_out_of_the_models_words_survives_a_restart(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, tmp_path: Path, logs: LogSink
) -> None:
    settings = replace(relay_settings(fake_llm), data_dir=str(tmp_path / "data"))
    relay = make_relay(settings)
    fake_llm.hud = f"Terminal shows {AWS}"
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="$ env"))
    assert tick(relay, logs) == "ok"
    assert relay.stop()

    again = make_relay(settings)
    assert asked(again.handles["digest"], DigestStore.stats)["modelRedactions"] == {"aws-key": 1}
    assert last_entry(again)["hud"] == "Terminal shows [redacted:aws-key]"
