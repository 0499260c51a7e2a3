"""The escalation slot of a real relay, read as Sinain's agents read it.

sinain-mcp-server never looks at the HTTP status: it parses the body and prints it. The
:class:`SinainClient` below does the same, so these tests see what Sinain's agents see.
"""

from __future__ import annotations

import concurrent.futures
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from actors.core.control_bodies import ESCALATION_BODY_LIMIT
from actors.escalation.decision import CODING_REPLY_CHARS, REPLY_CHARS
from actors.kernel.clock import FakeClock
from actors.tree import Relay
from config.settings import Settings
from tests.actors.core.test_situation import TRACE
from tests.support.actor_calls import tick
from tests.support.observe import LogSink, wait_until
from tests.support.redaction_samples import AWS, SK
from tests.support.relay import assert_error, client_for, relay_settings, scrape, value
from transport.agent.fake_llm import FakeLLM

TOKEN = "s3cret-token"


class SinainClient:
    """What sinain-mcp-server does with the two routes: the JSON, whatever the status."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.printed: list[str] = []

    def _read(self, response: httpx.Response) -> Any:
        data = response.json()
        self.printed.append(json.dumps(data, indent=2))
        return data

    def get_escalation(self, **params: Any) -> Any:
        return self._read(self.client.get("/escalation/pending", params=params))

    def respond(self, body: Any) -> Any:
        return self._read(self.client.post("/escalation/respond", json=body))


def escalating(fake_llm: FakeLLM, **agent: Any) -> Settings:
    return relay_settings(fake_llm, escalation_mode="selective", **agent)


@pytest.fixture
def sinain(relay: Relay) -> Iterator[SinainClient]:
    with client_for(relay) as client:
        yield SinainClient(client)


@pytest.fixture
def relay(make_relay: Callable[..., Relay], fake_llm: FakeLLM) -> Relay:
    return make_relay(escalating(fake_llm))


def show(client: httpx.Client, ocr: str, app: str = "iTerm2", **meta: Any) -> None:
    body = {"type": "text", "ts": 1, "ocr": ocr, "meta": {"app": app, **meta}}
    assert client.post("/sense", json=body).status_code == 200


def ticked(relay: Relay, logs: LogSink) -> dict[str, Any]:
    """Tick and return the decision's log line (the tick's own line may come before the
    digest store's commit: this waits for the decision)."""
    before = len(logs.named("escalation.decided"))
    assert tick(relay, logs) == "ok"
    wait_until(lambda: len(logs.named("escalation.decided")) > before, what="the decision")
    return logs.named("escalation.decided")[-1]


def escalate(
    relay: Relay, sinain: SinainClient, logs: LogSink, fake_llm: FakeLLM, digest: str, ocr: str
) -> dict[str, Any]:
    """Show ``ocr``, tick with ``digest``, and return the escalation that is then pending."""
    fake_llm.digest = digest
    show(sinain.client, ocr)
    assert ticked(relay, logs)["escalate"] is True
    pending = sinain.get_escalation(wait=5)["escalation"]
    assert pending is not None, logs.named("escalation.decided")
    return dict(pending)


def test_the_slot_and_every_answer_as_sinains_mcp_server_reads_them(
    relay: Relay, sinain: SinainClient, logs: LogSink, fake_llm: FakeLLM
) -> None:
    assert sinain.get_escalation() == {
        "ok": True,
        "escalation": None,
        "config": {"escalationMode": "selective", "cooldownMs": 30_000, "staleMs": 0},
    }
    pending = escalate(relay, sinain, logs, fake_llm, "The paused-state test failed.", TRACE)

    assert re.fullmatch(r"[0-9a-f]{16}", pending["id"])
    assert pending["message"].startswith("[sinain-hud live context — tick #1]\n\n## Digest\n")
    assert "## Errors (high priority)" in pending["message"]
    assert pending["score"] >= 3
    assert pending["codingContext"] is True  # a stack trace and code on screen
    ctx = pending["feedbackCtx"]
    assert ctx["tickId"] == 1
    assert ctx["hud"] == fake_llm.hud
    assert ctx["currentApp"] == "iTerm"
    assert ctx["escalationScore"] == pending["score"]
    assert "error" in ctx["escalationReasons"]
    assert ctx["digest"] == "The paused-state test failed."
    assert sinain.get_escalation()["escalation"] == pending  # reading does not consume it

    assert sinain.respond({"id": "0" * 16, "response": "hi"}) == {
        "ok": False,
        "error": f"id mismatch: expected {pending['id']}",
    }
    for body in (
        {"id": pending["id"]},
        {"response": "x"},
        {"id": "", "response": "x"},
        {"id": pending["id"], "response": "  "},
        {"id": None, "response": "x"},
    ):
        assert sinain.respond(body) == {"ok": False, "error": "missing id or response"}
    assert sinain.respond({"id": 5, "response": "x"})["ok"] is False
    assert sinain.get_escalation()["escalation"] == pending  # refusals change nothing

    answer = "The enum lacks 'paused': add it to MediaState."
    assert sinain.respond({"id": pending["id"], "response": f"  {answer}\n"}) == {"ok": True}
    assert sinain.get_escalation()["escalation"] is None
    assert sinain.respond({"id": pending["id"], "response": answer}) == {
        "ok": False,
        "error": "no pending escalation",
    }
    newest = sinain.client.get("/feed").json()["messages"][-1]
    assert newest["text"] == f"[🤖] {answer}"
    assert (newest["priority"], newest["source"], newest["channel"]) == (
        "high",
        "openclaw",
        "agent",
    )


def test_statuses_of_the_answers(relay: Relay, sinain: SinainClient) -> None:
    post = sinain.client.post
    assert post("/escalation/respond", json={"id": "x", "response": "y"}).status_code == 200
    assert post("/escalation/respond", json={"id": "x"}).status_code == 400
    assert post("/escalation/respond", content=b"{").status_code == 400
    assert post("/escalation/respond", content=b"[1]").status_code == 400
    big = b'{"id": "x", "response": "' + b"a" * ESCALATION_BODY_LIMIT + b'"}'
    assert post("/escalation/respond", content=big).status_code == 413
    assert sinain.client.get("/escalation/pending", params={"wait": 0}).status_code == 400


def test_a_replaced_escalation_is_answered_within_its_grace_and_not_after(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, clock: FakeClock, logs: LogSink
) -> None:
    relay = make_relay(
        relay_settings(fake_llm, escalation_mode="rich", escalation_cooldown_ms=5_000)
    )
    with client_for(relay) as client:
        sinain = SinainClient(client)
        first = escalate(relay, sinain, logs, fake_llm, "Digest one.", "screen one")
        clock.advance(6)
        second = escalate(relay, sinain, logs, fake_llm, "Digest two.", "screen two")
        assert second["id"] != first["id"]  # latest wins

        assert sinain.respond({"id": first["id"], "response": "late but useful"}) == {"ok": True}
        assert sinain.get_escalation()["escalation"] == second  # kept
        assert client.get("/feed").json()["messages"][-1]["text"] == "[🤖] late but useful"
        assert sinain.respond({"id": first["id"], "response": "again"})["ok"] is False  # once

        clock.advance(6)
        third = escalate(relay, sinain, logs, fake_llm, "Digest three.", "screen three")
        clock.advance(61)
        assert sinain.respond({"id": second["id"], "response": "too late"}) == {
            "ok": False,
            "error": f"id mismatch: expected {third['id']}",
        }

        health = client.get("/health").json()["agent"]["escalation"]
        assert health == {
            "pending": True,
            "escalations": 3,
            "byReason": {"changed": 3},
            "skips": {},
            "answers": {"late": 1, "mismatch": 2},
        }
        samples = scrape(client)
        assert value(samples, "relay_escalations_total") == 3
        assert value(samples, "relay_escalation_reasons_total", reason="changed") == 3
        assert value(samples, "relay_escalation_answers_total", outcome="late") == 1
        assert value(samples, "relay_escalation_answers_total", outcome="mismatch") == 2
        assert value(samples, "relay_escalation_pending") == 1


def test_cooldown_dedupe_and_idle_are_skipped_and_counted_each_with_one_log_line(
    relay: Relay, sinain: SinainClient, logs: LogSink, fake_llm: FakeLLM, clock: FakeClock
) -> None:
    escalate(relay, sinain, logs, fake_llm, "The build failed.", TRACE)
    show(sinain.client, TRACE + "\nagain")
    ticked(relay, logs)  # inside the cooldown
    clock.advance(31)
    show(sinain.client, TRACE + "\nonce more")
    ticked(relay, logs)  # the same digest
    fake_llm.hud, fake_llm.digest = "Idle", "The build failed twice."
    show(sinain.client, TRACE + "\nand again")
    ticked(relay, logs)  # an idle hud
    clock.advance(130)  # the errors leave the window
    fake_llm.hud, fake_llm.digest = "Reading the news", "The user reads the news."
    show(sinain.client, "Headlines of the day", app="Safari")
    ticked(relay, logs)  # no score

    lines = logs.named("escalation.decided")
    assert [(line["escalate"], line["why"]) for line in lines] == [
        (True, "score"),
        (False, "cooldown"),
        (False, "duplicate"),
        (False, "idle"),
        (False, "below_threshold"),
    ]
    assert all(isinstance(line["score"], int) and "reasons" in line for line in lines)
    shown = sinain.client.get("/health").json()["agent"]["escalation"]["skips"]
    assert shown == {"cooldown": 1, "duplicate": 1, "idle": 1, "below_threshold": 1}
    samples = scrape(sinain.client)
    assert value(samples, "relay_escalation_skips_total", reason="idle") == 1


def test_mode_off_decides_nothing(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = make_relay(relay_settings(fake_llm))
    with client_for(relay) as client:
        show(client, TRACE)
        fake_llm.digest = "The build failed."
        assert tick(relay, logs) == "ok"
        wait_until(lambda: client.get("/agent/last").json()["result"], what="the entry")
        assert SinainClient(client).get_escalation()["escalation"] is None
        assert client.get("/health").json()["agent"]["escalation"]["skips"] == {}
    assert logs.named("escalation.decided") == []


def test_the_settings_change_at_runtime_and_the_cooldown_has_a_floor(
    relay: Relay, sinain: SinainClient
) -> None:
    body = {"escalationMode": " Rich ", "escalationCooldownMs": 10, "escalationStaleMs": 90_000}
    config = sinain.client.post("/agent/config", json=body).json()["config"]
    assert (config["escalationMode"], config["escalationCooldownMs"]) == ("rich", 5_000)
    assert config["escalationStaleMs"] == 90_000
    assert sinain.client.get("/agent/config").json()["config"]["escalationMode"] == "rich"
    assert sinain.get_escalation()["config"] == {
        "escalationMode": "rich",
        "cooldownMs": 5_000,
        "staleMs": 90_000,
    }
    refused = sinain.client.post("/agent/config", json={"escalationMode": "loud"})
    assert refused.status_code == 400
    assert "escalationMode" in refused.json()["error"]


def test_the_long_poll_answers_when_a_tick_escalates(
    relay: Relay, sinain: SinainClient, logs: LogSink, fake_llm: FakeLLM
) -> None:
    assert sinain.get_escalation(wait=0.2)["escalation"] is None
    fake_llm.digest = "The deploy failed."
    show(sinain.client, TRACE)
    with concurrent.futures.ThreadPoolExecutor(1) as pool, client_for(relay) as other:
        waiting = pool.submit(lambda: other.get("/escalation/pending", params={"wait": 10}))
        wait_until(
            lambda: sinain.client.get("/health").json()["streams"]["longPolls"] == 1,
            what="the poll to wait",
        )
        assert not waiting.done()
        assert tick(relay, logs) == "ok"
        answer = waiting.result(timeout=10).json()
    assert answer["escalation"]["feedbackCtx"]["digest"] == "The deploy failed."


def test_the_message_holds_no_secret_seen_on_screen(
    relay: Relay, sinain: SinainClient, logs: LogSink, fake_llm: FakeLLM
) -> None:
    pending = escalate(
        relay, sinain, logs, fake_llm, "The build failed.", f"{TRACE}\nOPENAI_API_KEY={SK}\n{AWS}"
    )
    assert SK not in pending["message"] and AWS not in pending["message"]
    assert "OPENAI_API_KEY=" in pending["message"]


def test_a_long_answer_is_cut(
    relay: Relay, sinain: SinainClient, logs: LogSink, fake_llm: FakeLLM
) -> None:
    pending = escalate(relay, sinain, logs, fake_llm, "The build failed.", TRACE)
    limit = CODING_REPLY_CHARS if pending["codingContext"] else REPLY_CHARS
    assert sinain.respond({"id": pending["id"], "response": "a" * 5000})["ok"] is True
    assert sinain.client.get("/feed").json()["messages"][-1]["text"] == "[🤖] " + "a" * limit


def test_both_routes_need_the_token_when_the_relay_has_one(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM
) -> None:
    relay = make_relay(replace(escalating(fake_llm), token=TOKEN))
    with client_for(relay) as client:
        assert client.get("/escalation/pending").status_code == 401
        assert (
            client.post("/escalation/respond", json={"id": "x", "response": "y"}).status_code == 401
        )
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert client.get("/escalation/pending", headers=auth).json()["ok"] is True


def test_a_pending_escalation_and_its_counts_survive_a_restart(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, tmp_path: Path
) -> None:
    settings = replace(escalating(fake_llm), data_dir=str(tmp_path / "data"))
    relay = make_relay(settings)
    with client_for(relay) as client:
        sinain = SinainClient(client)
        pending = escalate(relay, sinain, logs, fake_llm, "The build failed.", TRACE)
        assert sinain.respond({"id": "nope", "response": "x"})["ok"] is False
        before = client.get("/health").json()["agent"]["escalation"]
    assert relay.stop()

    again = make_relay(settings)
    with client_for(again) as client:
        sinain = SinainClient(client)
        assert sinain.get_escalation()["escalation"] == pending
        assert client.get("/health").json()["agent"]["escalation"] == before
        assert sinain.respond({"id": pending["id"], "response": "Fixed?"}) == {"ok": True}
        # The last escalated digest survived too: the same digest is not escalated again.
        show(client, TRACE + "\nafter the restart")
        assert ticked(again, logs)["why"] in ("cooldown", "duplicate")


@pytest.mark.slow
def test_an_answer_the_feed_cannot_take_is_a_503_and_the_escalation_stays_pending(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = make_relay(replace(escalating(fake_llm), faults=True, actor_timeout_ms=500))
    with client_for(relay, timeout=10) as client:
        sinain = SinainClient(client)
        pending = escalate(relay, sinain, logs, fake_llm, "The build failed.", TRACE)
        answer = {"id": pending["id"], "response": "Pin the lock file."}
        stuck = {"actor": "feed", "kind": "hang", "seconds": 1.5}
        assert client.post("/debug/fault", json=stuck).json() == {"ok": True}

        refused = client.post("/escalation/respond", json=answer)
        assert_error(refused, 503, "feed")
        assert sinain.get_escalation()["escalation"] == pending  # not consumed: retry it

        def taken() -> bool:
            return bool(client.post("/escalation/respond", json=answer).status_code == 200)

        wait_until(taken, 10, "the answer taken once the feed is back")
        texts = [m["text"] for m in client.get("/feed").json()["messages"]]
        assert texts.count("[🤖] Pin the lock file.") == 1
        assert sinain.get_escalation()["escalation"] is None
        answers = client.get("/health").json()["agent"]["escalation"]["answers"]
        assert answers == {"accepted": 1}
