"""Redaction at its two choke points. The buffers' append path: what GET /feed, GET /sense,
/agent/context and the prompt sent to the (fake) LLM show is what the buffers stored, redacted.
The LLM caller, on the model's answer: every reader of the hud and digest (the entries,
/health, the feed, the logs, the escalation, SITUATION.md) gets them redacted.

The rules themselves are tested in ``tests/actors/core/test_redaction.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import httpx

from actors.core.bodies import sense_input
from actors.core.records import FeedPost
from actors.core.redaction.redactor import Redactor
from actors.core.redaction.rules import KINDS
from actors.ingest.feed_buffer import FeedBuffer
from actors.ingest.sense_buffer import SenseBuffer
from actors.kernel.clock import FakeClock
from actors.kernel.storage import StorageInfo
from actors.tree import Relay
from tests.support.actor_calls import tick
from tests.support.observe import LogSink, wait_until
from tests.support.posts import recorded
from tests.support.redaction_samples import (
    AWS,
    GHP,
    JWT,
    PW,
    SK,
    VISA,
    A,
    C,
    P,
    T,
    W,
    capture_with_secrets,
)
from tests.support.relay import client_for, relay_settings, scrape, value
from transport.agent.fake_llm import FakeLLM

# -- the buffers: the one choke point ---------------------------------------------------------


def test_the_feed_buffer_stores_client_text_redacted_and_the_hud_as_it_is(
    clock: FakeClock, storage: StorageInfo
) -> None:
    redactor = Redactor()
    feed = FeedBuffer.start(clock=clock, store=storage.stores["feed"], redactor=redactor).proxy()
    items = feed.append_many(
        (FeedPost(f"my key {SK}"), FeedPost("plain", f"x {AWS}"), FeedPost("t", source=SK))
    ).get(timeout=5)
    assert [(i.text, i.priority, i.source) for i in items] == [
        (f"my key {A}", "normal", None),
        ("plain", f"x {W}", None),
        ("t", "normal", A),
    ]
    hud = feed.push_agent("Reading sk-docs-page-about-keys-1234567").get(timeout=5)
    assert hud.text == "[🧠] Reading sk-docs-page-about-keys-1234567"  # the agent's own line
    assert redactor.counts()["api-key"] == 2
    assert redactor.counts()["aws-key"] == 1


def test_the_sense_buffer_stores_events_redacted_and_their_fields_agree(
    clock: FakeClock, storage: StorageInfo
) -> None:
    redactor = Redactor()
    sense = SenseBuffer.start(clock=clock, store=storage.stores["sense"], redactor=redactor).proxy()
    event = sense_input(
        {"type": "text", "ts": 1, "ocr": f"key {SK}", "meta": {"app": f"Code {AWS}"}}
    )
    (stored,) = sense.append_many((event,)).get(timeout=5)
    assert stored.ocr == f"key {A}"
    assert stored.app == f"Code {W}"
    assert stored.payload == {
        "type": "text",
        "ts": 1,
        "ocr": f"key {A}",
        "meta": {"app": f"Code {W}"},
    }
    assert SK.encode() not in stored.json and SK.encode() not in stored.json_meta_only
    assert event.payload["ocr"] == f"key {SK}"  # what the transport validated is not changed


def test_restored_rows_are_not_redacted_again(clock: FakeClock, storage: StorageInfo) -> None:
    first = Redactor()
    sense = SenseBuffer.start(clock=clock, store=storage.stores["sense"], redactor=first)
    sense.proxy().append(sense_input({"type": "text", "ts": 1, "ocr": VISA})).get(timeout=5)
    sense.stop(timeout=5)
    again = Redactor()
    restored = SenseBuffer.start(clock=clock, store=storage.stores["sense"], redactor=again)
    (event,) = restored.proxy().events_after(0).get(timeout=5)
    assert event.ocr == C
    assert first.counts()["card"] == 1
    assert again.counts() == dict.fromkeys(KINDS, 0)


# -- end to end over HTTP ---------------------------------------------------------------------


SECRETS = (SK, GHP, AWS, JWT, "hunter2", "4111 1111 1111 1111", "my diary", "abc123def456ghi")


def assert_no_secret(where: str, text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} in {where}"


def test_no_secret_reaches_the_reads_or_the_prompt(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink
) -> None:
    transcript = (
        "[PERIODIC] (normal)\nContext (1 entries):\n[2s ago, openrouter] "
        f"the key is {SK}, password=hunter2 and <private>my diary</private>"
    )
    assert client.post("/feed", json={"text": transcript}).json() == {"ok": True, "id": 1}
    body = capture_with_secrets()
    assert client.post("/sense", json=body).json() == {"ok": True, "id": 1}
    client.post(
        "/sense", json={**body, "ocr": f"curl -H 'Authorization: Bearer abc123def456ghi' {VISA}"}
    )

    feed = client.get("/feed").text
    sense = client.get("/sense", params={"meta_only": "true"}).text
    context = client.get("/agent/context").text
    assert tick(relay, logs) == "ok"
    prompt = fake_llm.requests[0].body["messages"][0]["content"]

    for where, text in (("/feed", feed), ("/sense", sense), ("/agent/context", context)):
        assert_no_secret(where, text)
    assert_no_secret("the prompt", prompt)
    assert f"the key is {A}, password={PW} and {P}" in feed
    assert f"the key is {A}, password={PW} and {P}" in prompt
    assert f"Authorization: Bearer {T}' {C}" in prompt
    events = client.get("/sense").json()["events"]
    assert events[0]["roi"]["data"] == body["roi"]["data"]  # image data as sent, even this
    assert events[0]["meta"]["windowTitle"] == f"password={PW} — Code"


def test_the_recorded_capture_events_are_stored_unchanged(client: httpx.Client) -> None:
    sent = recorded()
    for body in sent:
        client.post("/sense", json=body).raise_for_status()
    events = client.get("/sense").json()["events"]
    assert [{k: v for k, v in e.items() if k not in ("id", "receivedAt")} for e in events] == sent


def test_redaction_off_keeps_secrets_and_says_so_at_start(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, tmp_path: Path
) -> None:
    relay = make_relay(replace(relay_settings(fake_llm), redact=False))
    (warning,) = logs.named("privacy.redaction_off")
    assert warning["level"] == "warning"
    with client_for(relay) as client:
        text = (
            f"[PERIODIC] (normal)\nContext (1 entries):\n[2s ago, openrouter] password=hunter2 {SK}"
        )
        client.post("/feed", json={"text": text})
        client.post("/sense", json={"type": "text", "ts": 1, "ocr": VISA})
        assert f"password=hunter2 {SK}" in client.get("/feed").json()["messages"][0]["text"]
        assert client.get("/sense").json()["events"][0]["ocr"] == VISA
    assert tick(relay, logs) == "ok"
    prompt = fake_llm.requests[0].body["messages"][0]["content"]
    assert SK in prompt
    assert VISA in prompt


def test_redaction_on_logs_no_warning(relay: Relay, logs: LogSink) -> None:
    assert logs.named("privacy.redaction_off") == []


def test_keys_numbers_and_unicode_are_redacted_on_the_way_in(client: httpx.Client) -> None:
    """A secret as an object key, a card as a JSON number, a key hidden by a zero-width space
    or wrapped at a line end: none is stored or served."""
    wrapped = f"OPENAI_API_KEY={SK[:16]}\n{SK[16:]}"
    body = {
        "type": "text",
        "ts": 1,
        "ocr": f"{wrapped}\npass\u200bword=hunter2 {AWS[:4]}\u00ad{AWS[4:]}",
        "extra": {SK: 4111111111111111, GHP: "x"},
    }
    assert client.post("/sense", json=body).json() == {"ok": True, "id": 1}
    (event,) = client.get("/sense").json()["events"]
    assert event["ocr"] == f"OPENAI_API_KEY={A}\npass\u200bword={PW} {W}"
    assert event["extra"] == {A: C, f"{A}#2": "x"}
    served = client.get("/sense").text + client.get("/agent/context").text
    for secret in (SK, SK[16:], GHP, "hunter2", AWS[4:], "4111111111111111"):
        assert secret not in served


# -- the model's words: redacted as they are read ------------------------------------------------

RELAY_KEY = "or-local-7fQ2xLp9Zr4VwN8tKb3M"
"""The relay's own LLM key, shaped like no vendor's: only the configured-secret scrub knows it."""


def answering_secrets(fake_llm: FakeLLM) -> None:
    """The stand-in model answers what a vision model reads off a screen showing keys."""
    fake_llm.hud = f"Terminal shows OPENAI_API_KEY={SK} and {RELAY_KEY}"
    fake_llm.digest = f"User ran env in iTerm2: OPENAI_API_KEY={SK}, OPENROUTER={RELAY_KEY}."


def everything_served(client: httpx.Client, logs: LogSink, situation: Path) -> dict[str, str]:
    """What every reader of the model's words gets, once the tick's effects are all in."""
    pending = client.get("/escalation/pending", params={"wait": 5}).json()
    assert pending["escalation"] is not None
    wait_until(lambda: "[🧠]" in client.get("/feed").text, what="the hud in the feed")
    wait_until(situation.is_file, what="SITUATION.md")
    return {
        "/agent/digest": client.get("/agent/digest").text,
        "/agent/last": client.get("/agent/last").text,
        "/agent/history": client.get("/agent/history").text,
        "/health": client.get("/health").text,
        "/feed": client.get("/feed").text,
        "escalation": json.dumps(pending),
        "logs": repr(logs.events),
        "SITUATION.md": situation.read_text(),
    }


def test_the_models_words_are_redacted_before_anything_keeps_or_shows_them(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, tmp_path: Path
) -> None:
    situation = tmp_path / "SITUATION.md"
    settings = relay_settings(fake_llm, api_key=RELAY_KEY, escalation_mode="focus")
    relay = make_relay(replace(settings, situation_file=str(situation)))
    answering_secrets(fake_llm)
    with client_for(relay) as client:
        client.post("/sense", json={"type": "text", "ts": 1, "ocr": "$ env", "meta": {"app": "x"}})
        assert tick(relay, logs) == "ok"
        served = everything_served(client, logs, situation)
        for where, text in served.items():
            for secret in (SK, RELAY_KEY):
                assert secret not in text, f"{secret!r} in {where}"
        hud = f"Terminal shows OPENAI_API_KEY={A} and {A}"
        assert client.get("/agent/last").json()["result"]["hud"] == hud
        assert f"[🧠] {hud}" in served["/feed"]
        health = client.get("/health").json()
        assert health["agent"]["modelRedactions"] == {"api-key": 4}
        samples = scrape(client)
    assert value(samples, "relay_redactions_model_total", type="api-key") == 4
    assert value(samples, "relay_redactions_total", type="api-key") == 0  # not the clients'


def test_with_redaction_off_the_models_words_still_lose_the_relays_own_key(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = make_relay(replace(relay_settings(fake_llm, api_key=RELAY_KEY), redact=False))
    answering_secrets(fake_llm)
    with client_for(relay) as client:
        client.post("/sense", json={"type": "text", "ts": 1, "ocr": "$ env", "meta": {"app": "x"}})
        assert tick(relay, logs) == "ok"
        entry = client.get("/agent/last").json()["result"]
        assert entry["hud"] == f"Terminal shows OPENAI_API_KEY={SK} and {A}"
        assert RELAY_KEY not in repr(logs.events) + client.get("/agent/digest").text
        assert client.get("/health").json()["agent"]["modelRedactions"] == {"api-key": 2}
