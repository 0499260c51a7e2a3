"""The overlay's WebSocket (``GET /`` and ``GET /ws``), on the real server with the fake LLM,
read by a client that parses each message exactly as Sinain's overlay does."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

from actors.kernel.clock import FakeClock
from actors.tree import Relay
from tests.support.actor_calls import tick
from tests.support.observe import LogSink, wait_until
from tests.support.relay import client_for, relay_settings, scrape, value
from tests.transport.overlay_client import (
    BINARY,
    Closed,
    Feed,
    OverlayClient,
    Ping,
    Raw,
    Status,
)
from transport.agent.fake_llm import FakeLLM
from transport.overlay import socket as overlay
from transport.overlay.messages import MAX_MESSAGE_BYTES
from transport.streams import limits as stream_limits

pytestmark = pytest.mark.usefixtures("quick_stream_checks")


@pytest.fixture(autouse=True)
def _no_socket_fails(logs: LogSink) -> Iterator[None]:
    """No test here may make a socket fail on the relay's side."""
    yield
    assert logs.named("overlay.failed") == []
    assert logs.named("http.unhandled") == []


TOKEN = "s3cret"
PAGE = "http://localhost:5173"


def connect(relay: Relay, path: str = "/", **kwargs: Any) -> OverlayClient:
    host, port = relay.address()
    return OverlayClient(host, port, path, **kwargs)


@contextlib.contextmanager
def overlay_of(relay: Relay, path: str = "/", **kwargs: Any) -> Iterator[OverlayClient]:
    """A connected overlay, its status already read."""
    with connect(relay, path, **kwargs) as ws:
        assert ws.refusal is None, ws.refusal
        assert isinstance(ws.read(), Status)
        yield ws


def overlays(client: httpx.Client) -> int:
    count: int = client.get("/health").json()["streams"]["overlay"]
    return count


def feed_items(client: httpx.Client) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = client.get("/feed").json()["messages"]
    return messages


# -- on connect ------------------------------------------------------------------------------


def test_on_connect_a_status_then_the_newest_20_items_oldest_first(
    client: httpx.Client, relay: Relay
) -> None:
    for n in range(1, 26):
        client.post("/feed", json={"text": f"item {n}"}).raise_for_status()
    with connect(relay) as ws:
        status = ws.read()
        replay = [ws.feed() for _ in range(20)]
        client.post("/feed", json={"text": "live"}).raise_for_status()
        live = ws.feed()
    assert isinstance(status, Status)
    assert status.message == {
        "type": "status",
        "audio": "muted",
        "screen": "off",
        "connection": "connected",
        "paused": False,
    }
    assert [item.text for item in replay] == [f"item {n}" for n in range(6, 26)]
    assert live.text == "live"
    for item in [*replay, live]:
        assert item.id is None  # never a number: the overlay reads `id as String?`
        assert set(item.message) == {"type", "text", "priority", "ts", "channel"}
        assert item.channel == "stream"
        assert item.priority == "normal"
    assert not [shown for shown in ws.shown if isinstance(shown, Raw)]


@pytest.mark.parametrize("path", ["/", "/ws"])
def test_live_posts_and_the_agents_hud_lines_reach_the_overlay(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink, path: str
) -> None:
    fake_llm.hud = "Editing idle.py in VS Code"
    with overlay_of(relay, path) as ws:
        client.post("/feed", json={"text": "hello", "priority": "high"}).raise_for_status()
        advice = {"text": "Try the debugger", "channel": "agent", "source": "coach"}
        client.post("/feed", json=advice).raise_for_status()
        client.post("/sense", json={"type": "text", "ts": 1, "ocr": "def idle():"})
        assert tick(relay, logs) == "ok"
        hello, coached, hud = ws.feed(), ws.feed(), ws.feed()
    assert (hello.text, hello.priority, hello.channel) == ("hello", "high", "stream")
    assert (coached.text, coached.channel) == ("Try the debugger", "agent")
    assert (hud.text, hud.channel) == ("[🧠] Editing idle.py in VS Code", "stream")
    assert [item["text"] for item in feed_items(client)][-1] == hud.text


# -- status ----------------------------------------------------------------------------------


def test_status_says_audio_and_screen_are_active_while_they_arrive_then_quiet(
    relay: Relay, client: httpx.Client, clock: FakeClock
) -> None:
    with overlay_of(relay) as ws:
        client.post("/feed", json={"text": "a note"}).raise_for_status()
        assert ws.feed().text == "a note"  # not a transcript: no status change
        client.post("/feed", json={"text": "so the idle check", "source": "audio"})
        heard = ws.next_of(Status)
        client.post("/sense", json={"type": "text", "ts": 1, "ocr": "x"}).raise_for_status()
        seen = ws.next_of(Status)
        clock.advance(overlay.QUIET_SPELL_S - 1)
        client.post("/sense", json={"type": "text", "ts": 2, "ocr": "y"}).raise_for_status()
        clock.advance(2)  # the transcript is a quiet spell old, the screen event is not
        muted = ws.next_of(Status)
        clock.advance(overlay.QUIET_SPELL_S)
        off = ws.next_of(Status)
    assert (heard.audio, heard.screen) == ("active", "off")
    assert (seen.audio, seen.screen) == ("active", "active")
    assert (muted.audio, muted.screen) == ("muted", "active")
    assert (off.audio, off.screen) == ("muted", "off")
    assert off.message["connection"] == "connected"


@pytest.mark.parametrize(
    "posted",
    [
        {"text": "[🔊] where is the config file?", "source": "audio"},
        {"text": "[🎙] where is the config file?", "source": "audio"},
        {"text": "[🔊] where is the config file?"},
        {"text": "[🎙] where is the config file?"},
    ],
)
def test_a_transcript_marked_with_its_source_turns_audio_active(
    relay: Relay, client: httpx.Client, posted: dict[str, str]
) -> None:
    with overlay_of(relay) as ws:
        client.post("/feed", json=posted).raise_for_status()
        status = ws.next_of(Status)
        shown = [m for m in ws.shown if isinstance(m, Feed)] or [ws.feed()]
        assert shown[-1].text == posted["text"]  # the overlay shows the line as it came
    assert (status.audio, status.screen) == ("active", "off")


def test_a_new_overlay_gets_the_status_as_it_is(relay: Relay, client: httpx.Client) -> None:
    client.post("/sense", json={"type": "text", "ts": 1, "ocr": "x"}).raise_for_status()
    with connect(relay) as ws:
        status = ws.read()
    assert isinstance(status, Status)
    assert (status.audio, status.screen) == ("muted", "active")


# -- what the overlay sends ------------------------------------------------------------------


def test_every_inbound_kind_is_handled_and_the_socket_stays_open(
    relay: Relay, client: httpx.Client, clock: FakeClock
) -> None:
    with overlay_of(relay) as ws, overlay_of(relay) as other:
        ws.send({"type": "pong", "ts": 1})
        ws.send({"type": "profiling", "rssMb": 180, "uptimeS": 30, "ts": 1769901230000})
        ws.send({"type": "command", "action": "toggle_audio"})
        notice = ws.feed()
        ws.send({"type": "message", "text": "why does the test fail?"})
        echoed = ws.feed()
        seen_by_other = other.feed()

        for action in ("toggle_screen", "switch_device"):
            ws.send({"type": "command", "action": action})
            assert "capture" in ws.feed().text

    assert notice.channel == "stream"
    assert "capture" in notice.text
    assert seen_by_other.text == "why does the test fail?"  # the notice went to ws only
    assert (echoed.text, echoed.sender) == ("why does the test fail?", "user")
    stored = feed_items(client)[-1]
    assert (stored["text"], stored["source"], stored["channel"]) == (
        "why does the test fail?",
        "overlay",
        "stream",
    )
    figures = client.get("/health").json()["profiling"]["overlay"]
    assert figures == {
        "rssMb": 180,
        "uptimeS": 30,
        "ts": 1769901230000,
        "receivedAt": clock.now_ms(),
        "extra": {},
    }
    samples = scrape(client)
    assert value(samples, "relay_client_rss_megabytes", client="overlay") == 180


MALFORMED: list[bytes | str] = [
    "{",
    "null",
    "[]",
    '"pong"',
    "{}",
    '{"type": 5}',
    '{"type": "nope", "text": "x"}',
    '{"type": "profiling", "rssMb": "180", "uptimeS": 1, "ts": 1}',
    '{"type": "profiling"}',
    '{"type": "message"}',
    '{"type": "message", "text": 5}',
    '{"type": "message", "text": "   "}',
    '{"type": "command"}',
    '{"type": "command", "action": ["toggle_audio"]}',
    '{"type": "command", "action": "set_agent", "lane": "chat"}',
    b'{"type": "message", "text": "\xff"}',
    '{"type": "message", "text": "' + "x" * (MAX_MESSAGE_BYTES) + '"}',
]


def test_malformed_binary_oversize_and_unknown_messages_are_ignored(
    relay: Relay, client: httpx.Client
) -> None:
    before = feed_items(client)
    with overlay_of(relay) as ws:
        for message in MALFORMED:
            ws.send_text(message)
        ws.send_frame(BINARY, b'{"type": "message", "text": "binary"}')
        ws.send({"type": "command", "action": "toggle_audio"})  # answered: still open
        assert "capture" in ws.feed().text
    assert feed_items(client) == before
    assert client.get("/health").json()["profiling"]["overlay"] is None
    assert client.get("/health").status_code == 200


def test_a_message_is_redacted_like_a_post(relay: Relay, client: httpx.Client) -> None:
    key = "sk-or-v1-0123456789abcdef0123456789abcdef"
    with overlay_of(relay) as ws:
        ws.send({"type": "message", "text": f"my key is {key}"})
        echoed = ws.feed()
    assert key not in echoed.text
    assert key not in feed_items(client)[-1]["text"]


# -- access ----------------------------------------------------------------------------------


def test_a_foreign_origin_and_a_missing_token_are_refused(
    make_relay: Callable[..., Relay],
) -> None:
    relay = make_relay(replace(relay_settings(), token=TOKEN, cors_origins=(PAGE,)))
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    for path in ("/", "/ws"):
        with connect(relay, path, headers={**bearer, "Origin": "https://evil.example"}) as ws:
            assert ws.refusal is not None
            assert ws.refusal.status == 403
            assert ws.refusal.body["ok"] is False
            assert "RELAY_CORS_ORIGINS" in ws.refusal.body["error"]
        with connect(relay, path) as ws:
            assert ws.refusal is not None
            assert ws.refusal.status == 401
            assert ws.refusal.body["ok"] is False
        with connect(relay, path, headers={"Authorization": "Bearer wrong"}) as ws:
            assert ws.refusal is not None
            assert ws.refusal.status == 401
        for accepted in (bearer, {**bearer, "Origin": PAGE}):
            with connect(relay, path, headers=accepted) as ws:
                assert ws.refusal is None
                assert isinstance(ws.read(), Status)
        with connect(relay, f"{path}?access_token={TOKEN}") as ws:
            assert ws.refusal is None
            assert isinstance(ws.read(), Status)


def test_without_a_token_a_native_client_is_allowed_and_a_web_page_is_not(
    relay: Relay,
) -> None:
    with connect(relay) as native:
        assert native.refusal is None
    with connect(relay, headers={"Origin": "https://evil.example"}) as page:
        assert page.refusal is not None
        assert page.refusal.status == 403


def test_a_plain_get_on_ws_is_a_426_and_on_root_is_the_console(client: httpx.Client) -> None:
    upgrade = client.get("/ws")
    assert upgrade.status_code == 426
    assert upgrade.json()["ok"] is False
    assert "WebSocket" in upgrade.json()["error"]
    assert upgrade.headers["Upgrade"] == "websocket"
    root = client.get("/")
    assert root.status_code == 200
    assert root.headers["content-type"] == "text/html; charset=utf-8"
    assert "<title>sinain-relay</title>" in root.text
    half = client.get("/ws", headers={"Upgrade": "websocket", "Connection": "Upgrade"})
    assert half.status_code == 400  # no Sec-WebSocket-Key: a bad handshake, not a 5xx
    assert half.json()["ok"] is False


# -- heartbeat, slow clients, slots, shutdown ------------------------------------------------


@pytest.fixture
def quick_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(overlay, "PING_INTERVAL_S", 0.1)
    monkeypatch.setattr(overlay, "SILENCE_LIMIT_S", 0.5)


@pytest.mark.slow
@pytest.mark.usefixtures("quick_heartbeat")
def test_a_silent_overlay_is_dropped_and_one_that_answers_either_ping_stays(
    make_relay: Callable[..., Relay], logs: LogSink
) -> None:
    relay = make_relay()
    with (
        client_for(relay) as client,
        overlay_of(relay, answer_ws_pings=False) as app_pongs,
        overlay_of(relay, answer_pings=False) as ws_pongs,
        overlay_of(relay, answer_pings=False, answer_ws_pings=False) as silent,
    ):
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            app_pongs.pump(0.05)
            ws_pongs.pump(0.05)
        assert overlays(client) == 2
        assert isinstance(silent.closed(), Closed)
        (dropped,) = logs.named("stream.dropped_slow")
        assert (dropped["stream"], dropped["reason"]) == ("overlay", "heartbeat")
        assert [s for s in app_pongs.shown if isinstance(s, Ping)]
        assert app_pongs.ws_pings > 0  # WebSocket pings come too
        client.post("/feed", json={"text": "still here"}).raise_for_status()
        assert app_pongs.feed().text == "still here"
        assert ws_pongs.feed().text == "still here"
        assert client.get("/health").json()["streams"]["dropped"] == 1


@pytest.mark.parametrize("reason", ["backlog", "write_timeout"])
def test_a_slow_overlay_is_dropped_and_ingestion_stays_fast(
    make_relay: Callable[..., Relay], monkeypatch: pytest.MonkeyPatch, logs: LogSink, reason: str
) -> None:
    if reason == "backlog":  # the queue bound trips long before a write could time out
        monkeypatch.setattr(stream_limits, "MAX_BACKLOG_BYTES", 256 * 1024)
        monkeypatch.setattr(stream_limits, "WRITE_TIMEOUT_S", 60.0)
    else:  # the write times out long before the queue could reach its bound
        monkeypatch.setattr(stream_limits, "MAX_BACKLOG", 1_000_000)
        monkeypatch.setattr(stream_limits, "MAX_BACKLOG_BYTES", 1024**3)
        monkeypatch.setattr(stream_limits, "WRITE_TIMEOUT_S", 0.3)
        monkeypatch.setattr(overlay, "PING_INTERVAL_S", 0.2)  # the heartbeat looks every 0.1 s
    relay = make_relay()
    with (
        client_for(relay) as client,
        connect(relay, receive_buffer=4096) as stuck,  # and never reads
    ):
        assert stuck.refusal is None
        wait_until(lambda: overlays(client) == 1, what="the socket to open")
        text = "x" * 64 * 1024
        slowest = 0.0
        for _ in range(1000):
            started = time.monotonic()
            assert client.post("/feed", json={"text": text}).status_code == 200
            slowest = max(slowest, time.monotonic() - started)
            if logs.named("stream.dropped_slow"):
                break
        (dropped,) = logs.named("stream.dropped_slow")
        assert (dropped["stream"], dropped["reason"]) == ("overlay", reason)
        assert slowest < 1.0  # no post waited for the stuck client
        wait_until(lambda: overlays(client) == 0, what="the slot to be freed")
        assert client.post("/feed", json={"text": "still fine"}).status_code == 200


def test_overlays_and_sse_streams_share_the_stream_slots(
    make_relay: Callable[..., Relay],
) -> None:
    relay = make_relay(replace(relay_settings(), max_streams=2))
    with client_for(relay) as client:
        with client.stream("GET", "/feed/stream") as sse, overlay_of(relay):
            assert sse.status_code == 200
            with connect(relay) as third:
                assert third.refusal is not None
                assert third.refusal.status == 503
                assert third.refusal.headers["retry-after"] == "5"
                assert "too many streams" in third.refusal.body["error"]
            assert client.get("/feed/stream").status_code == 503
            assert client.get("/health").json()["streams"] == {
                "feed": 1,
                "agent": 0,
                "overlay": 1,
                "health": 0,
                "longPolls": 0,
                "dropped": 0,
            }
        wait_until(lambda: overlays(client) == 0, what="the overlay's slot to be freed")
        with overlay_of(relay):
            assert overlays(client) == 1


def test_shutdown_closes_every_socket_with_going_away(relay: Relay) -> None:
    with overlay_of(relay) as first, overlay_of(relay, "/ws") as second:
        started = time.monotonic()
        assert relay.stop(timeout_s=10)
        assert time.monotonic() - started < 2.5
        for ws in (first, second):
            closed = ws.closed()
            assert (closed.code, closed.reason) == (1001, "going away")


def test_an_overlay_that_leaves_frees_its_slot(relay: Relay, client: httpx.Client) -> None:
    with overlay_of(relay):
        assert overlays(client) == 1
    wait_until(lambda: overlays(client) == 0, what="the slot to be freed")
    with overlay_of(relay) as ws:
        ws.sock.close()  # gone without a close frame
    wait_until(lambda: overlays(client) == 0, what="the slot to be freed")
