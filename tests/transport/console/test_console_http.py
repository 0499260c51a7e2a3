"""What the console asks of the relay, over HTTP: its files and their headers, the health
stream with the ticks, the overlay's switches for other clients, each actor's last error and
the hours of cost."""

from __future__ import annotations

import re
import socket
from collections.abc import Callable
from dataclasses import replace
from html.parser import HTMLParser
from typing import Any

import httpx
import orjson
import pytest

from actors.agent.core.counting.counters import HOURS_KEPT, AgentCounters
from actors.kernel.clock import FakeClock
from actors.tree import Relay
from config.agent.settings import AgentSettings
from tests.support.actor_calls import answered_tick, show, tick
from tests.support.house_limits import MODULE_LINES
from tests.support.observe import LogSink, wait_until
from tests.support.relay import HOUR_MS, client_for, relay_settings
from tests.transport.test_streams import sse
from transport.agent.fake_llm import FakeLLM
from transport.console.page import ASSETS, PAGE, TYPES
from transport.handlers import health_stream
from transport.shell.auth import CONSOLE_FILES

TOKEN = "console-http-token-5678"
FILES = {"/": TYPES[".html"], **{f"/{n}": TYPES[n[n.rindex(".") :]] for n in CONSOLE_FILES}}
"""Each of the console's paths and its media type."""
PAGE_BUDGET_BYTES = 100_000
MODEL = AgentSettings().model
"""The model the test relays ask (the settings' default)."""


class _Tags(HTMLParser):
    """Every tag and its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


@pytest.mark.parametrize(("path", "media"), FILES.items())
def test_the_console_files_forbid_other_origins_framing_and_inline_code(
    client: httpx.Client, path: str, media: str
) -> None:
    answer = client.get(path)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith(media)
    policy = answer.headers["content-security-policy"]
    for rule in ("default-src 'self'", "script-src 'self'", "frame-ancestors 'none'"):
        assert rule in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["referrer-policy"] == "no-referrer"


def test_every_file_the_console_ships_is_served() -> None:
    assert set(ASSETS) == {PAGE, *CONSOLE_FILES}


def test_no_script_of_the_console_passes_the_house_limit() -> None:
    """A script that grows past it holds two cards: the second goes in a file of its own."""
    lengths = {n: ASSETS[n][0].decode().count("\n") for n in CONSOLE_FILES if n.endswith(".js")}
    assert {name: n for name, n in lengths.items() if n > MODULE_LINES} == {}


def test_the_page_loads_only_its_own_files_and_holds_no_inline_code() -> None:
    parsed = _Tags()
    parsed.feed(ASSETS["index.html"][0].decode())
    sources = [a.get("src") or a.get("href") for tag, a in parsed.tags if tag in ("script", "link")]
    assert set(sources) == {*(f"/{name}" for name in CONSOLE_FILES), "data:,"}
    assert all(a.get("src") for tag, a in parsed.tags if tag == "script")  # no inline script
    assert not [a for _, a in parsed.tags if "style" in a or any(k.startswith("on") for k in a)]
    for name in CONSOLE_FILES:
        script = ASSETS[name][0].decode()
        assert "innerHTML" not in script and "eval(" not in script
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", script)  # no other origin
    assert sum(len(body) for body, _ in ASSETS.values()) < PAGE_BUDGET_BYTES


def test_with_a_token_the_files_need_none_but_the_overlay_socket_at_root_does(
    make_relay: Callable[..., Relay],
) -> None:
    relay = make_relay(replace(relay_settings(), token=TOKEN))
    with client_for(relay) as client:
        for path in FILES:
            assert client.get(path).status_code == 200
        upgrade = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13"}
        upgrade["Sec-WebSocket-Key"] = "dGhlIHNhbXBsZSBub25jZQ=="
        assert client.get("/", headers=upgrade).status_code == 401
        assert client.get("/health/stream").status_code == 401
        assert client.post("/overlay/command", params={"action": "toggle_audio"}).status_code == 401


@pytest.mark.parametrize("path", list(FILES))
def test_another_site_may_link_to_the_page_but_not_load_its_files(
    client: httpx.Client, path: str
) -> None:
    loaded = {
        "Sec-Fetch-Site": "cross-site",
        "Sec-Fetch-Mode": "no-cors",
        "Sec-Fetch-Dest": "script",
    }
    assert client.get(path, headers=loaded).status_code == 403
    opened = {
        "Sec-Fetch-Site": "cross-site",
        "Sec-Fetch-Mode": "navigate",
        "Sec-Fetch-Dest": "document",
    }
    assert client.get(path, headers=opened).status_code == 200
    framed = {**opened, "Sec-Fetch-Dest": "iframe"}
    assert client.get(path, headers=framed).status_code == 403


@pytest.mark.slow
def test_the_health_stream_sends_health_then_each_tick_that_ends(
    relay: Relay, client: httpx.Client, logs: LogSink, fake_llm: FakeLLM
) -> None:
    with sse(client, "/health/stream?after=0") as stream:
        first = stream.event()
        assert first["event"] == "health"
        assert orjson.loads(first["data"])["actors"]["feed"]["state"] == "running"
        assert health_streams(client) == 1
        show(relay)
        assert tick(relay, logs) == "ok"
        assert tick(relay, logs) == "idle"
        ticks: list[dict[str, Any]] = []
        for _ in range(8):  # health events come between them, each when /health changed
            event = stream.event()
            if event["event"] == "tick":
                ticks.append(orjson.loads(event["data"]))
            if len(ticks) == 2:
                break
    assert [t["outcome"] for t in ticks] == ["ok", "idle"]
    assert [t["id"] for t in ticks] == [1, 2]
    ok, idle = ticks
    assert ok["model"] == MODEL and ok["tokensIn"] == fake_llm.tokens_in
    assert ok["latencyMs"] >= 0 and ok["reason"] == "new"
    assert idle["reason"] == "idle" and idle.get("tokensIn") is None
    wait_until(lambda: health_streams(client) == 0, what="the stream's slot freed")
    with sse(client, "/health/stream?after=1") as again:  # a reconnect: the ticks after 1
        events = [again.event() for _ in range(2)]
    assert [orjson.loads(e["data"])["id"] for e in events if e["event"] == "tick"] == [2]


def test_a_relay_that_stops_ends_the_health_stream_at_once(
    make_relay: Callable[..., Relay], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stream ends, its response whole, as soon as the relay begins to stop, however long
    until its next look: a page left open neither holds the stop up nor has its handler
    cancelled midway."""
    monkeypatch.setattr(health_stream, "HEALTH_EVERY_S", 3600.0)
    relay = make_relay()
    host, port = relay.address()
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(f"GET /health/stream HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        received = b""
        while b"event: health" not in received and (chunk := sock.recv(65_536)):
            received += chunk
        assert relay.stop(timeout_s=10)
        while chunk := sock.recv(65_536):
            received += chunk
    assert received.endswith(b"\r\n0\r\n\r\n"), received[-200:]  # the chunked body's end


def health_streams(client: httpx.Client) -> int:
    return int(client.get("/health").json()["streams"]["health"])


def test_the_health_stream_holds_a_slot_and_is_refused_beyond_them(
    make_relay: Callable[..., Relay],
) -> None:
    relay = make_relay(replace(relay_settings(), max_streams=1))
    with client_for(relay) as client, sse(client, "/health/stream"):
        refused = client.get("/feed/stream")
        assert refused.status_code == 503
        assert client.get("/health/stream").status_code == 503


def test_the_overlay_switches_answer_another_client_with_the_overlays_line(
    client: httpx.Client,
) -> None:
    answer = client.post("/overlay/command", params={"action": "toggle_audio"})
    assert answer.status_code == 200
    assert answer.json()["ok"] is True
    assert "capture" in answer.json()["text"]  # no source set: the capture clients own it
    refused = client.post("/overlay/command", params={"action": "shutdown"})
    assert refused.status_code == 400
    assert "toggle_audio" in refused.json()["error"]


def test_an_actor_that_died_shows_when_and_why_to_the_token_holder_only(
    make_relay: Callable[..., Relay], clock: FakeClock
) -> None:
    relay = make_relay(replace(relay_settings(), token=TOKEN, faults=True))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with client_for(relay) as client:
        crash = {"actor": "context", "kind": "crash"}
        assert client.post("/debug/fault", json=crash, headers=auth).status_code == 200
        wait_until(lambda: relay.handles["context"].restarts == 1, what="the restart")
        shown = client.get("/health", headers=auth).json()["actors"]["context"]
        hidden = client.get("/health").json()["actors"]["context"]
    assert shown["lastExit"] == clock.now_ms()
    assert shown["lastError"] == "InjectedFault: injected crash in context"
    assert hidden["lastExit"] == clock.now_ms() and hidden["lastError"] is None


def test_the_cost_of_each_hour_is_counted_per_model(
    make_relay: Callable[..., Relay], logs: LogSink, fake_llm: FakeLLM, clock: FakeClock
) -> None:
    relay = make_relay(relay_settings(fake_llm, interval_ms=3 * HOUR_MS, debounce_ms=HOUR_MS))
    fake_llm.cost = 0.002
    show(relay, ocr="first")
    assert tick(relay, logs) == "ok"
    clock.advance(3600)
    show(relay, ocr="second")
    assert tick(relay, logs) == "ok"
    with client_for(relay) as client:
        hours = client.get("/health").json()["agent"]["costByHour"]
    assert len(hours) == 2 and hours[1]["hour"] - hours[0]["hour"] == 3_600_000
    for hour in hours:
        figures = hour["models"][MODEL]
        assert figures == {
            "calls": 1,
            "tokensIn": fake_llm.tokens_in,
            "tokensOut": fake_llm.tokens_out,
            "costUsd": 0.002,
        }


def test_a_day_of_hours_is_kept() -> None:
    counters = AgentCounters()
    for hour in range(30):
        counters.answered(answered_tick("m/a", cost=0.001), hour * HOUR_MS + 5, {})
    kept = counters.by_hour()
    assert len(kept) == HOURS_KEPT
    assert kept[0]["hour"] == 6 * HOUR_MS and kept[-1]["hour"] == 29 * HOUR_MS
    restored = AgentCounters.from_json(counters.to_json())
    assert restored.by_hour() == kept  # stored with the counters
