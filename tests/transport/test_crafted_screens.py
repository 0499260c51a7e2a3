"""A crafted or unlucky screen does not stall the relay: a page listing hundreds of tokens is
stored while a small post beside it is answered, and a minified stack trace on screen is read
into SITUATION.md while every request is answered."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from actors.core.bodies import SENSE_BODY_LIMIT
from actors.tree import Relay
from tests.support.actor_calls import tick
from tests.support.observe import LogSink, wait_until
from tests.support.relay import client_for, relay_settings
from transport.agent.fake_llm import FakeLLM

KEY_LINES = "xoxb-1a2b3c4d5e6f\n" * 1500
"""A browser page that lists tokens, a line each (27 KB)."""


def test_a_page_of_key_lines_is_stored_while_a_small_post_beside_it_is_answered(
    relay: Relay,
) -> None:
    answers: dict[str, httpx.Response] = {}

    def post(name: str, path: str, body: dict[str, object]) -> None:
        with client_for(relay, timeout=30) as client:
            answers[name] = client.post(path, json=body)

    posts = [
        threading.Thread(target=post, args=("page", "/feed", {"text": KEY_LINES})),
        threading.Thread(target=post, args=("small", "/feed", {"text": "hello"})),
        threading.Thread(
            target=post,
            args=("screen", "/sense", {"type": "text", "ts": 1, "ocr": KEY_LINES}),
        ),
    ]
    for thread in posts:
        thread.start()
    for thread in posts:
        thread.join(timeout=30)

    assert {name: answer.status_code for name, answer in answers.items()} == {
        "page": 200,
        "small": 200,
        "screen": 200,
    }
    with client_for(relay) as client:
        stored = [
            item["text"] for item in client.get("/feed", params={"after": 0}).json()["messages"]
        ]
        screens = client.get("/sense", params={"after": 0}).json()["events"]
    page = next(text for text in stored if "redacted" in text)
    assert "xoxb-" not in page
    assert "hello" in stored
    assert "xoxb-" not in screens[0]["ocr"]


@pytest.mark.timeout(60)
def test_a_minified_stack_trace_on_screen_is_read_into_situation_md_in_time(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, tmp_path: Path
) -> None:
    path = tmp_path / "SITUATION.md"
    relay = make_relay(replace(relay_settings(fake_llm), situation_file=str(path)))
    head = "TypeError: Cannot read properties of undefined\n   at "
    ocr = head + "." * (SENSE_BODY_LIMIT - len(head) - 200)
    with client_for(relay, timeout=30) as client:
        answer = client.post("/sense", json={"type": "text", "ts": 1, "ocr": ocr})
        assert answer.status_code == 200

        assert tick(relay, logs) == "ok"
        wait_until(path.is_file, timeout_s=30, what="SITUATION.md")

        assert client.get("/health").status_code == 200
    assert "TypeError: Cannot read properties" in path.read_text(encoding="utf-8")
