"""The privacy matrix through a whole relay: what each destination gets of what the user's
screen showed, a cell's level changing it (the stand-in LLM records what it was sent)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from actors.tree import Relay
from config.agent.settings import DEFAULT_MODEL
from config.privacy import PrivacySettings
from tests.support.actor_calls import tick
from tests.support.observe import LogSink, wait_until
from tests.support.posts import jpeg, screen_event
from tests.support.relay import client_for, relay_settings
from transport.agent.fake_llm import FakeLLM

OCR = "Quarterly revenue forecast 41,920 for Northwind"
TITLE = "northwind-budget.xlsx"
SPEECH = "[🎙] let us move the Northwind launch to March"


def start(make_relay: Callable[..., Relay], fake_llm: FakeLLM, **cells: Any) -> Relay:
    settings = relay_settings(fake_llm, escalation_mode="rich")
    return make_relay(replace(settings, privacy=PrivacySettings(**cells)))


def show(client: httpx.Client, picture: bytes | None = None) -> None:
    body = screen_event(OCR, picture, meta={"app": "Excel", "windowTitle": TITLE})
    assert client.post("/sense", json=body).status_code == 200


def prompt_of(fake_llm: FakeLLM) -> str:
    (seen,) = fake_llm.requests
    content = seen.body["messages"][0]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def test_paranoid_sends_no_screen_text_title_speech_or_image_to_the_llm(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start(make_relay, fake_llm, mode="paranoid")
    with client_for(relay) as client:
        show(client, jpeg(1))
        client.post("/feed", json={"text": SPEECH, "source": "audio"})
        assert tick(relay, logs) == "ok"
    (seen,) = fake_llm.requests
    prompt = prompt_of(fake_llm)
    assert "Excel" in prompt
    assert "Northwind" not in prompt and TITLE not in prompt
    assert seen.images == []
    assert seen.body["model"] == DEFAULT_MODEL
    (started,) = logs.named("privacy.matrix")
    assert (started["mode"], started["cells"]) == ("paranoid", {})


def test_strict_shows_the_llm_the_app_and_with_titles_allowed_the_window_never_the_text(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start(
        make_relay, fake_llm, mode="strict", titles_local_buffer="full", titles_openrouter="full"
    )
    with client_for(relay) as client:
        show(client, jpeg(1))
        assert tick(relay, logs) == "ok"
    prompt = prompt_of(fake_llm)
    assert f"[Excel — {TITLE}]" in prompt
    assert OCR not in prompt
    assert fake_llm.requests[0].images == []


def test_by_default_the_llm_gets_the_text_title_and_image_as_before(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start(make_relay, fake_llm)
    with client_for(relay) as client:
        show(client, jpeg(1))
        assert tick(relay, logs) == "ok"
    prompt = prompt_of(fake_llm)
    assert OCR in prompt and TITLE in prompt
    assert len(fake_llm.requests[0].images) == 1
    assert logs.named("privacy.matrix") == []


def test_screen_text_not_stored_is_neither_served_nor_in_the_context(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start(make_relay, fake_llm, ocr_local_buffer="none", images_local_buffer="none")
    with client_for(relay) as client:
        show(client, jpeg(1))
        (event,) = client.get("/sense").json()["events"]
        context = client.get("/agent/context").json()["context"]
        assert tick(relay, logs) == "ok"
    assert "Northwind" not in str(event)
    assert event["meta"] == {"app": "Excel", "windowTitle": TITLE}
    assert "roi" not in event
    assert "Northwind" not in str(context)
    assert "Northwind" not in prompt_of(fake_llm)


def test_summary_stores_the_app_and_window_only(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM
) -> None:
    relay = start(make_relay, fake_llm, ocr_local_buffer="summary", titles_local_buffer="none")
    with client_for(relay) as client:
        body = screen_event(OCR, meta={"app": "Excel", "windowTitle": TITLE}, extra={"x": OCR})
        body["observation"] = {"title": "Budget", "narrative": OCR}
        assert client.post("/sense", json=body).status_code == 200
        (event,) = client.get("/sense").json()["events"]
    assert "Northwind" not in str(event) and TITLE not in str(event)
    assert event["meta"] == {"app": "Excel"}


def test_agents_get_no_screen_text_while_the_llm_does(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start(make_relay, fake_llm, ocr_agent_gateway="none", titles_agent_gateway="none")
    fake_llm.digest = "The user reviews a budget."
    with client_for(relay) as client:
        show(client)
        assert tick(relay, logs) == "ok"
        wait_until(lambda: logs.named("escalation.decided"), what="the decision")
        pending = client.get("/escalation/pending", params={"wait": 5}).json()["escalation"]
        context = client.get("/agent/context").json()["context"]
    assert OCR in prompt_of(fake_llm)
    assert pending is not None
    assert "Northwind" not in pending["message"] and TITLE not in pending["message"]
    assert "Excel" in pending["message"]
    assert context["screen"] == []
    assert context["currentApp"] == "Excel"


def test_situation_md_shows_agents_what_their_cells_allow(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, tmp_path: Path
) -> None:
    path = tmp_path / "SITUATION.md"
    settings = replace(relay_settings(fake_llm), situation_file=str(path))
    privacy = PrivacySettings(ocr_agent_gateway="summary", audio_agent_gateway="none")
    relay = make_relay(replace(settings, privacy=privacy))
    with client_for(relay) as client:
        show(client)
        client.post("/feed", json={"text": SPEECH})
        assert tick(relay, logs) == "ok"
    text = str(wait_until(lambda: path.is_file() and path.read_text(), what="SITUATION.md"))
    assert "Excel" in text and TITLE in text
    assert "Northwind" not in text


@pytest.mark.parametrize("level", ["none", "summary"])
def test_transcripts_kept_from_agents_and_the_llm(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, level: str
) -> None:
    relay = start(make_relay, fake_llm, audio_openrouter=level, audio_agent_gateway=level)
    with client_for(relay) as client:
        client.post("/feed", json={"text": SPEECH, "source": "audio"})
        context = client.get("/agent/context").json()["context"]
        assert tick(relay, logs) == "ok"
    prompt = prompt_of(fake_llm)
    assert "Northwind" not in prompt and "Northwind" not in str(context)
    if level == "summary":
        assert "(speech: 8 words)" in prompt


@pytest.mark.parametrize(
    ("level", "stored"), [("summary", "[🎙] (speech: 8 words)"), ("none", "[🎙] (speech not kept)")]
)
def test_transcripts_words_kept_out_of_the_feed(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, level: str, stored: str
) -> None:
    relay = start(make_relay, fake_llm, audio_local_buffer=level)
    with client_for(relay) as client:
        client.post("/feed", json={"text": SPEECH})
        client.post("/feed", json={"text": "Northwind call at 3", "source": "note"})
        texts = [item["text"] for item in client.get("/feed").json()["messages"]]
        context = client.get("/agent/context").json()["context"]
    assert texts == [stored, "Northwind call at 3"]
    assert "Northwind" not in str(context["audio"])
