"""Sinain's capture client, as it really posts: recorded bodies in exactly its shape."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from actors.tree import Relay
from tests.helpers import LogSink, recorded, tick
from transport.demo.fake_llm import FakeLLM


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
    prompt = fake_llm.requests[0].body["messages"][0]["content"]
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
        ({"observation": {"facts": "app: Code"}}, "observation.facts must be a list of strings"),
        ({"observation": {"concepts": [1, 2]}}, "observation.concepts must be a list of strings"),
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
