"""Server-Sent Events (``/feed/stream``, ``/agent/stream``) and the digest long-poll, on the
real server with the fake LLM."""

from __future__ import annotations

import concurrent.futures
import contextlib
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import httpx
import orjson
import pytest

from actors.core.records import FeedPost
from actors.ingest.feed_buffer import FeedBuffer
from actors.kernel.base import ChildHandle, RelayActor
from actors.kernel.published import Published
from actors.tree import Relay
from tests.support.actor_calls import tick
from tests.support.observe import LogSink, wait_until
from tests.support.relay import client_for, relay_settings
from transport.agent.fake_llm import FakeLLM
from transport.streams import limits as stream_limits

Block = dict[str, str]


pytestmark = pytest.mark.usefixtures("quick_stream_checks")


class SSE:
    """The blocks of one event stream, read as they come (each read times out after 5 s)."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._lines = response.iter_lines()

    def block(self) -> Block:
        """The next block: its fields (``id``, ``event``, ``data``, ``retry``) and comment."""
        block: Block = {}
        for line in self._lines:
            if not line:
                if block:
                    return block
                continue
            if line.startswith(":"):
                block["comment"] = line[1:].strip()
                continue
            name, _, value = line.partition(":")
            block[name] = value.removeprefix(" ")
        raise EOFError

    def event(self) -> Block:
        """The next block that is not a comment."""
        while "comment" in (block := self.block()):
            pass
        return block

    def events(self, count: int) -> list[Block]:
        return [self.event() for _ in range(count)]

    def ended(self) -> bool:
        """Whether the stream ends (cleanly) before another event."""
        try:
            self.event()
        except EOFError:
            return True
        return False


@contextlib.contextmanager
def sse(client: httpx.Client, path: str, headers: dict[str, str] | None = None) -> Iterator[SSE]:
    """An open stream, its ``retry:`` block already read."""
    with client.stream("GET", path, headers=headers) as response:
        assert response.status_code == 200, response.read()
        reader = SSE(response)
        assert reader.block() == {"retry": "3000"}
        yield reader


def post_feed(client: httpx.Client, *texts: str) -> list[int]:
    return [client.post("/feed", json={"text": text}).json()["id"] for text in texts]


def ids(blocks: list[Block]) -> list[int]:
    return [int(b["id"]) for b in blocks]


def append_directly(relay: Relay, count: int) -> None:
    """Store ``count`` feed items with a few calls to the buffer (faster than ``count`` posts).

    Calls of at most 500 items, each followed by a ping that waits for its commit and its
    publish (a transaction of more than 512 writes would commit in the middle of a call).
    """
    feed: ChildHandle[FeedBuffer] = relay.handles["feed"]
    for start in range(0, count, 500):
        batch = tuple(FeedPost(f"bulk {n}") for n in range(start, min(count, start + 500)))
        feed.ask(FeedBuffer.append_many, batch).result(timeout=5)
        feed.ask(RelayActor.ping).result(timeout=5)
    # behind the prune the last batch may have asked for
    feed.ask(RelayActor.ping).result(timeout=5)


def sense_event(ocr: str) -> dict[str, Any]:
    return {"type": "text", "ts": 1, "ocr": ocr, "meta": {"app": "idea"}}


STREAM_NAMES = ("feed", "agent", "overlay", "health")


def health_streams(client: httpx.Client) -> dict[str, int]:
    streams_: dict[str, int] = client.get("/health").json()["streams"]
    return streams_


# -- /feed/stream ----------------------------------------------------------------------------


def test_feed_stream_sends_each_new_item_as_an_event(client: httpx.Client) -> None:
    post_feed(client, "before the stream")
    with sse(client, "/feed/stream") as stream:
        headers = stream.response.headers
        assert headers["content-type"].startswith("text/event-stream")
        assert headers["cache-control"] == "no-cache"
        assert headers["x-accel-buffering"] == "no"
        assert "access-control-allow-origin" not in headers  # no Origin: not a browser's CORS

        post_feed(client, "hello", "world")
        first, second = stream.events(2)  # live only: not the item from before

    messages = client.get("/feed").json()["messages"]
    assert first == {"id": "2", "event": "feed", "data": orjson.dumps(messages[1]).decode()}
    assert (second["id"], second["event"]) == ("3", "feed")
    assert orjson.loads(second["data"]) == messages[2]

    head = client.head("/feed/stream")
    assert head.status_code == 200
    assert head.headers["content-type"].startswith("text/event-stream")


def test_a_burst_larger_than_the_ring_reaches_a_live_stream_whole(
    relay: Relay, client: httpx.Client
) -> None:
    post_feed(client, "first")
    with sse(client, "/feed/stream") as stream:
        append_directly(relay, 300)  # one commit: 202..301 are in the ring it publishes
        burst = stream.events(300)
        post_feed(client, "after the burst")
        after = stream.event()
    assert ids(burst) == list(range(2, 302))
    assert int(after["id"]) == 302


def test_reconnecting_with_last_event_id_replays_what_was_missed_then_goes_live(
    client: httpx.Client,
) -> None:
    with sse(client, "/feed/stream") as stream:
        post_feed(client, "a", "b")
        seen = stream.events(2)
    assert ids(seen) == [1, 2]
    post_feed(client, "c", "d")  # while disconnected

    with sse(client, "/feed/stream?after=999", {"Last-Event-ID": seen[-1]["id"]}) as stream:
        replayed = stream.events(2)
        post_feed(client, "e")
        live = stream.event()
    assert ids(replayed) == [3, 4]  # the header wins over ?after=
    assert [orjson.loads(b["data"])["text"] for b in replayed] == ["c", "d"]
    assert int(live["id"]) == 5


def test_after_replays_items_beyond_the_ring_from_the_store(
    relay: Relay, client: httpx.Client
) -> None:
    append_directly(relay, 150)  # the ring holds 51..150; 11..50 are only in the table
    with sse(client, "/feed/stream?after=10") as stream:
        replayed = stream.events(140)
        post_feed(client, "live")
        live = stream.event()
    assert ids(replayed) == list(range(11, 151))
    assert orjson.loads(replayed[0]["data"])["text"] == "bulk 10"
    assert int(live["id"]) == 151


def test_a_gap_event_announces_items_that_are_gone(relay: Relay, client: httpx.Client) -> None:
    append_directly(relay, 1200)  # rows below 1101 are pruned
    with sse(client, "/feed/stream?after=5") as stream:
        gap = stream.event()
        replayed = stream.events(100)
    assert gap == {"event": "gap", "data": '{"after":5,"oldest":1101}'}
    assert ids(replayed) == list(range(1101, 1201))


def test_replay_is_bounded_to_the_newest_events(relay: Relay, client: httpx.Client) -> None:
    append_directly(relay, 1050)  # nothing pruned yet, but more than REPLAY_MAX missed
    with sse(client, "/feed/stream?after=0") as stream:
        gap = stream.event()
        replayed = stream.events(stream_limits.REPLAY_MAX)
    assert orjson.loads(gap["data"]) == {"after": 0, "oldest": 51}
    assert ids(replayed) == list(range(51, 1051))


def test_a_resume_point_above_the_newest_id_starts_live(client: httpx.Client) -> None:
    post_feed(client, "a")
    with sse(client, "/feed/stream", {"Last-Event-ID": "500"}) as stream:
        post_feed(client, "b")
        assert int(stream.event()["id"]) == 2


@pytest.mark.parametrize(
    ("path", "headers", "fragment"),
    [
        ("/feed/stream?after=abc", {}, "after must be a whole number"),
        ("/feed/stream", {"Last-Event-ID": "x1"}, "Last-Event-ID must be a whole number"),
        ("/agent/stream?after=1.5", {}, "after must be a whole number"),
    ],
)
def test_a_bad_resume_point_is_a_400(
    client: httpx.Client, path: str, headers: dict[str, str], fragment: str
) -> None:
    answer = client.get(path, headers=headers)
    assert answer.status_code == 400
    assert answer.json()["ok"] is False
    assert fragment in answer.json()["error"]


def test_keepalive_comments_fill_the_silence(
    make_relay: Callable[..., Relay], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream_limits, "KEEPALIVE_S", 0.1)
    relay = make_relay()
    with (
        client_for(relay) as client,
        sse(client, "/feed/stream") as stream,
    ):
        assert stream.block() == {"comment": "keepalive"}
        assert stream.block() == {"comment": "keepalive"}
        post_feed(client, "news")
        assert stream.block()["id"] == "1"


# -- /agent/stream ---------------------------------------------------------------------------


def test_agent_stream_sends_the_entry_a_tick_records(
    relay: Relay, client: httpx.Client, logs: LogSink
) -> None:
    with sse(client, "/agent/stream") as stream:
        client.post("/sense", json=sense_event("TODO: fix idle detection"))
        assert tick(relay, logs) == "ok"
        event = stream.event()
    last = client.get("/agent/last").json()["result"]
    assert (event["id"], event["event"]) == ("1", "agent")
    assert orjson.loads(event["data"]) == last


def test_agent_stream_replays_entries_after_the_resume_point(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink
) -> None:
    for n in range(3):
        fake_llm.hud = f"hud {n}"
        client.post("/sense", json=sense_event(f"screen {n}"))
        assert tick(relay, logs) == "ok"
    with sse(client, "/agent/stream", {"Last-Event-ID": "1"}) as stream:
        replayed = stream.events(2)
    assert ids(replayed) == [2, 3]
    assert [orjson.loads(b["data"])["hud"] for b in replayed] == ["hud 1", "hud 2"]
    with sse(client, "/agent/stream?after=0") as stream:
        assert ids(stream.events(3)) == [1, 2, 3]


# -- limits ----------------------------------------------------------------------------------


def test_streams_beyond_the_cap_get_a_503_and_a_leaving_client_frees_its_slot(
    make_relay: Callable[..., Relay],
) -> None:
    relay = make_relay(replace(relay_settings(), max_streams=2))
    with (
        client_for(relay) as client,
        sse(client, "/feed/stream"),
        sse(client, "/agent/stream") as agent,
    ):
        refused = client.get("/feed/stream")
        assert refused.status_code == 503
        assert refused.json()["ok"] is False
        assert "too many streams" in refused.json()["error"]
        assert refused.headers["Retry-After"] == "5"
        assert "Access-Control-Allow-Origin" not in refused.headers
        assert health_streams(client) == {
            "feed": 1,
            "agent": 1,
            "overlay": 0,
            "health": 0,
            "longPolls": 0,
            "dropped": 0,
        }
        agent.response.close()  # one client leaves

        def admitted() -> bool:
            with client.stream("GET", "/agent/stream") as again:
                return again.status_code == 200

        wait_until(admitted, what="the slot to be freed")


@pytest.mark.parametrize("reason", ["backlog", "write_timeout"])
def test_a_slow_client_is_dropped_and_ingestion_stays_fast(
    make_relay: Callable[..., Relay],
    monkeypatch: pytest.MonkeyPatch,
    logs: LogSink,
    reason: str,
) -> None:
    if reason == "backlog":  # the queue bound trips long before a write could time out
        monkeypatch.setattr(stream_limits, "MAX_BACKLOG_BYTES", 256 * 1024)
        monkeypatch.setattr(stream_limits, "WRITE_TIMEOUT_S", 60.0)
    else:  # the write times out long before the queue could reach its bound
        monkeypatch.setattr(stream_limits, "MAX_BACKLOG", 1_000_000)
        monkeypatch.setattr(stream_limits, "MAX_BACKLOG_BYTES", 1024**3)
        monkeypatch.setattr(stream_limits, "WRITE_TIMEOUT_S", 0.3)
    relay = make_relay()
    host, port = relay.address()
    with (
        client_for(relay) as client,
        socket.socket() as reader,
    ):
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        reader.connect((host, port))
        reader.sendall(b"GET /feed/stream HTTP/1.1\r\nHost: localhost\r\n\r\n")  # and never reads
        wait_until(lambda: health_streams(client)["feed"] == 1, what="the stream to open")

        text = "x" * 64 * 1024
        slowest = 0.0
        for _ in range(1000):
            started = time.monotonic()
            assert client.post("/feed", json={"text": text}).status_code == 200
            slowest = max(slowest, time.monotonic() - started)
            if logs.named("stream.dropped_slow"):
                break
        (dropped,) = logs.named("stream.dropped_slow")
        assert dropped["reason"] == reason
        assert dropped["stream"] == "feed"
        assert slowest < 1.0  # no post waited for the stuck client
        wait_until(
            lambda: (
                health_streams(client)
                == {"feed": 0, "agent": 0, "overlay": 0, "health": 0, "longPolls": 0, "dropped": 1}
            ),
            what="the slot to be freed",
        )
        assert client.post("/feed", json={"text": "still fine"}).status_code == 200


# -- GET /agent/digest long-poll -------------------------------------------------------------


def long_poll(relay: Relay, query: str) -> httpx.Response:
    with client_for(relay, timeout=10) as client:
        return client.get(f"/agent/digest?{query}")


def test_a_long_poll_answers_as_soon_as_a_digest_is_recorded(
    relay: Relay, client: httpx.Client, logs: LogSink
) -> None:
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(long_poll, relay, "after=0&wait=30")
        wait_until(lambda: health_streams(client)["longPolls"] == 1, what="the poll to wait")
        assert not waiting.done()
        client.post("/sense", json=sense_event("first"))
        assert tick(relay, logs) == "ok"
        answer = waiting.result(timeout=5)  # long before the 30 s wait
    assert answer.status_code == 200
    digest = answer.json()["digest"]
    assert digest == client.get("/agent/digest").json()["digest"]
    assert digest["id"] == 1

    # A digest above `after` is already there: the answer is immediate.
    assert long_poll(relay, "after=0&wait=30").json()["digest"]["id"] == 1


def test_a_long_poll_answers_the_current_digest_once_wait_has_passed(
    relay: Relay, client: httpx.Client, logs: LogSink
) -> None:
    assert long_poll(relay, "wait=0.2").json() == {"ok": True, "digest": None}
    client.post("/sense", json=sense_event("first"))
    assert tick(relay, logs) == "ok"
    started = time.monotonic()
    answer = long_poll(relay, "after=1&wait=0.3").json()
    assert time.monotonic() - started >= 0.3
    assert answer["ok"] is True
    assert answer["digest"]["id"] == 1


def test_long_polls_beyond_the_stream_slots_do_not_wait_and_ingestion_goes_on(
    make_relay: Callable[..., Relay],
) -> None:
    """Long-polls hold the slots streams hold: one more is answered at once, and the
    connections they would have held stay free for posts."""
    relay = make_relay(replace(relay_settings(), max_streams=2, max_connections=4))
    with (
        concurrent.futures.ThreadPoolExecutor(2) as pool,
        client_for(relay) as client,
    ):
        waiting = [
            pool.submit(long_poll, relay, "after=0&wait=30"),
            pool.submit(polled, relay, "/escalation/pending?wait=30"),
        ]
        wait_until(
            lambda: health_streams(client).get("longPolls") == 2, what="two long-polls waiting"
        )
        for path in ("/agent/digest?after=0&wait=30", "/escalation/pending?wait=30"):
            with client_for(relay, timeout=2) as extra:  # at the connection cap
                refused = extra.get(path)
            assert refused.status_code == 503, refused.text
            assert "long-polls" in refused.json()["error"]
            assert refused.headers["Retry-After"] == "5"
        with client_for(relay) as poster:
            assert poster.post("/feed", json={"text": "still heard"}).status_code == 200
        assert [m["text"] for m in client.get("/feed").json()["messages"]] == ["still heard"]
        assert not any(poll.done() for poll in waiting)
        assert relay.stop(timeout_s=10)  # the waiting long-polls answer at once
        assert [poll.result(timeout=5).status_code for poll in waiting] == [200, 200]


def polled(relay: Relay, path: str) -> httpx.Response:
    with client_for(relay, timeout=10) as client:
        return client.get(path)


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("wait=0", "wait must be"),
        ("wait=-1", "wait must be"),
        ("wait=61", "wait must be"),
        ("wait=abc", "wait must be"),
        ("wait=nan", "wait must be"),
        ("wait=inf", "wait must be"),
        ("wait=5&after=x", "after must be a whole number"),
    ],
)
def test_bad_long_poll_parameters_are_a_400(
    client: httpx.Client, query: str, fragment: str
) -> None:
    answer = client.get(f"/agent/digest?{query}")
    assert answer.status_code == 400
    assert fragment in answer.json()["error"]


def test_the_digest_has_hud_context_and_model_beside_its_own_fields_wherever_it_is_served(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink
) -> None:
    """Sinain's current clients read ``hud``, ``context`` and ``model`` from the digest; the
    long-poll, the stream, ``/agent/last`` and ``/agent/history`` give the same values."""
    fake_llm.hud = "Reading ticker.py"
    with sse(client, "/agent/stream") as stream:
        client.post("/sense", json={**sense_event("def tick():"), "meta": {"app": "code"}})
        client.post("/sense", json={**sense_event("search"), "meta": {"app": "google chrome"}})
        client.post("/feed", json={"text": "[PERIODIC]\n[1s ago, openrouter] which test fails"})
        assert tick(relay, logs) == "ok"
        streamed = orjson.loads(stream.event()["data"])
    digest = client.get("/agent/digest").json()["digest"]
    polled = long_poll(relay, "after=0&wait=5").json()["digest"]
    last = client.get("/agent/last").json()["result"]
    (history,) = client.get("/agent/history?limit=1").json()["results"]

    assert polled == digest
    assert set(digest) == {
        "id", "ts", "digest", "currentApp", "appHistory", "latencyMs", "hud", "context", "model"
    }  # fmt: skip
    assert digest["hud"] == "Reading ticker.py"
    assert digest["model"] == "google/gemini-2.5-flash-lite"
    assert digest["context"] == {
        "currentApp": "Chrome",
        "appHistory": ["VS Code", "Chrome"],
        "audioCount": 1,
        "screenCount": 2,
    }
    assert digest["currentApp"] == "Chrome"
    assert [a["app"] for a in digest["appHistory"]] == ["VS Code", "Chrome"]
    shared = ("id", "hud", "context", "model", "digest")
    for entry in (streamed, last, history):
        assert {k: entry[k] for k in shared} == {k: digest[k] for k in shared}


# -- the transport's life --------------------------------------------------------------------


def test_streams_and_long_polls_end_promptly_when_the_relay_stops(
    relay: Relay, client: httpx.Client
) -> None:
    with (
        concurrent.futures.ThreadPoolExecutor(1) as pool,
        sse(client, "/feed/stream") as feed,
        sse(client, "/agent/stream") as agent,
    ):
        waiting = pool.submit(long_poll, relay, "wait=30")
        wait_until(lambda: health_streams(client)["longPolls"] == 1, what="the poll to wait")
        assert not waiting.done()
        started = time.monotonic()
        assert relay.stop(timeout_s=10)
        assert time.monotonic() - started < 2.5  # not the transport's 3 s shutdown timeout
        assert feed.ended()
        assert agent.ended()
        assert waiting.result(timeout=5).json() == {"ok": True, "digest": None}


def listeners(cell: Published[Any]) -> int:
    return len(cell._listeners)


def test_a_restarted_transport_listens_anew_without_leaking_listeners(relay: Relay) -> None:
    http = relay.handles["http"].ref
    assert http is not None
    transport = http._actor_weakref()
    assert transport is not None
    peers = transport._peers
    before = (listeners(peers.feed_view), listeners(peers.agent_view))
    relay.handles["http"].tell(RelayActor.inject_fault, "crash")
    wait_until(lambda: relay.handles["http"].restarts == 1 and relay.handles["http"].alive)
    # The supervisor counts the restart when the new incarnation is spawned; its start (which
    # attaches its hubs) has run once it answers a message.
    relay.handles["http"].ask(RelayActor.ping).result(timeout=5)
    assert (listeners(peers.feed_view), listeners(peers.agent_view)) == before
    with (
        client_for(relay) as again,
        sse(again, "/feed/stream") as stream,
    ):
        post_feed(again, "after the restart")
        assert stream.event()["id"] == "1"
