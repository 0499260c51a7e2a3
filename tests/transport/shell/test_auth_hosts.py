"""The ``Host`` check (DNS rebinding), ``RELAY_ALLOWED_HOSTS``, Fetch Metadata, and the
overlay's stream slot.

A web page can rebind its own name to 127.0.0.1: the browser then sends the relay requests
whose ``Host`` and ``Origin`` are the page's own name, and treats the answers as same-origin.
Such a request is a JSON 421 before anything runs. A page's ``<img>`` or ``<iframe>`` on any
site sends ``Sec-Fetch-Site: cross-site`` without ``Origin``: a 403 that takes no stream slot.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import httpx
import orjson
import pytest
from aiohttp.test_utils import make_mocked_request

from actors.tree import Relay
from tests.support.observe import wait_until
from tests.support.relay import client_for, relay_settings
from tests.transport.overlay_client import OverlayClient, Status
from tests.transport.raw_http import RawAnswer, raw_exchange, raw_request
from transport.openapi import openapi_document
from transport.shell.auth import Access, foreign_site
from transport.shell.hosts import canonical_host, host_literal, hosts_on

pytestmark = pytest.mark.usefixtures("quick_stream_checks")

EVIL = "evil.example"
APP = "http://app.test:5173"
"""An origin on the allow-list."""
STREAMS = ("/feed/stream", "/agent/stream")
SOCKETS = ("/", "/ws")
BODIES: dict[str, dict[str, Any]] = {
    "/feed": {"text": "posted by a page"},
    "/sense": {"type": "text", "ts": 1, "ocr": "posted by a page"},
    "/agent/config": {"intervalMs": 600_000, "model": "evil/model"},
    "/profiling/sense": {"rssMb": 1, "uptimeS": 1, "ts": 1},
    "/debug/fault": {"actor": "context", "kind": "crash"},
}
"""A valid body for each ``POST``: refused, it must change nothing."""


def described_routes() -> list[tuple[str, str]]:
    """(method, path) of every operation of the API description, ``OPTIONS`` included, and
    of an unknown path: a route added later is covered without touching this file."""
    routes = [
        (method.upper(), path)
        for path, operations in openapi_document()["paths"].items()
        for method in operations
    ]
    return sorted({*routes, ("POST", "/debug/fault"), ("GET", "/nowhere"), ("POST", "/x")})


ROUTES = described_routes()


@pytest.fixture
def relay(make_relay: Callable[..., Relay]) -> Relay:
    """A relay as it starts by default (loopback, no token), with the fault endpoint."""
    return make_relay(replace(relay_settings(), faults=True))


@pytest.fixture
def client(relay: Relay) -> Iterator[httpx.Client]:
    with client_for(relay) as c:
        yield c


def port_of(relay: Relay) -> int:
    return relay.address()[1]


def rebound(relay: Relay, name: str = EVIL) -> dict[str, str]:
    """What a page at ``http://<name>:<port>`` that rebound ``name`` to 127.0.0.1 sends."""
    authority = f"{name}:{port_of(relay)}"
    return {"Host": authority, "Origin": f"http://{authority}"}


def send(
    client: httpx.Client, method: str, path: str, headers: dict[str, str]
) -> tuple[int, dict[str, str], bytes]:
    """One request; a stream's body is not read to its end (only its first bytes)."""
    body = orjson.dumps(BODIES.get(path, {})) if method == "POST" else None
    with client.stream(method, path, headers=headers, content=body) as response:
        data = b""
        for chunk in response.iter_bytes():
            data += chunk
            if path in STREAMS:
                break
        return response.status_code, dict(response.headers), data


def stored(client: httpx.Client) -> tuple[Any, ...]:
    """What a refused request must not change."""
    health = client.get("/health").json()
    return (
        client.get("/feed").json()["messages"],
        client.get("/sense").json()["events"],
        client.get("/agent/config").json()["config"],
        health["profiling"],
        health["actors"],
    )


def assert_misdirected(status: int, headers: dict[str, str], body: bytes) -> None:
    assert status == 421, body
    assert headers["content-type"].startswith("application/json")
    answer = orjson.loads(body)
    assert answer["ok"] is False
    assert "RELAY_ALLOWED_HOSTS" in answer["error"]
    assert not [h for h in headers if h.lower().startswith("access-control")]


def assert_refused_raw(answer: RawAnswer, status: int, fragment: str) -> None:
    assert answer.status == status, answer
    assert answer.is_json, answer
    body = orjson.loads(answer.body)
    assert body["ok"] is False
    assert fragment in body["error"], body


# -- the Host check ---------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_a_rebound_name_gets_421_on_every_route_and_changes_nothing(
    relay: Relay, client: httpx.Client, method: str, path: str
) -> None:
    client.post("/feed", json={"text": "what the user said"})
    client.post("/sense", json={"type": "text", "ts": 1, "ocr": "what the user saw"})
    before = stored(client)
    status, headers, body = send(client, method, path, rebound(relay))
    assert_misdirected(status, headers, body)
    assert b"what the user" not in body
    assert stored(client) == before
    assert client.get("/health").json()["streams"] == {
        "feed": 0,
        "agent": 0,
        "overlay": 0,
        "health": 0,
        "longPolls": 0,
        "dropped": 0,
    }


@pytest.mark.parametrize("path", ["/feed", "/sense", "/agent/context", "/agent/history", "/export"])
def test_a_rebound_page_reads_none_of_the_users_data(
    relay: Relay, client: httpx.Client, path: str
) -> None:
    client.post("/feed", json={"text": "my bank password is hunter2"})
    client.post("/sense", json={"type": "text", "ts": 1, "ocr": "account 1234"})
    answer = client.get(path, headers=rebound(relay))
    assert_misdirected(answer.status_code, dict(answer.headers), answer.content)
    assert "hunter2" not in answer.text and "1234" not in answer.text


@pytest.mark.parametrize("path", STREAMS)
def test_a_rebound_stream_replays_nothing_and_holds_no_slot(
    relay: Relay, client: httpx.Client, path: str
) -> None:
    client.post("/feed", json={"text": "heard earlier"})
    status, headers, body = send(client, "GET", path + "?after=0", rebound(relay))
    assert_misdirected(status, headers, body)
    assert b"heard earlier" not in body
    assert client.get("/health").json()["streams"]["feed"] == 0


@pytest.mark.parametrize("path", SOCKETS)
def test_a_rebound_page_gets_no_overlay_socket(
    relay: Relay, client: httpx.Client, path: str
) -> None:
    client.post("/feed", json={"text": "heard earlier"})
    host, port = relay.address()
    page = f"http://{EVIL}:{port}"
    with contextlib.closing(
        OverlayClient(host, port, path, host_header=f"{EVIL}:{port}", headers={"Origin": page})
    ) as ws:
        assert ws.refusal is not None, "the upgrade was accepted"
        assert ws.refusal.status == 421
        assert "RELAY_ALLOWED_HOSTS" in ws.refusal.body["error"]
    assert client.get("/health").json()["streams"]["overlay"] == 0


def test_a_rebound_expect_100_continue_gets_421_and_no_interim_answer(
    relay: Relay, client: httpx.Client
) -> None:
    body = orjson.dumps({"text": "posted by a page"})
    head = raw_request(
        "POST",
        "/feed",
        [("Content-Length", str(len(body))), ("Expect", "100-continue")],
        host=f"{EVIL}:{port_of(relay)}",
    )
    host, port = relay.address()
    answers = raw_exchange(host, port, head + body)
    assert [a.status for a in answers] == [421]
    assert client.get("/feed").json()["messages"] == []


@pytest.mark.parametrize(
    "authority",
    [
        "127.0.0.1:{port}",
        "localhost:{port}",
        "[::1]:{port}",
        "LocalHost:{port}",  # names are case-insensitive
        "localhost.:{port}",  # a fully qualified name
        "localhost",  # no port: a native client or a proxy
        "127.0.0.1",
        "localhost:",  # an empty port is the default one
    ],
)
def test_the_loopback_names_with_the_relays_port_or_none_are_served(
    relay: Relay, client: httpx.Client, authority: str
) -> None:
    headers = {"Host": authority.format(port=port_of(relay))}
    assert client.post("/feed", json={"text": "ok"}, headers=headers).status_code == 200
    assert client.get("/feed", headers=headers).json()["messages"][0]["text"] == "ok"


@pytest.mark.parametrize(
    "authority",
    [
        "evil.example:{port}",
        "evil.example",
        "EVIL.EXAMPLE.:{port}",
        "localhost:{other}",  # another port of this machine is another origin
        "127.0.0.1:{other}",
        "[::1]:{other}",
        "localhost:0{port}",
        "localhost.evil.example:{port}",
        "127.0.0.1.nip.io:{port}",
        "localhost:{port}.evil.example",
        "user@localhost:{port}",
        "localhost:{port}/x",
        "localhost :{port}",
        "app.localhost:{port}",
        "0.0.0.0:{port}",
        "",
    ],
)
def test_any_other_host_is_a_421(relay: Relay, client: httpx.Client, authority: str) -> None:
    port = port_of(relay)
    headers = {"Host": authority.format(port=port, other=port % 65535 + 1)}
    answer = client.post("/feed", json={"text": "refused"}, headers=headers)
    assert_misdirected(answer.status_code, dict(answer.headers), answer.content)
    assert client.get("/feed").json()["messages"] == []


def test_the_address_a_request_arrived_at_is_served(make_relay: Callable[..., Relay]) -> None:
    """A relay listening on one address (a LAN one, here another loopback one) serves that
    address as a ``Host``, with its port; no other."""
    relay = make_relay(replace(relay_settings(), host="127.0.0.2"))
    host, port = relay.address()
    assert host == "127.0.0.2"
    with client_for(relay) as client:
        assert client.get("/feed").status_code == 200  # Host: 127.0.0.2:<port>
        for refused in (f"127.0.0.3:{port}", f"127.0.0.2:{port % 65535 + 1}"):
            assert client.get("/feed", headers={"Host": refused}).status_code == 421


@pytest.mark.parametrize(
    ("address", "literal"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("192.168.1.20", "192.168.1.20"),
        ("::1", "[::1]"),
        ("::ffff:192.168.1.20", "192.168.1.20"),
        ("fe80::1%eth0", "[fe80::1]"),
        ("FD00:0:0::7", "[fd00::7]"),
    ],
)
def test_a_local_address_is_named_as_a_host_names_it(address: str, literal: str) -> None:
    assert host_literal(address) == literal


@pytest.mark.parametrize(
    ("host", "canonical"),
    [
        ("LocalHost:18791", "localhost:18791"),
        ("localhost.:18791", "localhost:18791"),
        ("localhost:", "localhost"),
        ("[::1]", "[::1]"),
        ("[::1]:80", "[::1]:80"),
        ("Relay.LAN.", "relay.lan"),
    ],
)
def test_hosts_are_compared_in_one_spelling(host: str, canonical: str) -> None:
    assert canonical_host(host) == canonical


def test_a_host_of_bytes_beyond_utf8_or_of_any_length_is_a_json_421_quoting_it_safely(
    relay: Relay, client: httpx.Client, logs: Any
) -> None:
    host, port = relay.address()
    for name in (b"\xe9vil.example", b"x" * 8000, b"\xff\xfe\x00".replace(b"\x00", b"")):
        data = b"GET /feed HTTP/1.1\r\nHost: " + name + b"\r\n\r\n"
        (answer,) = raw_exchange(host, port, data)
        assert_refused_raw(answer, 421, "RELAY_ALLOWED_HOSTS")
        assert len(answer.body) < 400  # the name is cut
    assert not logs.named("http.unhandled")
    assert client.get("/health").status_code == 200


def test_an_origin_of_bytes_beyond_utf8_is_a_json_400_not_a_500(
    relay: Relay, client: httpx.Client, logs: Any
) -> None:
    host, port = relay.address()
    data = raw_request(
        "POST", "/feed", [("Content-Length", "16")], b'{"text": "page"}', host=f"{host}:{port}"
    ).replace(b"\r\n\r\n", b"\r\nOrigin: http://\xe9vil.example\r\n\r\n", 1)
    (answer,) = raw_exchange(host, port, data)
    assert_refused_raw(answer, 400, "Origin header is not an origin")
    assert not logs.named("http.internal_error")
    assert client.get("/feed").json()["messages"] == []


def test_a_request_without_host_is_no_browser_and_is_served(relay: Relay) -> None:
    """HTTP/1.0 has no ``Host`` (HTTP/1.1 without one is the parser's 400); browsers always
    send one."""
    host, port = relay.address()
    (answer,) = raw_exchange(host, port, b"GET /feed HTTP/1.0\r\n\r\n")
    assert answer.status == 200
    assert orjson.loads(answer.body)["messages"] == []


class Arrived:
    """The transport of a connection that arrived at 127.0.0.1:18791."""

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 18791) if name == "sockname" else default


def test_the_relays_own_origin_is_judged_against_the_hosts_it_serves() -> None:
    """Even were the ``Host`` check skipped, an ``Origin`` equal to a foreign ``Host`` is no
    same-origin request."""
    access = Access("")
    for name in (EVIL, "localhost"):
        page = {"Host": f"{name}:18791", "Origin": f"http://{name}:18791"}
        request = make_mocked_request("GET", "/feed", headers=page, transport=Arrived())
        assert (access.cors(request) is None) is (name == EVIL)


# -- RELAY_ALLOWED_HOSTS ------------------------------------------------------------------------


@pytest.fixture
def listed(make_relay: Callable[..., Relay]) -> Iterator[httpx.Client]:
    """A relay whose operator listed a LAN name, a tunnel's name and port, and an IPv6
    address (the token as when it listens beyond loopback)."""
    settings = replace(
        relay_settings(),
        token="t0ken",
        allowed_hosts=("relay.lan", "tunnel.example:9000", "[fd00::7]"),
    )
    with client_for(make_relay(settings)) as client:
        client.headers["Authorization"] = "Bearer t0ken"
        yield client


@pytest.mark.parametrize(
    ("authority", "status"),
    [
        ("relay.lan:{port}", 200),
        ("RELAY.LAN.:{port}", 200),
        ("relay.lan", 200),
        ("relay.lan:{other}", 421),  # a name without a port: the relay's port, or none
        ("tunnel.example:9000", 200),
        ("tunnel.example:{port}", 421),  # a name with a port: that port only
        ("tunnel.example", 421),
        ("[fd00::7]:{port}", 200),
        ("[FD00::7]", 200),
        ("localhost:{port}", 200),  # the loopback names stay
        ("other.lan:{port}", 421),
    ],
)
def test_relay_allowed_hosts_adds_names_to_those_served(
    listed: httpx.Client, authority: str, status: int
) -> None:
    port = httpx.URL(str(listed.base_url)).port
    assert port is not None
    headers = {"Host": authority.format(port=port, other=port % 65535 + 1)}
    assert listed.get("/feed", headers=headers).status_code == status


def test_a_listed_name_is_the_relays_own_origin(listed: httpx.Client) -> None:
    headers = {"Host": "tunnel.example:9000", "Origin": "http://tunnel.example:9000"}
    answer = listed.post("/feed", json={"text": "same origin"}, headers=headers)
    assert answer.status_code == 200
    assert "Access-Control-Allow-Origin" not in answer.headers


def test_the_421_comes_before_the_token_is_looked_at(listed: httpx.Client) -> None:
    answer = listed.get("/feed", headers={"Host": EVIL, "Authorization": "Bearer wrong"})
    assert answer.status_code == 421
    assert "WWW-Authenticate" not in answer.headers


# -- Fetch Metadata ---------------------------------------------------------------------------

PAGE_ROUTES = [(m, p) for m, p in ROUTES if p != "/health" and m != "OPTIONS"]


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
@pytest.mark.parametrize(("method", "path"), PAGE_ROUTES)
def test_a_cross_site_fetch_is_a_403_on_every_route_but_health(
    relay: Relay, client: httpx.Client, method: str, path: str, site: str
) -> None:
    """What an ``<img>``, ``<iframe>``, ``<script>`` or a link of another site sends: no
    ``Origin``. Another port of localhost is the same site, and another origin."""
    before = stored(client)
    headers = {"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}
    status, _, body = send(client, method, path, headers)
    assert status == 403, body
    assert "Sec-Fetch-Site" in orjson.loads(body)["error"]
    assert stored(client) == before
    assert sum(client.get("/health").json()["streams"].values()) == 0


@pytest.mark.parametrize("site", [None, "same-origin", "none"])
def test_same_origin_typed_in_and_native_requests_pass(client: httpx.Client, site: str) -> None:
    headers = {} if site is None else {"Sec-Fetch-Site": site}
    assert client.post("/feed", json={"text": "ok"}, headers=headers).status_code == 200
    assert client.get("/feed", headers=headers).status_code == 200


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_health_answers_a_cross_site_fetch(client: httpx.Client, method: str) -> None:
    answer = client.request(method, "/health", headers={"Sec-Fetch-Site": "cross-site"})
    assert answer.status_code == 200


def test_a_cross_site_preflight_is_answered_as_before(client: httpx.Client) -> None:
    headers = {"Origin": "http://page.test", "Sec-Fetch-Site": "cross-site"}
    preflight = client.options("/feed", headers=headers)
    assert preflight.status_code == 204
    assert "Access-Control-Allow-Origin" not in preflight.headers


def test_a_listed_origin_may_fetch_cross_site(make_relay: Callable[..., Relay]) -> None:
    relay = make_relay(replace(relay_settings(), cors_origins=(APP,)))
    page = {"Origin": APP, "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"}
    with client_for(relay) as client:
        answer = client.post("/feed", json={"text": "from the dashboard"}, headers=page)
        assert answer.status_code == 200
        assert answer.headers["Access-Control-Allow-Origin"] == APP
        with client.stream("GET", "/feed/stream", headers=page) as stream:
            assert stream.status_code == 200
        no_origin = client.get("/feed", headers={"Sec-Fetch-Site": "same-site"})
        assert no_origin.status_code == 403  # an <img> of that site says nothing of its origin
    host, port = relay.address()
    with contextlib.closing(OverlayClient(host, port, "/ws", headers=page)) as ws:
        assert ws.refusal is None


def test_a_cross_site_page_gets_no_overlay_socket(relay: Relay) -> None:
    host, port = relay.address()
    with contextlib.closing(
        OverlayClient(host, port, "/", headers={"Sec-Fetch-Site": "cross-site"})
    ) as ws:
        assert ws.refusal is not None
        assert ws.refusal.status == 403


def test_with_a_wildcard_any_page_may_fetch(make_relay: Callable[..., Relay]) -> None:
    relay = make_relay(replace(relay_settings(), cors_origins=("*",)))
    with client_for(relay) as client:
        assert client.get("/feed", headers={"Sec-Fetch-Site": "cross-site"}).status_code == 200


# -- stream slots -------------------------------------------------------------------------------


def open_stream(relay: Relay, headers: dict[str, str]) -> tuple[socket.socket, int]:
    """A ``GET /feed/stream`` left open; its socket and status."""
    host, port = relay.address()
    sock = socket.create_connection((host, port), timeout=5)
    lines = ["GET /feed/stream HTTP/1.1", f"Host: {host}:{port}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    head = b""
    while b"\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    return sock, int(head.split(b" ", 2)[1])


def test_cross_site_fetches_cannot_take_the_stream_slots_from_the_overlay(relay: Relay) -> None:
    image = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}
    with contextlib.ExitStack() as stack:
        statuses = []
        for _ in range(relay_settings().max_streams):
            sock, status = open_stream(relay, image)
            stack.callback(sock.close)
            statuses.append(status)
        assert set(statuses) == {403}
        host, port = relay.address()
        with contextlib.closing(OverlayClient(host, port, "/")) as ws:
            assert ws.refusal is None, ws.refusal
            assert isinstance(ws.read(), Status)


def test_streams_that_take_every_slot_leave_one_for_the_overlay(
    make_relay: Callable[..., Relay],
) -> None:
    relay = make_relay(replace(relay_settings(), max_streams=2))
    host, port = relay.address()
    with client_for(relay) as client, contextlib.ExitStack() as stack:
        for _ in range(2):
            sock, status = open_stream(relay, {})
            stack.callback(sock.close)
            assert status == 200
        sock, status = open_stream(relay, {})
        sock.close()
        assert status == 503  # streams stop at RELAY_MAX_STREAMS
        with contextlib.closing(OverlayClient(host, port, "/")) as ws:
            assert ws.refusal is None, ws.refusal
            assert isinstance(ws.read(), Status)
            with contextlib.closing(OverlayClient(host, port, "/ws")) as second:
                assert second.refusal is not None
                assert second.refusal.status == 503
            wait_until(
                lambda: client.get("/health").json()["streams"]["overlay"] == 1,
                what="the overlay to be counted",
            )


def test_a_server_on_one_port_serves_the_relays_names_with_that_port_or_none() -> None:
    hosts = hosts_on(9000, ["My-Laptop.local.", "tunnel.example:8443"])
    for name in ("127.0.0.1", "localhost", "[::1]", "my-laptop.local"):
        assert {name, f"{name}:9000"} <= hosts
    assert "tunnel.example:8443" in hosts
    assert not {"tunnel.example", "tunnel.example:9000", "localhost:9001"} & hosts


@pytest.mark.parametrize(
    ("site", "foreign"),
    [(None, False), ("none", False), ("same-origin", False), ("same-site", True),
     ("cross-site", True), ("something-new", True)],
)  # fmt: skip
def test_fetch_metadata_names_the_sites_of_other_origins(site: str | None, foreign: bool) -> None:
    assert foreign_site(site) is foreign
