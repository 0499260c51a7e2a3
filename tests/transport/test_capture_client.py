"""Sinain's capture client, as it really posts: recorded bodies in exactly its shape."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from actors.kernel.clock import FakeClock
from actors.tree import Relay
from tests.support.actor_calls import tick
from tests.support.observe import LogSink
from tests.support.posts import recorded
from tests.support.redaction_samples import AWS, GHP, SK, A, W
from tests.support.relay import assert_error, scrape, value
from transport.agent.fake_llm import FakeLLM


def test_each_recorded_event_is_answered_as_the_client_expects(client: httpx.Client) -> None:
    for n, body in enumerate(recorded(), start=1):
        response = client.post("/sense", json=body)
        assert response.status_code == 200, response.text
        assert response.json() == {"ok": True, "id": n}


def test_window_title_screen_and_observation_are_kept_as_sent(client: httpx.Client) -> None:
    sent = recorded()
    for body in sent:
        client.post("/sense", json=body).raise_for_status()
    events = client.get("/sense").json()["events"]
    for body, event in zip(sent, events, strict=True):
        assert {k: v for k, v in event.items() if k not in ("id", "receivedAt")} == body
    meta_only = client.get("/sense", params={"meta_only": "true"}).json()["events"]
    assert meta_only[1]["meta"]["windowTitle"] == "ticker.py — sinain-relay"
    assert meta_only[1]["observation"] == sent[1]["observation"]
    assert "data" not in meta_only[1]["roi"]


def test_the_context_window_uses_what_says_more_than_the_ocr(client: httpx.Client) -> None:
    for body in recorded():
        client.post("/sense", json=body).raise_for_status()
    screen = client.get("/agent/context").json()["context"]["screen"]
    switch, text, seen = screen
    assert switch["windowTitle"] == "ticker.py — sinain-relay"
    assert "title" not in switch  # "context in Code" says nothing the line does not
    assert text["windowTitle"] == "ticker.py — sinain-relay"
    assert "title" not in text  # "text in Code": the client's placeholder
    assert seen["narrative"] == "The user is reading a scheduling method in the editor"


def test_the_prompt_names_the_window_and_what_was_seen(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink
) -> None:
    for body in recorded():
        client.post("/sense", json=body).raise_for_status()
    assert tick(relay, logs) == "ok"
    prompt = fake_llm.requests[0].prompt
    assert "[VS Code — ticker.py — sinain-relay] def _due(self) -> float | None:" in prompt
    assert "[VS Code — ticker.py — sinain-relay] The user is reading a scheduling method" in (
        prompt
    )
    assert "text in Code" not in prompt


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"meta": {"windowTitle": 7}}, "meta.windowTitle must be a string"),
        ({"meta": {"screen": [0]}}, "meta.screen must be a number or a string"),
        ({"observation": "a title"}, "observation must be an object"),
        ({"observation": {"title": 1}}, "observation.title must be a string"),
        ({"observation": {"narrative": ["x"]}}, "observation.narrative must be a string"),
        (
            {"observation": {"facts": "app: Code"}},
            "observation.facts must be an array of strings, not a string",
        ),
        (
            {"observation": {"concepts": [1, 2]}},
            "observation.concepts[0] must be a string, not a whole number",
        ),
    ],
)
def test_a_malformed_capture_field_is_a_400_and_stores_nothing(
    client: httpx.Client, change: dict[str, Any], fragment: str
) -> None:
    body = {**recorded()[1], **change}
    response = client.post("/sense", json=body)
    assert response.status_code == 400
    assert fragment in response.json()["error"]
    assert client.get("/sense").json()["events"] == []


def test_null_capture_fields_count_as_absent(client: httpx.Client) -> None:
    body = {
        "type": "text",
        "ts": 1,
        "ocr": "x",
        "meta": {"app": "Code", "windowTitle": None, "screen": None},
        "observation": {"title": None, "facts": None},
    }
    assert client.post("/sense", json=body).status_code == 200


# -- POST /profiling/sense ---------------------------------------------------------------------

PROFILE = {
    "rssMb": 212.4,
    "uptimeS": 3600,
    "ts": 1769901260000,
    "extra": {
        "capturesOk": 14400,
        "capturesFail": 2,
        "eventsSent": 310,
        "eventsFailed": 0,
        "eventsGated": 9000,
        "ocrErrors": 0,
        "ocrSkippedBackpressure": 0,
        "shadowDivergences": 0,
        "detectAvgMs": 3.1,
        "ocrAvgMs": 48.7,
        "sendAvgMs": 2.2,
    },
}
"""A ``POST /profiling/sense`` body in the shape the capture client sends every 60 s."""


def test_the_capture_clients_profiling_is_accepted_and_shown_in_health_and_metrics(
    client: httpx.Client, clock: FakeClock
) -> None:
    assert client.get("/health").json()["profiling"] == {"sense": None, "overlay": None}

    answer = client.post("/profiling/sense", json=PROFILE)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"ok": True}

    sense = client.get("/health").json()["profiling"]["sense"]
    assert sense == {
        "rssMb": 212.4,
        "uptimeS": 3600,
        "ts": 1769901260000,
        "receivedAt": clock.now_ms(),
        "extra": PROFILE["extra"],
    }
    samples = scrape(client)
    assert value(samples, "relay_client_rss_megabytes", client="sense") == 212.4
    assert value(samples, "relay_client_uptime_seconds", client="sense") == 3600
    received = value(samples, "relay_client_report_timestamp_seconds", client="sense")
    assert received == clock.now_ms() / 1000
    assert value(samples, "relay_client_rss_megabytes", client="overlay") is None  # no report


def test_a_newer_report_replaces_the_last(client: httpx.Client) -> None:
    client.post("/profiling/sense", json=PROFILE).raise_for_status()
    client.post("/profiling/sense", json={"rssMb": 99, "uptimeS": 3660, "ts": 2}).raise_for_status()
    sense = client.get("/health").json()["profiling"]["sense"]
    assert (sense["rssMb"], sense["uptimeS"], sense["extra"]) == (99, 3660, {})


def test_secrets_in_the_names_of_extra_fields_are_redacted(client: httpx.Client) -> None:
    """Names of ``extra`` fields are served by ``/health``, which needs no token: a secret in a
    name is replaced by its marker as the report arrives, and names that redact alike keep
    both their numbers."""
    extra = {f"key {SK}": 1, "capturesOk": 2, f"key {GHP}": 3, AWS: 4}
    client.post("/profiling/sense", json={**PROFILE, "extra": extra}).raise_for_status()
    sense = client.get("/health").json()["profiling"]["sense"]
    assert sense["extra"] == {f"key {A}": 1, "capturesOk": 2, f"key {A}#2": 3, W: 4}
    assert value(scrape(client), "relay_redactions_total", type="api-key") == 2


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"uptimeS": 1, "ts": 1}, "rssMb is required"),
        ({**PROFILE, "rssMb": "212"}, "rssMb must be a number"),
        ({**PROFILE, "uptimeS": True}, "uptimeS must be a number"),
        ({**PROFILE, "rssMb": -1}, "rssMb must be a number at least 0"),
        ({**PROFILE, "ts": None}, "ts is required"),
        ({**PROFILE, "extra": [1]}, "extra must be an object"),
        ({**PROFILE, "extra": {"eventsSent": "310"}}, "each field of extra must be a number"),
        ({**PROFILE, "extra": {f"k{n}": n for n in range(65)}}, "at most 64 fields"),
        ({"crash": "Traceback ...", "ts": 1}, "rssMb is required"),
        ([PROFILE], "body must be a JSON object"),
    ],
)
def test_a_malformed_report_is_a_400_and_changes_nothing(
    client: httpx.Client, body: Any, fragment: str
) -> None:
    client.post("/profiling/sense", json=PROFILE).raise_for_status()
    before = client.get("/health").json()["profiling"]
    assert_error(client.post("/profiling/sense", json=body), 400, fragment)
    assert_error(client.post("/profiling/sense", content=b"{rss"), 400, "not valid JSON")
    assert client.get("/health").json()["profiling"] == before
