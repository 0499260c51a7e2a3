"""``GET /openapi.json`` stays true: the document is valid OpenAPI 3.1, it describes every
route and no other, every real answer of a relay matches it, and a fuzz of the requests it
describes finds no 5xx (bounded here; ``FUZZ_EXAMPLES=500`` runs a larger one)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import httpx
import orjson
import pytest
from aiohttp import web
from hypothesis import HealthCheck, settings
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate as validate_openapi
from prometheus_client.parser import text_string_to_metric_families
from schemathesis import Case

from actors.audio.core.wav import wav_bytes
from actors.core.bodies import CONFIG_BODY_LIMIT, FEED_BODY_LIMIT
from actors.kernel.base import RelayActor
from actors.tree import Relay
from tests.support.actor_calls import tick
from tests.support.observe import LogSink, wait_until
from tests.support.posts import RECORDED
from tests.support.relay import base_url, client_for, relay_settings
from tests.transport.api_fuzz import api_schema, call_and_check
from tests.transport.odd_requests import CORPUS, Sender, odd_cases
from tests.transport.openapi_contract import Contract, pointer
from tests.transport.overlay_client import OverlayClient, Status
from tests.transport.socket_fuzz import SocketFuzzer, socket_frames
from transport import http_transport
from transport.agent.fake_llm import FakeLLM
from transport.app import build_app
from transport.audio.handler import AUDIO_BODY_LIMIT
from transport.demo.fake_stt import FakeStt
from transport.openapi import openapi_document
from transport.shell.auth import PAGE_ROUTES
from transport.shell.openapi_schemas import SSE
from transport.shell.state import ROUTES

TOKEN = "s3cret"
TRANSCRIPT = "[PERIODIC] (normal)\n[2s ago, openrouter] So the idle detection is wrong"


pytestmark = pytest.mark.usefixtures("quick_stream_checks")


@pytest.fixture
def contract() -> Contract:
    return Contract(openapi_document())


@pytest.fixture
def served_apps(monkeypatch: pytest.MonkeyPatch) -> list[web.Application]:
    """The aiohttp applications the relays of the test serve, as built."""
    apps: list[web.Application] = []

    def recording(*args: Any, **kwargs: Any) -> web.Application:
        app = build_app(*args, **kwargs)
        apps.append(app)
        return app

    monkeypatch.setattr(http_transport, "build_app", recording)
    return apps


class CheckedClient:
    """An httpx client whose every answer is checked against the document.

    Each answer's problems go to :attr:`problems`, and each (method, path, status) to
    :attr:`seen`. Requests carry the token unless ``auth=False``. A stream is read up to its
    first block and closed; :meth:`events` reads one's events.
    """

    def __init__(self, client: httpx.Client, contract: Contract) -> None:
        self.client = client
        self.contract = contract
        self.problems: list[str] = []
        self.seen: set[tuple[str, str, int]] = set()

    def request(
        self, method: str, path: str, *, auth: bool = True, **kwargs: Any
    ) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}))
        if auth:
            headers.setdefault("Authorization", f"Bearer {TOKEN}")
        request = self.client.build_request(method, path, headers=headers, **kwargs)
        response, problems = self.contract.exchange(self.client, request)
        self.seen.add((method.upper(), path, response.status_code))
        self.problems += problems
        return response

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def _check(self, method: str, path: str, response: httpx.Response, body: bytes) -> None:
        self.seen.add((method.upper(), path, response.status_code))
        self.problems.extend(
            self.contract.check(method, path, response.status_code, response.headers, body)
        )

    @contextlib.contextmanager
    def events(self, path: str, **kwargs: Any) -> Iterator[Callable[[], dict[str, Any]]]:
        """An open stream; yields a function that returns its next event (``event``,
        ``id``, ``data``), whose data it has checked against the document's ``x-events``."""
        headers = {"Authorization": f"Bearer {TOKEN}", **kwargs.pop("headers", {})}
        with self.client.stream("GET", path, headers=headers, **kwargs) as response:
            self._check("GET", path, response, b"")
            assert response.status_code == 200, response.read()
            lines = response.iter_lines()
            x_events = self.contract.at(
                pointer("paths", path, "get", "responses", "200", "content", SSE, "x-events")
            )

            def next_event() -> dict[str, Any]:
                block: dict[str, Any] = {}
                for line in lines:
                    if not line:
                        if "event" in block:
                            break
                        block = {}
                        continue
                    name, _, value = line.partition(":")
                    block[name] = value.removeprefix(" ")
                data = orjson.loads(block["data"])
                schema = x_events[block["event"]]["$ref"].removeprefix("#")
                self.problems.extend(
                    f"{path} {block['event']} event: {e.message}"
                    for e in self.contract.validator(schema).iter_errors(data)
                )
                return {**block, "data": data}

            yield next_event

    @contextlib.contextmanager
    def socket(self, path: str, **kwargs: Any) -> Iterator[OverlayClient]:
        """An open overlay socket, its answer recorded; each message it reads is checked
        against the document's ``x-messages``."""
        url = httpx.URL(str(self.client.base_url))
        headers = {"Authorization": f"Bearer {TOKEN}", **kwargs.pop("headers", {})}
        ws = OverlayClient(url.host, url.port or 80, path, headers=headers, **kwargs)
        try:
            status = 101 if ws.refusal is None else ws.refusal.status
            self.seen.add(("GET", path, status))
            assert ws.refusal is None, ws.refusal
            x_messages = self.contract.at(
                pointer("paths", path, "get", "responses", "101", "x-messages", "relayToOverlay")
            )
            message = ws.message

            def checked() -> str:
                text = message()
                data = orjson.loads(text)
                schema = x_messages[data["type"]]["$ref"].removeprefix("#")
                self.problems.extend(
                    f"{path} {data['type']} message: {e.message}"
                    for e in self.contract.validator(schema).iter_errors(data)
                )
                return text

            ws.message = checked  # type: ignore[method-assign]
            yield ws
        finally:
            ws.close()


# -- the document -----------------------------------------------------------------------------


def test_the_document_is_valid_openapi_3_1_with_valid_2020_12_schemas(
    contract: Contract,
) -> None:
    document = openapi_document()
    validate_openapi(document)
    assert document["openapi"].startswith("3.1")
    for schema in document["components"]["schemas"].values():
        Draft202012Validator.check_schema(schema)
    ids = [op.spec["operationId"] for op in contract.operations()]
    assert len(ids) == len(set(ids))
    assert json.loads(orjson.dumps(document)) == document  # plain JSON, nothing lost
    assert openapi_document() is not openapi_document()  # callers get their own copy


PUBLIC_NAMES = {
    "AgentConfig",
    "AgentEntry",
    "ClientFigures",
    "ContextWindow",
    "FeedInput",
    "FeedItem",
    "ProcessReport",
    "ScreenLine",
    "SenseEvent",
    "SenseInput",
}
"""Component names that clients may know, whose structs stand beside a record or setting of
the same meaning under another name: the wire struct keeps the public name."""


def test_the_component_names_of_the_wire_structs_stay_as_published() -> None:
    schemas = openapi_document()["components"]["schemas"]
    assert set(schemas) >= PUBLIC_NAMES


def test_the_capture_clients_events_are_valid_sense_input(contract: Contract) -> None:
    sense_input = pointer("components", "schemas", "SenseInput")
    events = orjson.loads(RECORDED.read_bytes())
    assert events
    for event in events:
        assert not list(contract.validator(sense_input).iter_errors(event))


def test_every_route_is_described_and_every_described_path_is_a_route(
    make_relay: Callable[..., Relay], served_apps: list[web.Application], contract: Contract
) -> None:
    make_relay(replace(relay_settings(), faults=True))
    routes = served_apps[-1][ROUTES]
    served = {(m.lower(), path) for path, methods in routes.items() for m in methods}
    served -= {("head", path) for path in routes}  # aiohttp adds HEAD to each GET
    described = {(op.method, op.path) for op in contract.operations()}
    assert served - described == set(), "routes missing from transport/openapi.py"
    assert described - served == set(), "described in transport/openapi.py, not served"


# -- real answers ---------------------------------------------------------------------------


@pytest.mark.slow
def test_every_answer_of_a_real_relay_matches_the_document(
    make_relay: Callable[..., Relay],
    fake_llm: FakeLLM,
    fake_stt: FakeStt,
    logs: LogSink,
    contract: Contract,
) -> None:
    settings = replace(
        relay_settings(fake_llm, fake_stt),
        token=TOKEN,
        faults=True,
        max_streams=2,
        exclude_apps=("1Password",),
    )
    relay = make_relay(settings)
    with client_for(relay) as client:
        api = CheckedClient(client, contract)
        _exercise(api, relay, logs)
        for op in contract.operations():  # without the token: 401 where the document says
            body = b"{}" if "requestBody" in op.spec else None
            answer = api.request(op.method.upper(), op.path, auth=False, content=body)
            security = op.spec.get("security", contract.document["security"])
            secured = security != [] and {} not in security  # {}: the token is optional
            assert (answer.status_code == 401) == secured, (op.method, op.path, answer)
    assert not api.problems, "\n".join(api.problems)
    answered = {(m, p) for m, p, status in api.seen if 200 <= status < 300 or status == 101}
    described = {(op.method.upper(), op.path) for op in contract.operations()}
    assert described - answered == set(), "operations never answered with a 2xx"


def _exercise(api: CheckedClient, relay: Relay, logs: LogSink) -> None:
    """Every operation, with good and bad input, before and after the first ticks."""
    assert api.get("/openapi.json").json() == openapi_document()
    for path in ("/agent/digest", "/agent/last", "/agent/history", "/agent/context"):
        assert api.get(path).status_code == 200

    assert api.post("/feed", json={"text": "hello", "priority": "high"}).status_code == 200
    assert api.post("/feed", json={"text": TRANSCRIPT}).status_code == 200
    assert api.post("/feed", content=b"{").status_code == 400
    assert api.post("/feed", content=b"x" * (FEED_BODY_LIMIT + 1)).status_code == 413
    assert api.get("/feed", params={"after": 1}).status_code == 200
    assert api.get("/feed", params={"after": "x"}).status_code == 400

    wav = {"Content-Type": "audio/wav"}
    assert api.post("/audio", content=wav_bytes(bytes(16_000)), headers=wav).status_code == 200
    assert api.post("/audio", content=b"RIFF", headers=wav).status_code == 400
    assert (
        api.post("/audio", content=b"x", headers={"Content-Type": "text/plain"}).status_code == 415
    )
    assert api.post("/audio", content=b"x" * (AUDIO_BODY_LIMIT + 1), headers=wav).status_code == 413

    for event in orjson.loads(RECORDED.read_bytes()):
        assert api.post("/sense", json=event).status_code == 200
    private = {"type": "text", "ts": 1, "ocr": "vault", "meta": {"app": "1Password"}}
    assert api.post("/sense", json=private).json() == {"ok": True, "dropped": "excluded"}
    assert api.post("/sense", json={"type": "text"}).status_code == 400
    assert api.post("/sense", content=b"[]").status_code == 400
    assert api.post("/sense", content=b" " * (2 * 1024 * 1024 + 1)).status_code == 413
    assert api.get("/sense").status_code == 200
    assert api.get("/sense", params={"after": 1, "meta_only": "true"}).status_code == 200
    assert api.get("/agent/context").json()["context"]["screenCount"] > 0

    assert api.get("/privacy").json()["excludeApps"] == ["1Password"]
    assert api.post("/privacy", json={"pauseMinutes": 1}).json()["paused"] is True
    assert api.post("/sense", json=private).json() == {"ok": True, "dropped": "paused"}
    assert api.post("/feed", json={"text": "hello"}).json() == {"ok": True, "dropped": "paused"}
    assert api.post("/privacy", json={"excludeTitles": [r"\b"]}).status_code == 400
    assert api.post("/privacy", json={"paused": False}).json()["paused"] is False

    rich = api.post("/agent/config", json={"escalationMode": "rich"}).json()["config"]
    assert rich["escalationMode"] == "rich"
    assert api.get("/escalation/pending", params={"wait": 0.05}).json()["escalation"] is None
    assert tick(relay, logs) == "ok"
    assert api.get("/export").status_code == 200
    assert api.get("/export", params={"since": 5, "until": 1}).status_code == 400
    assert api.post("/privacy/forget", json={"since": 0, "until": 1}).status_code == 200
    assert api.post("/privacy/forget", json={"since": 1}).status_code == 400
    api.post("/sense", json={"type": "text", "ts": 2, "ocr": "pytest -x", "meta": {"app": "Code"}})
    assert tick(relay, logs) == "ok"

    pending = api.get("/escalation/pending").json()["escalation"]
    assert pending is not None
    assert api.get("/escalation/pending", params={"wait": 1}).json()["escalation"] == pending
    assert api.get("/escalation/pending", params={"wait": 61}).status_code == 400
    assert api.post("/escalation/respond", json={"id": "x", "response": "y"}).json()["ok"] is False
    assert api.post("/escalation/respond", json={"id": pending["id"]}).status_code == 400
    assert api.post("/escalation/respond", content=b"{").status_code == 400
    reply = {"id": pending["id"], "response": "Run it with -x to stop at the first failure."}
    assert api.post("/escalation/respond", json=reply).json() == {"ok": True}

    latest = api.get("/agent/digest").json()["digest"]["id"]
    assert api.get("/agent/digest", params={"wait": 5, "after": 0}).json()["digest"]
    assert api.get("/agent/digest", params={"wait": 0.05, "after": latest}).status_code == 200
    assert api.get("/agent/digest", params={"wait": 61}).status_code == 400
    assert api.get("/agent/digest", params={"wait": 1, "after": "x"}).status_code == 400
    assert api.get("/agent/last").json()["result"]["id"] == latest
    assert len(api.get("/agent/history", params={"limit": 1}).json()["results"]) == 1
    page = api.get("/agent/history", params={"since": 0, "limit": 1}).json()
    assert page["next"] is not None
    assert api.get("/agent/history", params={"before": page["next"]}).status_code == 200
    assert api.get("/agent/history", params={"limit": 0}).status_code == 400
    beyond_64_bits = {"since": -(10**30), "until": 10**30, "before": 10**30}
    assert len(api.get("/agent/history", params=beyond_64_bits).json()["results"]) == 2
    assert api.get("/agent/history", params={"since": 5, "until": 1}).status_code == 400
    assert len(api.get("/agent/history", params={"q": "vs code"}).json()["results"]) == 2
    assert api.get("/agent/history", params={"q": '"*('}).status_code == 400

    assert api.get("/agent/config").status_code == 200
    assert api.post("/agent/config", json={"fallbackModels": ["x/y"]}).status_code == 200
    assert api.post("/agent/config", json={"temperature": 9}).status_code == 400
    assert api.post("/agent/config", json={"enabled": False}, auth=False).status_code == 401
    big = b"{" + b" " * CONFIG_BODY_LIMIT + b"}"
    assert api.post("/agent/config", content=big).status_code == 413

    with (
        api.events("/feed/stream", params={"after": 0}) as feed_events,
        api.events("/agent/stream", headers={"Last-Event-ID": "0"}) as agent_events,
    ):
        assert feed_events()["event"] == "feed"
        assert agent_events()["event"] == "agent"
        assert api.get("/feed/stream").status_code == 503  # max_streams=2
    wait_until(lambda: api.get("/health").json()["streams"]["feed"] == 0, what="slot freed")
    assert api.get("/agent/stream", headers={"Last-Event-ID": "x"}).status_code == 400
    assert api.get("/feed/stream", params={"after": 10**6}).status_code == 200
    by_query = {"access_token": TOKEN}  # streamToken: for an EventSource, which sets no headers
    assert api.get("/agent/stream", params=by_query, auth=False).status_code == 200

    profile = {"rssMb": 200.5, "uptimeS": 60, "ts": 1769901260000, "extra": {"eventsSent": 3}}
    assert api.post("/profiling/sense", json=profile).status_code == 200
    assert api.post("/profiling/sense", json={**profile, "rssMb": "x"}).status_code == 400
    assert api.get("/health").json()["profiling"]["sense"]["rssMb"] == 200.5

    assert api.post("/debug/fault", json={"actor": "nobody", "kind": "crash"}).status_code == 400
    assert api.post("/debug/fault", json={"actor": "context", "kind": "crash"}).status_code == 200
    wait_until(lambda: api.get("/agent/context").status_code == 200, what="context back")

    assert api.post("/overlay/command", params={"action": "toggle_screen"}).status_code == 200
    assert api.post("/overlay/command", params={"action": "reboot"}).status_code == 400
    for _, path in sorted(PAGE_ROUTES):
        assert api.get(path, auth=False).status_code == 200

    metrics = api.get("/metrics")
    assert metrics.status_code == 200
    assert list(text_string_to_metric_families(metrics.text))  # the Prometheus text format

    def open_streams() -> int:
        streams = api.get("/health").json()["streams"]
        return int(streams["feed"] + streams["agent"] + streams["overlay"] + streams["health"])

    wait_until(lambda: open_streams() == 0, what="the streams' slots freed")  # max_streams=2
    with api.events("/health/stream", params={"after": 0}) as health_events:
        assert health_events()["event"] == "health"
    for path in ("/", "/ws"):
        # the slot of the stream closed just before is freed when the relay sees it close
        wait_until(lambda: open_streams() == 0, what="the streams' slots freed")
        stored = len(api.get("/feed").json()["messages"])
        with api.socket(path) as ws:
            assert isinstance(ws.read(), Status)
            feed = [ws.feed() for _ in range(min(stored, 20))]
            ws.send({"type": "profiling", "rssMb": 150, "uptimeS": 30, "ts": 1769901230000})
            ws.send({"type": "command", "action": "toggle_audio"})
            assert "capture" in ws.feed().text
            ws.send({"type": "message", "text": f"typed at {path}"})
            assert ws.feed().text == f"typed at {path}"
        assert len(feed) == min(stored, 20)
    assert api.get("/health").json()["profiling"]["overlay"]["rssMb"] == 150
    assert api.get("/ws").status_code == 426
    assert api.get("/").status_code == 200
    upgrade = {"Upgrade": "websocket", "Connection": "Upgrade"}
    assert api.get("/ws", headers=upgrade).status_code == 400  # no Sec-WebSocket-Key

    assert api.get("/nowhere").status_code == 404
    assert api.request("DELETE", "/feed").status_code == 405
    assert api.request("PUT", "/health").status_code == 405
    for path, item in api.contract.paths.items():
        assert api.request("OPTIONS", path, auth=False).status_code == 204
        if "get" in item and "stream" not in path and "101" not in item["get"]["responses"]:
            assert api.request("HEAD", path).status_code == 200

    # Each request below waits 1 s for the feed.
    relay.handles["feed"].tell(RelayActor.inject_fault, "hang", 2.5)
    assert api.post("/feed", json={"text": "during the hang"}).status_code == 503
    assert api.get("/health").status_code == 503
    wait_until(lambda: api.get("/health").status_code == 200, what="the hang to end")
    assert api.get("/health").json()["ok"] is True


# -- the fuzz -------------------------------------------------------------------------------

SCHEMA = api_schema(TOKEN)


@pytest.fixture
def fuzzed_relay(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, fake_stt: FakeStt, logs: LogSink
) -> Relay:
    """A relay with a token, a feed item, a screen and an entry (so the agent's reads show
    one); streams are not limited, as a fuzz opens more at once than a user would."""
    settings = replace(relay_settings(fake_llm, fake_stt), token=TOKEN, max_streams=10_000)
    relay = make_relay(settings)
    with client_for(relay) as client:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        client.post("/sense", json={"type": "text", "ts": 1, "ocr": "x"}, headers=headers)
        client.post("/feed", json={"text": TRANSCRIPT}, headers=headers)
    assert tick(relay, logs) == "ok"
    return relay


@SCHEMA.parametrize()  # type: ignore[untyped-decorator]  # Schemathesis types it Callable
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_generated_requests_get_no_5xx_and_only_documented_answers(
    case: Case[Any], fuzzed_relay: Relay
) -> None:
    call_and_check(case, base_url(fuzzed_relay))


@pytest.mark.slow
def test_odd_requests_get_their_status_and_what_is_refused_changes_nothing(
    fuzzed_relay: Relay, contract: Contract
) -> None:
    url = httpx.URL(base_url(fuzzed_relay))
    with client_for(fuzzed_relay, timeout=10) as client:
        sender = Sender(client, contract, TOKEN)
        for case in odd_cases(contract, TOKEN):
            sender.send(case)
        for raw in CORPUS["raw"]:
            sender.send_raw(url.host, url.port or 80, raw)
        with contextlib.closing(SocketFuzzer(sender, url.host, url.port or 80)) as sockets:
            for frame in socket_frames(contract):
                sockets.send(frame)
        assert sender.problems == [], "\n".join(sender.problems[:20])
        assert sender.server_side_5xx() == 0  # clients that left before an answer included
