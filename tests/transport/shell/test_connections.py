"""Client connections: a request head has a deadline, an idle connection a keep-alive timeout,
and the open ones a cap below the limit of open files, on the real server.

The timeouts here are a few tenths of a second (set in each test's settings); every wait is
bounded by a socket timeout several times longer.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import orjson
import pytest

from actors.core.records import FeedPost
from actors.ingest.feed_buffer import FeedBuffer
from actors.tree import Relay
from tests.support.harness import HOST, free_port
from tests.support.observe import LogSink, wait_until
from tests.support.relay import client_for, relay_settings, scrape, value
from tests.support.run_relay import relay_env, spawn_relay, wait_healthy
from tests.transport.overlay_client import OverlayClient, Status
from tests.transport.raw_http import RawAnswer, parse_answers, raw_request
from transport.shell.connections import ConnectionLimits, max_connections_for, open_files_limit

pytestmark = pytest.mark.usefixtures("quick_stream_checks")

SHORT_S = 0.3
"""The timeout under test."""
LONG_S = 30.0
"""A timeout that does not fire during a test."""
CLOSED_WITHIN_S = 3.0
"""How long a test waits for the relay to close a connection: ten times :data:`SHORT_S`."""
HEALTH = raw_request("GET", "/health")
FEED = orjson.dumps({"text": "hello"})


def limited(
    make_relay: Callable[..., Relay],
    *,
    header_s: float = LONG_S,
    body_s: float = LONG_S,
    keepalive_s: float = LONG_S,
    max_connections: int = 0,
) -> Relay:
    settings = replace(
        relay_settings(),
        header_timeout_s=header_s,
        body_timeout_s=body_s,
        keepalive_timeout_s=keepalive_s,
        max_connections=max_connections,
    )
    return make_relay(settings)


@contextlib.contextmanager
def connected(relay: Relay) -> Iterator[socket.socket]:
    with socket.create_connection(relay.address(), timeout=CLOSED_WITHIN_S) as conn:
        yield conn


def ask(conn: socket.socket, request: bytes = HEALTH) -> RawAnswer:
    """Send ``request`` on ``conn`` and read one answer (the connection stays open)."""
    conn.sendall(request)
    data = b""
    while not (answers := parse_answers(data)):
        chunk = conn.recv(65536)
        if not chunk:
            pytest.fail(f"the relay closed the connection; received {data!r}")
        data += chunk
    return answers[0]


def closed_by_relay(conn: socket.socket, within_s: float = CLOSED_WITHIN_S) -> bytes | None:
    """What the relay sent before it closed ``conn``, or ``None`` if it is still open after
    ``within_s``."""
    conn.settimeout(within_s)
    data = b""
    try:
        while chunk := conn.recv(65536):
            data += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return data


def still_open(conn: socket.socket) -> bool:
    """Whether the relay has neither closed ``conn`` nor sent anything more on it."""
    conn.setblocking(False)
    try:
        conn.recv(1, socket.MSG_PEEK)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        conn.setblocking(True)
    return False


# -- the request head -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "sent",
    [b"", b"GET /hea", b"POST /feed HTTP/1.1\r\nHost: relay\r\nContent-Le"],
    ids=["nothing", "half a request line", "half a header"],
)
def test_a_connection_without_a_whole_request_head_is_closed_after_the_header_timeout(
    make_relay: Callable[..., Relay], sent: bytes
) -> None:
    relay = limited(make_relay, header_s=SHORT_S)
    with connected(relay) as conn:
        conn.sendall(sent)
        assert closed_by_relay(conn) == b""
    with client_for(relay) as client:
        assert client.get("/health").status_code == 200
        samples = scrape(client)
    assert value(samples, "relay_http_connections_closed_total", reason="head_timeout") == 1


def test_a_request_whose_head_came_in_time_may_take_longer_with_its_body(
    make_relay: Callable[..., Relay],
) -> None:
    relay = limited(make_relay, header_s=SHORT_S)
    head = raw_request("POST", "/feed", [("Content-Length", str(len(FEED)))])
    with connected(relay) as conn:
        conn.sendall(head)
        time.sleep(2 * SHORT_S)
        answer = ask(conn, FEED)
    assert answer.status == 200, answer


@pytest.mark.parametrize(
    ("sent", "length"),
    [(b"", len(FEED)), (FEED[:5], len(FEED)), (FEED, len(FEED) + 10)],
    ids=["no body", "half a body", "a body shorter than its length"],
)
def test_a_body_that_stops_coming_is_a_json_408_after_the_body_timeout(
    make_relay: Callable[..., Relay], logs: LogSink, sent: bytes, length: int
) -> None:
    relay = limited(make_relay, body_s=SHORT_S)
    head = raw_request("POST", "/feed", [("Content-Length", str(length))])
    with connected(relay) as conn:
        conn.sendall(head + sent)
        data = closed_by_relay(conn)
    assert data is not None, "the connection is still open"
    (answer,) = parse_answers(data)
    assert answer.status == 408, answer
    assert "body" in orjson.loads(answer.body)["error"]
    assert [line["status"] for line in logs.named("http.request")] == [408]
    with client_for(relay) as client:
        assert client.get("/feed").json()["messages"] == []


def test_a_chunked_body_that_stops_coming_is_a_json_408(make_relay: Callable[..., Relay]) -> None:
    relay = limited(make_relay, body_s=SHORT_S)
    head = raw_request("POST", "/feed", [("Transfer-Encoding", "chunked")])
    with connected(relay) as conn:
        conn.sendall(head + b"5\r\n" + FEED[:5] + b"\r\n")
        data = closed_by_relay(conn)
    assert data is not None, "the connection is still open"
    (answer,) = parse_answers(data)
    assert answer.status == 408, answer


# -- keep-alive -----------------------------------------------------------------------------


@pytest.mark.slow
def test_an_idle_connection_is_closed_after_the_keepalive_timeout(
    make_relay: Callable[..., Relay],
) -> None:
    relay = limited(make_relay, header_s=SHORT_S, keepalive_s=3 * SHORT_S)
    with connected(relay) as conn:
        assert ask(conn).status == 200
        time.sleep(2 * SHORT_S)  # past the header timeout, which counts for the first head only
        assert ask(conn).status == 200
        started = time.monotonic()
        assert closed_by_relay(conn) == b""
        assert time.monotonic() - started >= 3 * SHORT_S * 0.9  # not before its time


@pytest.mark.slow
def test_streams_sockets_and_long_polls_outlive_both_timeouts(
    make_relay: Callable[..., Relay],
) -> None:
    relay = limited(make_relay, header_s=SHORT_S, keepalive_s=SHORT_S)
    host, port = relay.address()
    with (
        client_for(relay) as client,
        client.stream("GET", "/feed/stream") as stream,
        OverlayClient(host, port, "/") as overlay,
    ):
        assert overlay.refusal is None, overlay.refusal
        assert isinstance(overlay.read(), Status)
        lines = stream.iter_lines()
        assert next(lines) == "retry: 3000"
        with client_for(relay) as poller:  # more than four times each timeout
            poll = poller.get("/agent/digest", params={"wait": 5 * SHORT_S})
        assert poll.status_code == 200
        with client_for(relay) as poster:
            assert poster.post("/feed", content=FEED).status_code == 200
        assert any("hello" in next(lines) for _ in range(8))
        assert overlay.feed().text == "hello"


# -- the cap --------------------------------------------------------------------------------


def test_at_the_cap_a_new_connection_takes_the_place_of_an_idle_one(
    make_relay: Callable[..., Relay], logs: LogSink
) -> None:
    relay = limited(make_relay, max_connections=3)
    with connected(relay) as silent, connected(relay) as kept, connected(relay) as half:
        assert ask(kept).status == 200
        half.sendall(b"GET /health HTTP/1.1\r\nHo")
        with connected(relay) as new:
            assert ask(new).status == 200
            assert closed_by_relay(silent) == b""  # the oldest without a request head
            assert still_open(kept)
            assert still_open(half)
            with connected(relay) as newer:
                assert ask(newer).status == 200
                assert closed_by_relay(half) == b""
                assert still_open(kept)
    (full,) = logs.named("http.connections_full")
    assert full["level"] == "warning"
    assert full["limit"] == 3


def test_at_the_cap_with_every_connection_busy_a_new_one_is_answered_503(
    make_relay: Callable[..., Relay], logs: LogSink
) -> None:
    relay = limited(make_relay, max_connections=2)
    with (
        client_for(relay) as first,
        first.stream("GET", "/feed/stream") as one,
        client_for(relay) as second,
        second.stream("GET", "/agent/stream") as other,
    ):
        feed_lines, agent_lines = one.iter_lines(), other.iter_lines()  # (closing one ends it)
        assert next(feed_lines) == "retry: 3000"
        assert next(agent_lines) == "retry: 3000"
        for _ in range(2):
            with connected(relay) as refused:
                answer = ask(refused)
                assert answer.status == 503, answer
                assert answer.is_json
                assert "too many connections" in orjson.loads(answer.body)["error"]
                assert answer.headers["retry-after"] == "1"
                assert closed_by_relay(refused) == b""
        # the open connections still work: an item stored now reaches the stream
        relay.handles["feed"].ask(FeedBuffer.append_many, (FeedPost("still here"),)).result(5)
        assert any("still here" in next(feed_lines) for _ in range(8))
    # they closed: new clients are answered again (once the relay has seen them close)
    with client_for(relay) as client:
        wait_until(lambda: _answered(client), what="a new client to be answered")
        samples = scrape(client)
    refusals = value(samples, "relay_http_connections_refused_total")
    assert refusals is not None
    assert refusals >= 2
    assert value(samples, "relay_http_connections_limit") == 2
    assert len(logs.named("http.connections_full")) == 1  # once for the burst
    (available,) = logs.named("http.connections_available")
    assert available["refused"] == refusals


def _answered(client: httpx.Client) -> httpx.Response | None:
    response = client.get("/health")
    return response if response.status_code == 200 else None


def test_the_default_cap_leaves_the_relay_files_of_its_own() -> None:
    assert max_connections_for(256) == 192  # a Mac's default ulimit -n
    assert max_connections_for(1024) == 960
    assert max_connections_for(100) == 50
    assert max_connections_for(1_048_576) == 1024
    assert max_connections_for(None) == 1024
    assert max_connections_for(1) == 1


@pytest.mark.skipif(open_files_limit() is None, reason="no limit of open files here")
def test_a_cap_above_the_limit_of_open_files_is_warned(logs: LogSink) -> None:
    limits = ConnectionLimits(
        header_timeout_s=1, body_timeout_s=1, keepalive_timeout_s=1, max_connections=10**7
    )
    assert limits.cap() == 10**7
    (warning,) = logs.named("http.max_connections_above_open_files")
    assert warning["level"] == "warning"


@pytest.mark.slow
def test_under_ulimit_idle_connections_do_not_lock_new_clients_out(tmp_path: Path) -> None:
    """The relay under a limit of 128 open files (a cap of 64 by default) and 150 idle
    connections, more than it could hold: a new client is answered at once."""
    port = free_port()
    proc = spawn_relay(port, relay_env(tmp_path / "data"), nofile=128)
    idle: list[socket.socket] = []
    try:
        wait_healthy(port, proc)
        for _ in range(150):
            idle.append(socket.create_connection((HOST, port), timeout=CLOSED_WITHIN_S))
        with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=CLOSED_WITHIN_S) as client:
            health = client.get("/health")
            assert health.status_code == 200
            samples = scrape(client)
        assert value(samples, "relay_http_connections_limit") == 64
        open_now = value(samples, "relay_http_connections")
        assert open_now is not None
        assert open_now <= 64
    finally:
        for conn in idle:
            conn.close()
        proc.terminate()
        proc.communicate(timeout=15)
