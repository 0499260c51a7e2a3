"""``POST /feed``'s ``source`` and ``channel``, and plain transcripts reaching the agent."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from actors.tree import Relay
from tests.support.actor_calls import tick
from tests.support.observe import LogSink, wait_until
from tests.support.relay import assert_error, client_for, relay_settings
from transport.agent.fake_llm import FakeLLM


def messages(client: httpx.Client) -> list[dict[str, object]]:
    return list(client.get("/feed").json()["messages"])


def test_an_item_keeps_its_channel_and_source(client: httpx.Client) -> None:
    client.post("/feed", json={"text": "a transcript chunk"})
    client.post("/feed", json={"text": "run the tests first", "channel": "agent"})
    client.post("/feed", json={"text": "heard this", "source": "audio", "channel": "stream"})

    got = [(m["text"], m["channel"], m.get("source")) for m in messages(client)]
    assert got == [
        ("a transcript chunk", "stream", None),
        ("run the tests first", "agent", None),
        ("heard this", "stream", "audio"),
    ]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"text": "t", "channel": "overlay"}, "channel must be"),
        ({"text": "t", "channel": 1}, "channel must be"),
        ({"text": "t", "source": ""}, "source must be"),
        ({"text": "t", "source": ["audio"]}, "source must be"),
    ],
)
def test_a_bad_channel_or_source_is_a_400_and_stores_nothing(
    client: httpx.Client, body: dict[str, object], fragment: str
) -> None:
    client.post("/feed", json={"text": "kept"})
    assert_error(client.post("/feed", json=body), 400, fragment)
    assert [m["text"] for m in messages(client)] == ["kept"]


def test_the_agents_hud_line_is_on_the_stream_channel(
    relay: Relay, client: httpx.Client, logs: LogSink, fake_llm: FakeLLM
) -> None:
    client.post("/feed", json={"text": "[📝] the deploy failed again", "source": "audio"})
    assert tick(relay, logs) == "ok"
    # the tick's log line can come before the digest store's push is committed
    hud = wait_until(lambda: [m for m in messages(client) if m.get("source") == "agent"])[-1]
    assert (hud["text"], hud["channel"]) == (f"[🧠] {fake_llm.hud}", "stream")


def test_plain_transcripts_reach_the_agents_window(client: httpx.Client) -> None:
    client.post("/feed", json={"text": "[PERIODIC]\n[1s ago, openrouter] the bridge's form"})
    client.post("/feed", json={"text": "[📝] sinain-core's form"})
    client.post("/feed", json={"text": "a plain post", "source": "audio"})
    client.post("/feed", json={"text": "advice for the user", "channel": "agent"})
    client.post("/feed", json={"text": "a note"})

    context = client.get("/agent/context").json()["context"]
    assert [a["text"] for a in context["audio"]] == [
        "the bridge's form",
        "sinain-core's form",
        "a plain post",
    ]
    assert context["audioCount"] == 3


def test_a_plain_transcript_is_what_a_tick_hears(
    relay: Relay, client: httpx.Client, logs: LogSink, fake_llm: FakeLLM
) -> None:
    client.post("/feed", json={"text": "[📝] we should roll back the migration"})
    assert tick(relay, logs) == "ok"
    assert "we should roll back the migration" in str(fake_llm.requests[-1].body)


def test_channel_and_source_survive_a_restart_and_older_rows_read_as_stream(
    make_relay: Callable[..., Relay], tmp_path: Path
) -> None:
    settings = replace(relay_settings(), data_dir=str(tmp_path / "data"))
    relay = make_relay(settings)
    with client_for(relay) as client:
        client.post("/feed", json={"text": "advice", "channel": "agent", "source": "sinain"})
        before = messages(client)
    assert relay.stop()

    again = make_relay(settings)
    with client_for(again) as client:
        assert messages(client) == before
        assert before[0]["channel"] == "agent"
        assert before[0]["source"] == "sinain"


def test_a_feed_table_from_before_channels_opens_and_reads_as_stream(
    make_relay: Callable[..., Relay], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = sqlite3.connect(data / "feed.db")
    db.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE feed (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL,"
        " text TEXT NOT NULL, priority TEXT NOT NULL, source TEXT);"
        "INSERT INTO feed VALUES (7, 1000, 'from an older relay', 'normal', NULL);"
        "INSERT INTO feed VALUES (8, 1001, '[🧠] an old hud', 'normal', 'agent');"
        "PRAGMA user_version = 1;"
    )
    db.close()

    relay = make_relay(replace(relay_settings(), data_dir=str(data)))
    with client_for(relay) as client:
        got = [(m["id"], m["channel"], m.get("source")) for m in messages(client)]
        assert got == [(7, "stream", None), (8, "stream", "agent")]
        assert client.post("/feed", json={"text": "next"}).json()["id"] == 9
