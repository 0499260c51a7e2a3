"""The HTTP API on the real server, on a free loopback port."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from actors.agent.ticker import Ticker
from actors.kernel.base import ChildHandle, RelayActor
from actors.kernel.clock import FakeClock
from actors.tree import Relay
from tests.support.observe import LogSink, wait_until
from tests.support.relay import assert_error, client_for, refused_config_change, relay_settings
from transport.agent.fake_llm import FakeLLM


@pytest.fixture
def relay(make_relay: Callable[..., Relay]) -> Relay:
    """The agent off (no key): the API alone; ``client`` talks to this relay."""
    return make_relay()


def feed_ids(client: httpx.Client) -> list[int]:
    return [m["id"] for m in client.get("/feed").json()["messages"]]


# -- /feed ----------------------------------------------------------------------------------


def test_post_feed_stores_and_get_feed_returns_items_after_an_id(client: httpx.Client) -> None:
    first = client.post("/feed", json={"text": "hello", "priority": "high"})
    assert first.status_code == 200
    assert first.json() == {"ok": True, "id": 1}
    assert client.post("/feed", json={"text": "world"}).json()["id"] == 2

    messages = client.get("/feed").json()["messages"]
    assert [(m["id"], m["text"], m["priority"]) for m in messages] == [
        (1, "hello", "high"),
        (2, "world", "normal"),
    ]
    assert all(isinstance(m["ts"], int) and "source" not in m for m in messages)
    assert [m["id"] for m in client.get("/feed", params={"after": 1}).json()["messages"]] == [2]
    assert client.get("/feed", params={"after": 2}).json()["messages"] == []


def test_feed_ring_keeps_the_newest_100(client: httpx.Client) -> None:
    for n in range(105):
        assert client.post("/feed", json={"text": f"m{n}"}).status_code == 200
    assert feed_ids(client) == list(range(6, 106))


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"", "empty"),
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "JSON object"),
        (b'"text"', "JSON object"),
        (b'{"priority": "high"}', "text is required"),
        (b'{"text": 42}', "text must be a string"),
        (b'{"text": "   "}', "text must be a string that is not blank"),
        (b'{"text": "x", "priority": 5}', "priority"),
        (b'{"text": "\xff\xfe bad"}', "UTF-8"),
        (b'{"text": "\\ud800"}', "not valid JSON"),
        # in a field the relay ignores, too: the whole body is JSON, or it is refused
        (b'{"text": "ok", "note": "\xff\xfe bad"}', "UTF-8"),
        (b'{"text": "ok", "note": "\\ud800"}', "not valid JSON"),
        (b'{"text": "ok"} trailing', "not valid JSON"),
    ],
)
def test_bad_feed_bodies_get_a_400_and_change_nothing(
    client: httpx.Client, body: bytes, fragment: str
) -> None:
    client.post("/feed", json={"text": "kept"})
    assert_error(client.post("/feed", content=body), 400, fragment)
    assert feed_ids(client) == [1]
    assert client.get("/health").json()["ok"] is True


def test_feed_body_over_the_limit_is_a_413_declared_or_chunked(client: httpx.Client) -> None:
    big = orjson.dumps({"text": "x" * (300 * 1024)})
    assert_error(client.post("/feed", content=big), 413, "larger than")

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(big), 8192):
            yield big[i : i + 8192]

    assert_error(client.post("/feed", content=chunks()), 413, "larger than")
    assert client.post("/feed", json={"text": "still fine"}).json() == {"ok": True, "id": 1}


def test_multibyte_utf8_arrives_intact_whatever_the_chunking(client: httpx.Client) -> None:
    text = "Привет 👋 日本語 — ok"
    body = orjson.dumps({"text": text})

    def one_byte_chunks() -> Iterator[bytes]:
        for i in range(len(body)):
            yield body[i : i + 1]

    assert client.post("/feed", content=one_byte_chunks()).status_code == 200
    assert client.get("/feed").json()["messages"][0]["text"] == text


def test_bad_after_parameter_is_a_400(client: httpx.Client) -> None:
    assert_error(client.get("/feed", params={"after": "abc"}), 400, "after must be a whole number")
    assert_error(client.get("/sense", params={"after": "1.5"}), 400, "after")


# -- /sense ---------------------------------------------------------------------------------


def sense_body(**extra: Any) -> dict[str, Any]:
    return {"type": "text", "ts": 1769901200000, "ocr": "hello", "meta": {"app": "code"}, **extra}


def test_post_sense_stores_the_event_with_id_and_received_at(client: httpx.Client) -> None:
    body = sense_body(id=999, receivedAt=5, roi={"x": 1, "data": "AAAA"}, extra={"k": [1]})
    answer = client.post("/sense", json=body)
    assert answer.json() == {"ok": True, "id": 1}

    (event,) = client.get("/sense").json()["events"]
    assert event["id"] == 1
    assert isinstance(event["receivedAt"], int) and event["receivedAt"] != 5
    assert event["roi"] == {"x": 1, "data": "AAAA"}
    assert event["extra"] == {"k": [1]}
    assert {k: event[k] for k in ("type", "ts", "ocr", "meta")} == {
        k: body[k] for k in ("type", "ts", "ocr", "meta")
    }


def test_meta_only_strips_roi_and_diff_data(client: httpx.Client) -> None:
    client.post("/sense", json=sense_body(roi={"x": 1, "data": "A"}, diff={"n": 2, "data": "B"}))
    (event,) = client.get("/sense", params={"meta_only": "true"}).json()["events"]
    assert event["roi"] == {"x": 1}
    assert event["diff"] == {"n": 2}
    (full,) = client.get("/sense").json()["events"]
    assert full["roi"]["data"] == "A"


def test_sense_ring_keeps_the_newest_30_and_after_filters(client: httpx.Client) -> None:
    for n in range(35):
        client.post("/sense", json=sense_body(ocr=f"s{n}"))
    events = client.get("/sense").json()["events"]
    assert [e["id"] for e in events] == list(range(6, 36))
    assert [e["id"] for e in client.get("/sense?after=33").json()["events"]] == [34, 35]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"ts": 1}, "type is required"),
        ({"type": "text"}, "ts is required"),
        ({"type": 3, "ts": 1}, "type must be"),
        ({"type": "text", "ts": "now"}, "ts must be a number"),
        ({"type": "text", "ts": True}, "ts must be a number"),
        ({"type": "text", "ts": 1, "ocr": ["a"]}, "ocr must be a string"),
        ({"type": "text", "ts": 1, "meta": "idea"}, "meta must be an object"),
        ({"type": "text", "ts": 1, "meta": {"app": 7}}, "meta.app must be a string"),
        ({"type": "text", "ts": 1, "meta": {"ssim": "high"}}, "meta.ssim must be a number"),
        ({"type": "text", "ts": 1, "roi": "AAAA"}, "roi must be an object"),
        ({"type": "text", "ts": 1, "observation": {"facts": ["a", 2]}}, "observation.facts[1]"),
    ],
)
def test_bad_sense_bodies_get_a_400_and_change_nothing(
    client: httpx.Client, body: dict[str, Any], fragment: str
) -> None:
    assert_error(client.post("/sense", json=body), 400, fragment)
    assert client.get("/sense").json()["events"] == []


def test_sense_body_limit_is_2_mib(client: httpx.Client) -> None:
    limit = 2 * 1024 * 1024
    envelope = orjson.dumps(sense_body(ocr=""))
    fits = orjson.dumps(sense_body(ocr="x" * (limit - len(envelope))))
    assert len(fits) == limit
    assert client.post("/sense", content=fits).status_code == 200
    too_big = orjson.dumps(sense_body(ocr="x" * (limit - len(envelope) + 1)))
    assert_error(client.post("/sense", content=too_big), 413, "larger than")
    assert [e["id"] for e in client.get("/sense?meta_only=true").json()["events"]] == [1]


# -- /agent/* -------------------------------------------------------------------------------


def test_agent_reads_before_the_first_tick(client: httpx.Client) -> None:
    assert client.get("/agent/digest").json() == {"ok": True, "digest": None}
    assert client.get("/agent/last").json() == {"ok": True, "result": None}
    assert client.get("/agent/history").json()["results"] == []


def last_hud_is(client: httpx.Client, hud: str) -> bool:
    result = client.get("/agent/last").json()["result"]
    return result is not None and result["hud"] == hud


def run_ticks(
    relay: Relay,
    client: httpx.Client,
    fake_llm: FakeLLM,
    count: int,
    clock: FakeClock | None = None,
) -> None:
    """``count`` ticks, each on a new screen event, answered ``hud 0`` ... ``hud <count-1>``."""
    ticker: ChildHandle[Ticker] = relay.handles["ticker"]
    for n in range(count):
        fake_llm.hud = f"hud {n}"
        client.post("/sense", json=sense_body(ocr=f"screen {n}"))
        assert ticker.ask(Ticker.tick).result(timeout=5) == "started"
        wait_until(partial(last_hud_is, client, f"hud {n}"), what=f"tick {n}")
        if clock is not None:
            clock.advance(1)


def test_agent_endpoints_after_ticks(make_relay: Callable[..., Relay], fake_llm: FakeLLM) -> None:
    relay = make_relay(relay_settings(fake_llm))
    with client_for(relay) as client:
        run_ticks(relay, client, fake_llm, 12)

        history = client.get("/agent/history").json()["results"]
        assert [e["hud"] for e in history] == [f"hud {n}" for n in range(11, 1, -1)]
        assert len(client.get("/agent/history?limit=3").json()["results"]) == 3
        assert len(client.get("/agent/history?limit=500").json()["results"]) == 12
        assert_error(client.get("/agent/history?limit=0"), 400, "limit")
        assert_error(client.get("/agent/history?limit=x"), 400, "limit")

        last = client.get("/agent/last").json()["result"]
        assert set(last) >= {
            "id",
            "ts",
            "hud",
            "digest",
            "context",
            "pushed",
            "model",
            "latencyMs",
            "tokensIn",
            "tokensOut",
        }
        digest = client.get("/agent/digest").json()["digest"]
        assert set(digest) >= {"id", "ts", "digest", "currentApp", "appHistory", "latencyMs"}
        assert digest["id"] == last["id"] == 12

        health = client.get("/health").json()
        assert health["agent"]["totalCalls"] == 12
        assert health["agent"]["totalTokens"] == {"in": 12 * 310, "out": 12 * 85}
        # flash-lite's price in config/prices.json
        assert health["agent"]["estimatedCost"] == pytest.approx(
            12 * (310 * 0.10 + 85 * 0.40) / 1e6, abs=1e-6
        )
        assert health["agent"]["lastDigest"] == fake_llm.digest


def test_agent_context_shows_the_window(client: httpx.Client) -> None:
    client.post("/sense", json=sense_body(ocr="first", meta={"app": "code"}))
    client.post("/sense", json=sense_body(ocr="second", meta={"app": "google chrome"}))
    client.post("/feed", json={"text": "[PERIODIC]\n[1s ago, openrouter] hello there"})
    context = client.get("/agent/context").json()["context"]
    assert context["currentApp"] == "google chrome"
    assert [a["app"] for a in context["appHistory"]] == ["code", "google chrome"]
    assert [s["ocr"] for s in context["screen"]] == ["first", "second"]
    assert [a["text"] for a in context["audio"]] == ["hello there"]
    assert (context["audioCount"], context["screenCount"], context["windowMs"]) == (1, 2, 120000)


def test_agent_config_get_and_post(client: httpx.Client) -> None:
    config = client.get("/agent/config").json()["config"]
    assert config["hasApiKey"] is False
    assert "openrouterApiKey" not in config and "apiKey" not in config
    assert config["intervalMs"] == 3_600_000

    answer = client.post("/agent/config", json={"intervalMs": 1000, "maxAge": 500, "model": "x/y"})
    assert answer.status_code == 200
    new = answer.json()["config"]
    assert (new["intervalMs"], new["maxAgeMs"], new["model"], new["hasApiKey"]) == (
        5000,
        10000,
        "x/y",
        False,
    )
    assert client.get("/agent/config").json()["config"] == new
    # the key over HTTP (only with a token): tests/transport/shell/test_auth.py


def test_agent_config_says_which_values_it_clamped(client: httpx.Client) -> None:
    assert client.get("/agent/config").json()["clamped"] == []
    answer = client.post("/agent/config", json={"intervalMs": 1000, "debounceMs": 9000})
    assert answer.json()["clamped"] == [
        {"setting": "intervalMs", "given": 1000, "used": 5000},
        {"setting": "debounceMs", "given": 9000, "used": 5000},
    ]
    # the debounce stays capped at the interval: a later look says so too
    capped = [{"setting": "debounceMs", "given": 9000, "used": 5000}]
    assert client.get("/agent/config").json()["clamped"] == capped
    assert client.post("/agent/config", json={"debounceMs": 2000}).json()["clamped"] == []


@pytest.mark.parametrize(
    "body",
    [
        {"intervalMs": "fast"},
        {"enabled": "yes"},
        {"temperature": 9},
        {"model": ""},
        {"intervalMS": 6000},
        {"model": "ok/model", "maxTokens": -1},
    ],
)
def test_bad_agent_config_is_a_400_and_changes_nothing(
    client: httpx.Client, body: dict[str, Any]
) -> None:
    refused_config_change(client, body, 400)


def test_agent_config_needs_the_token_when_one_is_set(make_relay: Callable[..., Relay]) -> None:
    settings = relay_settings()
    relay = make_relay(replace(settings, token="s3cret"))
    with client_for(relay) as client:
        assert_error(client.post("/agent/config", json={"enabled": False}), 401, "Bearer")
        assert_error(
            client.post(
                "/agent/config", json={"enabled": False}, headers={"Authorization": "Bearer wrong"}
            ),
            401,
            "Bearer",
        )
        authorized = {"Authorization": "Bearer s3cret"}
        assert client.get("/agent/config", headers=authorized).json()["config"]["enabled"] is True
        ok = client.post("/agent/config", json={"enabled": False}, headers=authorized)
        assert ok.json()["config"]["enabled"] is False


# -- /health, CORS, errors ------------------------------------------------------------------


def test_health_reports_counts_agent_and_actors(client: httpx.Client) -> None:
    client.post("/feed", json={"text": "a"})
    client.post("/sense", json=sense_body())
    health = client.get("/health").json()
    assert health["ok"] is True
    assert (health["messages"], health["senseEvents"]) == (1, 1)
    agent = health["agent"]
    for key in (
        "enabled",
        "lastAnalysis",
        "lastDigest",
        "totalCalls",
        "totalTokens",
        "estimatedCost",
        "model",
        "idleSkips",
        "unchangedSkips",
        "parseSuccessRate",
        "contextFreshnessMedianMs",
        "debounceMs",
        "cooldownMs",
        "pending",
        "nextTickInMs",
    ):
        assert key in agent
    assert set(health["actors"]) == {
        "privacy",
        "feed",
        "sense",
        "digest",
        "context",
        "llm",
        "ticker",
        "agent",
        "stt",
        "audio",
        "http",
    }
    assert all(a["alive"] and a["restarts"] == 0 for a in health["actors"].values())


def test_no_cors_headers_by_default(client: httpx.Client) -> None:
    # RELAY_CORS_ORIGINS unset: no origin besides the relay's own (the rest: test_auth.py)
    preflight = client.options(
        "/sense", headers={"Origin": "http://x", "Access-Control-Request-Method": "POST"}
    )
    assert preflight.status_code == 204
    assert "Access-Control-Allow-Origin" not in preflight.headers
    assert "Access-Control-Allow-Methods" not in preflight.headers
    for path in ("/health", "/feed", "/nowhere"):
        assert not any(h.lower().startswith("access-control-") for h in client.get(path).headers)


def test_unknown_paths_and_methods_get_json_errors(client: httpx.Client) -> None:
    assert_error(client.get("/nowhere"), 404, "not found")
    assert_error(client.post("/agent/nowhere", json={}), 404, "not found")
    refused = client.delete("/feed")
    assert_error(refused, 405, "method not allowed")
    assert set(refused.headers["Allow"].split(",")) == {"GET", "HEAD", "OPTIONS", "POST"}
    assert_error(client.post("/health"), 405, "method not allowed")
    assert client.options("/nowhere").status_code == 204  # a preflight is answered anywhere
    assert client.head("/feed").status_code == 200


# -- actors behind the transport ------------------------------------------------------------


@pytest.mark.slow
def test_an_actor_that_does_not_answer_gives_a_503_then_service_resumes(
    relay: Relay, client: httpx.Client
) -> None:
    relay.handles["feed"].tell(RelayActor.inject_fault, "hang", 3.0)
    assert_error(client.post("/feed", json={"text": "during the hang"}), 503, "feed")
    health = client.get("/health")
    assert health.status_code == 503
    assert health.json()["actors"]["feed"]["alive"] is True
    assert client.post("/sense", json=sense_body()).status_code == 200  # others unaffected
    wait_until(lambda: client.get("/health").status_code == 200, what="the hang to end")
    assert client.post("/feed", json={"text": "after"}).status_code == 200


@pytest.mark.slow
def test_reads_serve_what_was_committed_while_a_buffer_hangs_or_restarts(
    relay: Relay, client: httpx.Client
) -> None:
    assert client.post("/feed", json={"text": "kept"}).status_code == 200
    assert client.post("/sense", json=sense_body()).status_code == 200
    relay.handles["feed"].tell(RelayActor.inject_fault, "hang", 3.0)
    assert_error(client.post("/feed", json={"text": "refused"}), 503, "feed")
    page = client.get("/feed")
    assert page.status_code == 200
    assert [m["text"] for m in page.json()["messages"]] == ["kept"]
    wait_until(lambda: client.get("/health").status_code == 200, what="the hang to end")
    assert [m["text"] for m in client.get("/feed").json()["messages"]] == ["kept"]

    relay.handles["sense"].tell(RelayActor.inject_fault, "crash")
    assert len(client.get("/sense").json()["events"]) == 1  # before, during or after the restart
    wait_until(
        lambda: client.get("/health").json()["actors"]["sense"]["restarts"] == 1,
        what="sense restart",
    )
    posted = client.post("/sense", json=sense_body()).json()["id"]
    assert [e["id"] for e in client.get("/sense").json()["events"]][-1] == posted


def test_a_crashed_buffer_is_restarted_and_health_counts_it(
    relay: Relay, client: httpx.Client
) -> None:
    relay.handles["sense"].tell(RelayActor.inject_fault, "crash")
    wait_until(
        lambda: client.get("/health").json()["actors"]["sense"]["restarts"] == 1,
        what="sense restart",
    )
    actors = client.get("/health").json()["actors"]
    assert actors["sense"]["alive"] is True
    assert isinstance(actors["sense"]["lastRestart"], int)
    assert client.post("/sense", json=sense_body()).json()["ok"] is True


def test_a_crashed_transport_rebinds_its_port(
    make_relay: Callable[..., Relay],
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = replace(relay_settings(), port=port)
    relay = make_relay(settings)
    relay.handles["http"].tell(RelayActor.inject_fault, "crash")
    wait_until(
        lambda: relay.handles["http"].restarts == 1 and relay.handles["http"].alive,
        what="http restart",
    )
    answer = wait_until(lambda: _try_get(f"http://127.0.0.1:{port}/health"), what="serving again")
    assert answer.json()["actors"]["http"]["restarts"] == 1


def _try_get(url: str) -> httpx.Response | None:
    try:
        return httpx.get(url, timeout=1)
    except httpx.HTTPError:
        return None


def test_ingestion_answers_promptly_while_the_llm_hangs(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM
) -> None:
    relay = make_relay(relay_settings(fake_llm, timeout_ms=60_000))
    fake_llm.mode = "hang"
    # A 2 s client timeout: a request that waited on the hung LLM would fail, not pass slowly.
    with client_for(relay, timeout=2) as client:
        client.post("/sense", json=sense_body())
        assert relay.handles["ticker"].ask(Ticker.tick).result(timeout=5) == "started"
        wait_until(lambda: fake_llm.calls == 1, what="the LLM request to hang")
        for n in range(50):
            assert client.post("/feed", json={"text": f"m{n}"}).status_code == 200
            assert client.post("/sense", json=sense_body(ocr=f"o{n}")).status_code == 200
        assert client.get("/health").json()["agent"]["inFlight"] is True
        assert len(client.get("/feed").json()["messages"]) == 50
        assert client.get("/agent/digest").json() == {"ok": True, "digest": None}


def test_requests_from_many_threads_all_land(client: httpx.Client) -> None:
    errors: list[Any] = []

    def post(n: int) -> None:
        try:
            r = client.post("/feed", json={"text": f"t{n}"})
            if r.status_code != 200:
                errors.append(r.text)
        except httpx.HTTPError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=post, args=(n,)) for n in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert errors == []
    assert sorted(feed_ids(client)) == list(range(1, 41))


# -- durable state over HTTP ----------------------------------------------------------------


def test_list_responses_and_health_carry_the_same_epoch(relay: Relay, client: httpx.Client) -> None:
    epoch = relay.storage.epoch
    assert client.get("/feed").json()["epoch"] == epoch
    assert client.get("/sense").json()["epoch"] == epoch
    assert client.get("/agent/history").json()["epoch"] == epoch
    health = client.get("/health").json()
    assert health["epoch"] == epoch
    assert health["storage"]["epoch"] == epoch
    assert health["storage"]["path"] == ":memory:"
    assert health["storage"]["recovered"] is False


@pytest.mark.slow
def test_history_by_time_range_pages_through_the_retention(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, clock: FakeClock
) -> None:
    relay = make_relay(relay_settings(fake_llm))
    with client_for(relay) as client:
        run_ticks(relay, client, fake_llm, 60, clock)

        seen: list[str] = []
        params: dict[str, Any] = {"since": 0, "limit": 25}
        for _ in range(5):
            page = client.get("/agent/history", params=params).json()
            seen += [e["hud"] for e in page["results"]]
            if page["next"] is None:
                break
            params["before"] = page["next"]
        assert seen == [f"hud {n}" for n in range(59, -1, -1)]  # beyond the ring of 50
        assert len(client.get("/agent/history?limit=500").json()["results"]) == 50

        last_ts = client.get("/agent/last").json()["result"]["ts"]
        newest = client.get("/agent/history", params={"since": last_ts}).json()["results"]
        assert [e["hud"] for e in newest] == ["hud 59"]
        empty = client.get("/agent/history", params={"until": 0}).json()
        assert (empty["results"], empty["next"]) == ([], None)
        assert_error(client.get("/agent/history?since=5&until=1"), 400, "until")
        assert_error(client.get("/agent/history?since=yesterday"), 400, "since")


# -- fault drills ---------------------------------------------------------------------------


@pytest.fixture
def drill(make_relay: Callable[..., Relay]) -> Iterator[tuple[Relay, httpx.Client]]:
    relay = make_relay(replace(relay_settings(), faults=True))
    with client_for(relay, timeout=10) as client:
        yield relay, client


def test_the_fault_endpoint_is_absent_unless_enabled(client: httpx.Client) -> None:
    assert_error(client.post("/debug/fault", json={"actor": "feed", "kind": "crash"}), 404, "")


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"actor": "root", "kind": "crash"}, "actor must be one of"),
        ({"actor": "feed", "kind": "explode"}, "kind must be one of"),
        ({"actor": "feed", "kind": "hang"}, "seconds"),
        ({"actor": "feed", "kind": "hang", "seconds": -1}, "seconds"),
        ({"actor": "feed", "kind": "hang", "seconds": "5"}, "seconds"),
        # seconds is a number whatever the kind: the document says so, and a crash drill
        # with a word for seconds must not be a 500
        ({"actor": "feed", "kind": "crash", "seconds": "soon"}, "seconds"),
        ({"actor": "feed", "kind": "crash", "seconds": None}, "seconds"),
    ],
)
def test_bad_fault_requests_are_400s(
    drill: tuple[Relay, httpx.Client], body: dict[str, Any], fragment: str
) -> None:
    relay, client = drill
    assert_error(client.post("/debug/fault", json=body), 400, fragment)
    assert all(h.restarts == 0 for h in relay.handles.values())


@pytest.mark.parametrize(
    "actor", ["privacy", "feed", "sense", "context", "llm", "digest", "ticker"]
)
def test_a_crash_drill_restarts_that_actor_and_service_goes_on(
    drill: tuple[Relay, httpx.Client], actor: str
) -> None:
    _relay, client = drill
    assert client.post("/feed", json={"text": "before"}).status_code == 200
    answer = client.post("/debug/fault", json={"actor": actor, "kind": "crash"})
    assert answer.json() == {"ok": True}
    wait_until(
        lambda: client.get("/health").json()["actors"][actor]["restarts"] == 1,
        what=f"{actor} restart",
    )
    assert client.post("/feed", json={"text": "after"}).status_code == 200
    assert [m["text"] for m in client.get("/feed").json()["messages"]] == ["before", "after"]
    others = {k: v["restarts"] for k, v in client.get("/health").json()["actors"].items()}
    assert sum(others.values()) == 1


def test_a_drill_on_the_situation_writer_needs_its_file(
    make_relay: Callable[..., Relay], tmp_path: Path
) -> None:
    drill = {"actor": "situation", "kind": "crash"}
    relay = make_relay(replace(relay_settings(), faults=True))
    with client_for(relay) as client:
        assert_error(client.post("/debug/fault", json=drill), 400, "RELAY_SITUATION_FILE is empty")
    writing = replace(relay_settings(), faults=True, situation_file=str(tmp_path / "S.md"))
    relay = make_relay(writing)
    with client_for(relay) as client:
        assert client.post("/debug/fault", json=drill).json() == {"ok": True}
        wait_until(
            lambda: client.get("/health").json()["actors"]["situation"]["restarts"] == 1,
            what="the writer's restart",
        )


@pytest.mark.slow
def test_a_hang_drill_gives_503s_then_recovers(make_relay: Callable[..., Relay]) -> None:
    # the actors' timeout well inside the hang: the post below is refused before it ends
    relay = make_relay(replace(relay_settings(), faults=True, actor_timeout_ms=500))
    with client_for(relay, timeout=10) as client:
        assert client.post("/debug/fault", json={"actor": "sense", "kind": "hang", "seconds": 2})
        assert_error(client.post("/sense", json=sense_body()), 503, "sense")
        assert client.post("/feed", json={"text": "unaffected"}).status_code == 200
        wait_until(
            lambda: client.post("/sense", json=sense_body()).status_code == 200,
            what="the hang to end",
        )


@pytest.mark.slow
def test_a_transport_hang_stalls_requests_then_they_complete(
    make_relay: Callable[..., Relay],
) -> None:
    # The fault fires after its answer, so the post below may reach the feed before the loop
    # hangs; the actor timeout must outlast the hang, or its timer (due when the loop wakes)
    # could win against the reply. (The drill fixture's 500 ms made this flaky under load.)
    relay = make_relay(replace(relay_settings(), faults=True, actor_timeout_ms=5_000))
    with client_for(relay, timeout=10) as client:
        assert client.post("/debug/fault", json={"actor": "http", "kind": "hang", "seconds": 1})
        answer = client.post("/feed", json={"text": "waited"})
        assert answer.status_code == 200
        assert client.get("/feed").json()["messages"][-1]["text"] == "waited"


def test_a_transport_crash_drill_answers_first_then_rebinds(
    make_relay: Callable[..., Relay],
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    relay = make_relay(replace(relay_settings(), faults=True, port=port))
    url = f"http://127.0.0.1:{port}"
    answer = httpx.post(f"{url}/debug/fault", json={"actor": "http", "kind": "crash"}, timeout=5)
    assert answer.json() == {"ok": True}
    wait_until(
        lambda: relay.handles["http"].restarts == 1 and relay.handles["http"].alive,
        what="http restart",
    )
    served = wait_until(lambda: _try_get(f"{url}/health"), what="serving again")
    assert served.json()["actors"]["http"]["restarts"] == 1


@pytest.mark.parametrize("trace", [False, True])
def test_successes_are_logged_only_when_tracing_errors_always(
    make_relay: Callable[..., Relay], logs: LogSink, trace: bool
) -> None:
    settings = replace(relay_settings(), log_level="debug" if trace else "info")
    relay = make_relay(settings)
    with client_for(relay) as client:
        client.post("/feed", json={"text": "fine"})
        client.post("/feed", json={"text": 3})
    lines = logs.named("http.request")
    assert [line["status"] for line in lines] == ([200, 400] if trace else [400])
    assert all(line["request_id"] for line in lines)
