"""RELAY_TOKEN, the CORS allow-list, the API key over HTTP and the loopback rule."""

from __future__ import annotations

import hmac
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from aiohttp.test_utils import make_mocked_request

from actors.agent.core.entries import EMPTY_AGENT
from actors.core.records import EMPTY_FEED, EMPTY_SENSE
from actors.kernel.base import ChildHandle
from actors.kernel.clock import FakeClock
from actors.kernel.published import Published
from actors.kernel.storage import close_storage, open_storage
from actors.tree import Relay
from tests.support.actor_calls import tick
from tests.support.harness import ROOT, free_port
from tests.support.observe import LogSink
from tests.support.relay import client_for, refused_config_change, relay_settings
from tests.support.run_relay import relay_env, spawn_relay, stopped_once_healthy
from tests.transport.test_streams import sse
from transport.app import build_app
from transport.exposure import exposure, is_loopback, warn_at_start
from transport.shell.auth import PAGE_ROUTES, Access, Forbidden, TokenRefused
from transport.shell.state import Peers, Policy

TOKEN = "s3cret-token"
APP = "http://app.test:5173"
"""An origin on the allow-list."""
EVIL = "http://evil.test"
AUTHORIZED = {"Authorization": f"Bearer {TOKEN}"}
OPEN = {
    (method, path)
    for method in ("GET", "HEAD")
    for path in ("/health", *(path for _, path in PAGE_ROUTES))
}
"""``/health`` and the console's files (``/`` not upgraded: the page; the upgrade is the
overlay's socket and needs the token, ``tests/transport/test_console.py``)."""
STREAMS = {"/feed/stream", "/agent/stream", "/health/stream"}
SOCKETS = {"/ws": 426}
"""The overlay's WebSocket, and what it answers a request that is no upgrade (the upgrades
themselves: ``tests/transport/test_overlay.py``)."""


def served_routes() -> list[tuple[str, str]]:
    """(method, path) of every route of the app (``RELAY_FAULTS=1``), from its router: a
    route added later is covered without touching this file."""
    handles: dict[str, ChildHandle[Any]] = {
        n: ChildHandle(n) for n in ("feed", "sense", "digest", "context", "ticker")
    }
    storage = open_storage(":memory:")
    try:
        peers = Peers(
            feed=handles["feed"],
            sense=handles["sense"],
            feed_view=Published(EMPTY_FEED),
            sense_view=Published(EMPTY_SENSE),
            agent_view=Published(EMPTY_AGENT),
            digest=handles["digest"],
            context=handles["context"],
            ticker=handles["ticker"],
            actors=handles,
            timeout_s=1.0,
            storage=storage,
            clock=FakeClock(),
        )
        routes = build_app(peers, Policy(token=TOKEN, faults=True)).router.routes()
        return sorted(
            {(r.method, r.resource.canonical) for r in routes if r.resource and r.method != "*"}
        )
    finally:
        close_storage(storage)


ROUTES = served_routes()


@pytest.fixture
def secured(make_relay: Callable[..., Relay]) -> Iterator[httpx.Client]:
    """A relay with a token, one allowed origin and the fault endpoint; a client without
    the token."""
    settings = replace(relay_settings(), token=TOKEN, cors_origins=(APP,), faults=True)
    with client_for(make_relay(settings)) as client:
        yield client


@pytest.fixture
def tokenless(make_relay: Callable[..., Relay]) -> Iterator[httpx.Client]:
    """A relay as it starts by default: no token, no allowed origin."""
    with client_for(make_relay()) as client:
        yield client


def request(
    client: httpx.Client, method: str, path: str, headers: dict[str, str] | None = None
) -> httpx.Response:
    """One request; a stream is opened, its status read, and closed."""
    body = b"{}" if method == "POST" else None
    with client.stream(method, path, headers=headers, content=body) as response:
        if path not in STREAMS or method != "GET" or response.status_code != 200:
            response.read()
        return response


def assert_401(response: httpx.Response, error: str | None = None) -> None:
    assert response.status_code == 401, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = orjson.loads(response.read())
    assert body["ok"] is False and "Bearer" in body["error"]
    challenge = response.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer ")
    assert (f'error="{error}"' in challenge) if error else ("error=" not in challenge)


# -- the token ------------------------------------------------------------------------------


def test_the_route_table_is_what_the_relay_serves() -> None:
    assert {("POST", "/feed"), ("GET", "/feed"), ("GET", "/health")} <= set(ROUTES)
    assert {("GET", p) for p in STREAMS} <= set(ROUTES)
    assert ("POST", "/debug/fault") in ROUTES


@pytest.mark.parametrize(("method", "path"), [r for r in ROUTES if r not in OPEN])
def test_every_endpoint_but_health_needs_the_token(
    secured: httpx.Client, method: str, path: str
) -> None:
    no_header = request(secured, method, path)
    wrong = request(secured, method, path, {"Authorization": "Bearer s3cret-tokem"})
    right = request(secured, method, path, AUTHORIZED)

    if method == "HEAD":  # no body: the status and the challenge say it
        assert no_header.status_code == wrong.status_code == 401
        assert no_header.headers["WWW-Authenticate"].startswith("Bearer")
    else:
        assert_401(no_header)
        assert_401(wrong, "invalid_token")
    expected = {200} if method != "POST" else {200, 400}  # body {}
    if path == "/audio":
        expected = {415}  # body {}: not audio, yet past the token
    if path in SOCKETS:
        expected = {SOCKETS[path]}
    assert right.status_code in expected, right.text


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_health_needs_no_token(secured: httpx.Client, method: str) -> None:
    assert secured.request(method, "/health").status_code == 200


@pytest.mark.parametrize("path", ["/health", "/feed", "/nowhere", "/debug/fault"])
def test_a_preflight_needs_no_token(secured: httpx.Client, path: str) -> None:
    assert secured.options(path).status_code == 204


@pytest.mark.parametrize(
    ("method", "path"), [("GET", "/nowhere"), ("POST", "/agent/nowhere"), ("DELETE", "/feed")]
)
def test_without_the_token_unknown_paths_and_methods_are_401_not_404(
    secured: httpx.Client, method: str, path: str
) -> None:
    assert_401(secured.request(method, path))
    known = secured.request(method, path, headers=AUTHORIZED)
    assert known.status_code == (405 if path == "/feed" else 404)


def test_post_to_health_without_the_token_is_a_401(secured: httpx.Client) -> None:
    assert_401(secured.post("/health"))
    assert secured.post("/health", headers=AUTHORIZED).status_code == 405


@pytest.mark.parametrize(
    "header", ["Basic czNjcmV0", "Bearer", TOKEN, f"Bearer\t{TOKEN}", f"Token {TOKEN}"]
)
def test_a_malformed_authorization_header_is_a_401(secured: httpx.Client, header: str) -> None:
    assert_401(secured.get("/feed", headers={"Authorization": header}), "invalid_request")


@pytest.mark.parametrize("header", [f"bearer {TOKEN}", f"BEARER  {TOKEN}"])
def test_the_scheme_is_case_insensitive_and_spaces_are_tolerated(
    secured: httpx.Client, header: str
) -> None:
    assert secured.get("/feed", headers={"Authorization": header}).status_code == 200


@pytest.mark.parametrize("path", sorted(STREAMS))
def test_streams_take_the_token_as_a_header_or_as_access_token(
    secured: httpx.Client, path: str
) -> None:
    for headers, query in ((AUTHORIZED, ""), (None, f"?access_token={TOKEN}")):
        with secured.stream("GET", path + query, headers=headers) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            assert next(stream.iter_lines()) == "retry: 3000"
    assert_401(request(secured, "GET", path + "?access_token=wrong"), "invalid_token")
    assert_401(request(secured, "GET", path + "?access_token="), "invalid_token")
    wrong_header = {"Authorization": "Bearer wrong"}  # the header wins over the parameter
    assert_401(
        request(secured, "GET", path + f"?access_token={TOKEN}", wrong_header), "invalid_token"
    )


def test_access_token_is_not_taken_outside_the_streams(secured: httpx.Client) -> None:
    assert_401(secured.get("/feed", params={"access_token": TOKEN}))


def test_query_strings_and_tokens_never_reach_the_log(secured: httpx.Client, logs: LogSink) -> None:
    request(secured, "GET", "/feed/stream?access_token=wrong-guess")
    secured.get("/feed", headers={"Authorization": "Bearer another-guess"})
    lines = logs.named("http.request")
    assert [(line["path"], line["status"]) for line in lines] == [
        ("/feed/stream", 401),
        ("/feed", 401),
    ]
    logged = repr(logs.events)
    assert "wrong-guess" not in logged and "another-guess" not in logged and TOKEN not in logged


def test_the_token_is_compared_with_compare_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)  # the module transport.shell.auth calls
    access = Access(TOKEN)
    gate = access.gate("GET", "/feed")
    gate(make_mocked_request("GET", "/feed", headers=AUTHORIZED), {})
    with pytest.raises(TokenRefused):
        gate(make_mocked_request("GET", "/feed", headers={"Authorization": "Bearer x"}), {})
    assert compared == [(TOKEN.encode(), TOKEN.encode()), (b"x", TOKEN.encode())]


def test_a_token_beyond_ascii_works_and_bytes_beyond_utf8_are_a_401(
    make_relay: Callable[..., Relay],
) -> None:
    relay = make_relay(replace(relay_settings(), token="tøken"))
    with client_for(relay) as client:
        assert client.get("/feed", headers={b"Authorization": "Bearer tøken".encode()}).is_success
        latin1 = client.get("/feed", headers={b"Authorization": "Bearer tøken".encode("latin-1")})
        assert_401(latin1, "invalid_token")  # aiohttp decodes them to lone surrogates


def test_without_a_token_every_endpoint_is_open(tokenless: httpx.Client) -> None:
    for method, path in ROUTES:
        if path == "/debug/fault":
            continue  # absent without RELAY_FAULTS
        status = request(tokenless, method, path).status_code
        expected = {SOCKETS[path]} if path in SOCKETS else {200}
        if method == "POST":
            expected = {415} if path == "/audio" else {200, 400}  # /audio: {} is not audio
        assert status in expected, (method, path)


# -- the API key over HTTP ------------------------------------------------------------------


@pytest.mark.parametrize(
    "body", [{"openrouterApiKey": "sk-or-new"}, {"model": "a/b", "openrouterApiKey": ""}]
)
def test_the_api_key_cannot_be_changed_over_http_without_a_token(
    tokenless: httpx.Client, body: dict[str, Any]
) -> None:
    assert "RELAY_TOKEN" in refused_config_change(tokenless, body, 403)


def test_with_a_token_the_api_key_can_be_changed(secured: httpx.Client) -> None:
    answer = secured.post(
        "/agent/config", json={"openrouterApiKey": "sk-or-secret"}, headers=AUTHORIZED
    )
    assert answer.status_code == 200
    assert answer.json()["config"]["hasApiKey"] is True
    assert "sk-or-secret" not in answer.text


# -- CORS -----------------------------------------------------------------------------------


def cors_of(response: httpx.Response) -> dict[str, str]:
    return {k.lower(): v for k, v in response.headers.items() if k.lower().startswith("access")}


def test_an_allowed_origin_is_echoed_with_vary_on_every_answer(secured: httpx.Client) -> None:
    origin = {"Origin": APP}
    for response in (
        secured.get("/feed", headers={**origin, **AUTHORIZED}),
        secured.get("/feed", headers=origin),  # the 401, readable by the page
        secured.get("/health", headers=origin),
        secured.get("/nowhere", headers={**origin, **AUTHORIZED}),
    ):
        assert cors_of(response) == {"access-control-allow-origin": APP}, response
        assert response.headers["Vary"] == "Origin"
    no_origin = secured.get("/health")
    assert cors_of(no_origin) == {}
    assert no_origin.headers["Vary"] == "Origin"  # the answer depends on Origin


def test_a_stream_to_an_allowed_origin_carries_its_cors_headers(secured: httpx.Client) -> None:
    with secured.stream("GET", "/agent/stream", headers={"Origin": APP, **AUTHORIZED}) as stream:
        assert stream.status_code == 200
        assert stream.headers["Access-Control-Allow-Origin"] == APP
        assert stream.headers["Vary"] == "Origin"


def test_a_preflight_from_an_allowed_origin_lists_methods_headers_and_max_age(
    secured: httpx.Client,
) -> None:
    preflight = secured.options(
        "/feed", headers={"Origin": APP, "Access-Control-Request-Method": "POST"}
    )
    assert preflight.status_code == 204
    assert cors_of(preflight) == {
        "access-control-allow-origin": APP,
        "access-control-allow-methods": "GET, POST, OPTIONS",
        "access-control-allow-headers": "Content-Type, Authorization, Last-Event-ID",
        "access-control-max-age": "600",
    }
    other = secured.options("/feed", headers={"Origin": EVIL})
    assert other.status_code == 204
    assert cors_of(other) == {}


def test_another_origin_gets_no_cors_header_and_is_refused(
    secured: httpx.Client, tokenless: httpx.Client
) -> None:
    for client in (secured, tokenless):
        refused = client.post(
            "/feed",
            content=b'{"text": "posted by a web page"}',
            headers={"Origin": EVIL, "Content-Type": "text/plain", **AUTHORIZED},
        )
        assert refused.status_code == 403, refused.text
        assert "RELAY_CORS_ORIGINS" in refused.json()["error"]
        assert cors_of(refused) == {}
        assert client.get("/feed", headers=AUTHORIZED).json()["messages"] == []
        assert cors_of(client.get("/health", headers={"Origin": EVIL})) == {}


def test_the_relays_own_origin_needs_no_listing(tokenless: httpx.Client) -> None:
    own = str(tokenless.base_url).rstrip("/")
    answer = tokenless.post("/feed", json={"text": "same origin"}, headers={"Origin": own})
    assert answer.status_code == 200
    assert cors_of(answer) == {}


def test_a_wildcard_allows_every_origin_without_a_token(
    make_relay: Callable[..., Relay],
) -> None:
    relay = make_relay(replace(relay_settings(), cors_origins=("*",)))
    with client_for(relay) as client:
        answer = client.get("/feed", headers={"Origin": EVIL})
        assert answer.status_code == 200
        assert cors_of(answer) == {"access-control-allow-origin": "*"}
        assert "Vary" not in answer.headers
        preflight = client.options("/sense", headers={"Origin": EVIL})
        assert preflight.headers["Access-Control-Allow-Origin"] == "*"
        assert preflight.headers["Access-Control-Max-Age"] == "600"


def test_a_wildcard_is_never_sent_with_a_token(make_relay: Callable[..., Relay]) -> None:
    relay = make_relay(replace(relay_settings(), token=TOKEN, cors_origins=("*", APP)))
    with client_for(relay) as client:
        for headers in ({"Origin": EVIL}, {"Origin": EVIL, **AUTHORIZED}, {}, AUTHORIZED):
            for response in (
                client.get("/feed", headers=headers),
                client.get("/health", headers=headers),
                client.options("/feed", headers=headers),
            ):
                assert "*" not in cors_of(response).values(), (headers, response)
        allowed = client.get("/feed", headers={"Origin": APP, **AUTHORIZED})
        assert allowed.headers["Access-Control-Allow-Origin"] == APP


@pytest.mark.parametrize(
    ("listed", "sent"),
    [
        ("HTTP://App.Test:80", "http://app.test"),
        ("https://app.test:443/", "https://app.test"),
        ("http://app.test:8080", "http://app.test:8080"),
    ],
)
def test_listed_origins_match_as_browsers_send_them(listed: str, sent: str) -> None:
    access = Access("", (listed,))
    request = make_mocked_request("GET", "/feed", headers={"Origin": sent})
    assert access.cors(request) == {"Access-Control-Allow-Origin": sent, "Vary": "Origin"}
    assert access.cors(make_mocked_request("GET", "/", headers={"Origin": EVIL})) is None


def test_a_refused_origin_raises_forbidden_before_the_token_is_looked_at() -> None:
    access = Access(TOKEN, (APP,))
    request = make_mocked_request("GET", "/feed", headers={"Origin": EVIL})
    with pytest.raises(Forbidden):
        access.gate("GET", "/feed")(request, access.cors(request))


def test_a_wildcard_with_a_token_is_warned_at_start(logs: LogSink) -> None:
    warn_at_start("token", host="0.0.0.0", token=TOKEN, cors_origins=("*",))
    (warning,) = logs.named("relay.cors_wildcard_ignored")
    assert warning["level"] == "warning"
    warn_at_start("loopback", host="127.0.0.1", token="", cors_origins=("*",))
    assert len(logs.named("relay.cors_wildcard_ignored")) == 1


# -- where the relay may listen --------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.20", False),
        ("10.0.0.1", False),
        ("fe80::1%eth0", False),
        ("::ffff:192.168.1.20", False),
        ("127.1", False),  # loopback to inet_aton, but not a form we can prove
        ("my-laptop", False),
        ("localhost.example.com", False),
        ("app.localhost", False),
        ("", False),
    ],
)
def test_what_counts_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize(
    ("host", "token", "allow_insecure", "verdict"),
    [
        ("127.0.0.1", "", False, "loopback"),
        ("127.0.0.1", "t", True, "loopback"),
        ("localhost", "", True, "loopback"),
        ("0.0.0.0", "t", False, "token"),
        ("0.0.0.0", "t", True, "token"),
        ("0.0.0.0", "", True, "insecure"),
        ("0.0.0.0", "", False, "refused"),
        ("192.168.1.20", "", False, "refused"),
        ("my-laptop", "", False, "refused"),
    ],
)
def test_the_exposure_decision(host: str, token: str, allow_insecure: bool, verdict: str) -> None:
    assert exposure(host, token=token, allow_insecure=allow_insecure) == verdict


@pytest.mark.slow
def test_the_relay_refuses_to_listen_beyond_loopback_without_a_token(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "run.py", "--host", "0.0.0.0", "--port", str(free_port())],
        cwd=ROOT,
        env=relay_env(tmp_path / "data"),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""  # nothing started, nothing logged
    (line,) = done.stderr.splitlines()
    assert line.startswith("run.py: error: refusing to listen on 0.0.0.0 without RELAY_TOKEN")
    assert "RELAY_ALLOW_INSECURE=1" in line
    assert not (tmp_path / "data").exists()


@pytest.mark.slow
def test_allow_insecure_serves_and_warns_at_start(tmp_path: Path) -> None:
    # 127.1 is not a form is_loopback accepts, yet binds 127.0.0.1: the rule is exercised
    # end to end without exposing the test relay to the network.
    port = free_port()
    env = relay_env(tmp_path / "data", RELAY_ALLOW_INSECURE="1")
    proc = spawn_relay(port, env, "--host", "127.1")
    out, err = stopped_once_healthy(port, proc)
    assert proc.returncode == 0, err.decode()
    lines = [orjson.loads(line) for line in out.splitlines() if line.strip()]
    (insecure,) = [line for line in lines if line["event"] == "relay.insecure"]
    assert (insecure["level"], insecure["host"]) == ("warning", "127.1")
    events = [line["event"] for line in lines]
    assert events.index("relay.insecure") < events.index("relay.started")


def test_the_insecure_warning_is_logged_for_an_insecure_start_only(logs: LogSink) -> None:
    for verdict in ("loopback", "token", "insecure"):
        warn_at_start(verdict, host="0.0.0.0", token="", cors_origins=())
    (warning,) = logs.named("relay.insecure")
    assert (warning["level"], warning["host"]) == ("warning", "0.0.0.0")


def test_a_file_page_is_allowed_when_null_is_listed() -> None:
    access = Access("", ("null",))
    request = make_mocked_request("GET", "/feed", headers={"Origin": "null"})
    assert access.cors(request) == {"Access-Control-Allow-Origin": "null", "Vary": "Origin"}
    assert Access("", (APP,)).cors(request) is None  # refused unless listed


def test_health_without_the_token_hides_what_the_user_did(
    make_relay: Callable[..., Relay], fake_llm: Any, logs: LogSink
) -> None:
    settings = replace(relay_settings(fake_llm), token=TOKEN)
    relay = make_relay(settings)
    with client_for(relay) as client:
        body = {"type": "text", "ts": 1, "ocr": "def secret_plan():", "meta": {"app": "code"}}
        assert client.post("/sense", json=body, headers=AUTHORIZED).status_code == 200
        assert tick(relay, logs) == "ok"
        private = client.get("/health", headers=AUTHORIZED).json()["agent"]
        public = client.get("/health").json()["agent"]
    assert private["lastDigest"] == fake_llm.digest
    assert public["lastDigest"] is None
    assert public["totalCalls"] == private["totalCalls"] == 1


def test_health_without_the_token_hides_the_names_of_the_clients_counters(
    make_relay: Callable[..., Relay], fake_llm: Any
) -> None:
    """``/health.profiling.*.extra`` (the capture client's own counters, by name) is ``null``
    for callers without the token; the figures stay."""
    relay = make_relay(replace(relay_settings(fake_llm), token=TOKEN))
    report = {"rssMb": 80, "uptimeS": 60, "ts": 1, "extra": {"ocrErrors": 2}}
    with client_for(relay) as client:
        assert client.post("/profiling/sense", json=report, headers=AUTHORIZED).status_code == 200
        private = client.get("/health", headers=AUTHORIZED).json()["profiling"]["sense"]
        public = client.get("/health").json()["profiling"]["sense"]
    assert private["extra"] == {"ocrErrors": 2}
    assert public["extra"] is None
    assert (
        (public["rssMb"], public["uptimeS"]) == (private["rssMb"], private["uptimeS"]) == (80, 60)
    )


def test_the_health_stream_shows_a_query_token_what_it_shows_the_header(
    make_relay: Callable[..., Relay], fake_llm: Any
) -> None:
    """A browser's ``EventSource`` sends the token as ``?access_token=``: it is the token,
    and ``/health/stream`` shows it the full ``/health``, as it does ``Authorization``."""
    relay = make_relay(replace(relay_settings(fake_llm), token=TOKEN))
    report = {"rssMb": 80, "uptimeS": 60, "ts": 1, "extra": {"ocrErrors": 2}}
    with client_for(relay) as client:
        assert client.post("/profiling/sense", json=report, headers=AUTHORIZED).status_code == 200
        for path, headers in (
            ("/health/stream", AUTHORIZED),
            (f"/health/stream?access_token={TOKEN}", None),
        ):
            with sse(client, path, headers) as stream:
                first = stream.event()
            assert first["event"] == "health"
            assert orjson.loads(first["data"])["profiling"]["sense"]["extra"] == {"ocrErrors": 2}
        assert_401(request(client, "GET", "/health/stream?access_token=wrong"), "invalid_token")
