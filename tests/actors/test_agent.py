"""The agent tick end to end: real actors, a real fake LLM on loopback, an injected clock."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from actors.agent.core.config_update import AgentConfigUpdate
from actors.agent.digest_store import DigestStore
from actors.agent.ticker import Ticker
from actors.core.bodies import convert
from actors.core.shapes import AppSwitch
from actors.ingest.feed_buffer import FeedBuffer
from actors.ingest.sense_buffer import SenseBuffer
from actors.kernel.base import RelayActor
from actors.kernel.clock import FakeClock
from actors.tree import Relay
from tests.support.actor_calls import asked, last_entry, restarted, tick
from tests.support.observe import LogSink, wait_until
from tests.support.posts import TRANSCRIPT, sense
from tests.support.relay import client_for, relay_settings, via_remote
from transport.agent.fake_llm import FakeLLM


def test_tick_sends_the_prompt_and_stores_hud_and_digest(
    relay: Relay, fake_llm: FakeLLM, logs: LogSink
) -> None:
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="TODO: fix idle detection"))
    asked(relay.handles["feed"], FeedBuffer.append, TRANSCRIPT, "normal")

    assert tick(relay, logs) == "ok"

    assert fake_llm.calls == 1
    seen = fake_llm.requests[0]
    assert seen.authorization == "Bearer test-key"
    assert seen.body["model"] == "google/gemini-2.5-flash-lite"
    assert seen.body["max_tokens"] == 200
    assert seen.body["temperature"] == 0.3
    prompt = seen.body["messages"][0]["content"]
    assert "[IntelliJ IDEA] TODO: fix idle detection" in prompt
    assert "So what we need to fix is the idle detection" in prompt

    last = last_entry(relay)
    assert last["hud"] == fake_llm.hud
    assert last["digest"] == fake_llm.digest
    assert last["pushed"] is True
    assert last["tokensIn"] == 310 and last["tokensOut"] == 85
    assert last["context"] == {
        "currentApp": "IntelliJ IDEA",
        "appHistory": ["IntelliJ IDEA"],
        "audioCount": 1,
        "screenCount": 1,
    }
    digest = asked(relay.handles["digest"], DigestStore.latest_digest)
    assert digest is not None
    assert digest.id == last["id"]
    assert digest.digest == fake_llm.digest
    assert digest.app_history == [AppSwitch(app="IntelliJ IDEA", ts=1)]

    feed = asked(relay.handles["feed"], FeedBuffer.items_after, 0)
    assert feed[-1].text == f"[🧠] {fake_llm.hud}"
    assert feed[-1].source == "agent"
    stats = asked(relay.handles["digest"], DigestStore.stats)
    assert stats["totalCalls"] == 1
    assert stats["totalTokens"] == {"in": 310, "out": 85}
    assert stats["lastDigest"] == fake_llm.digest


def test_no_new_events_means_no_llm_call_and_an_idle_skip(
    relay: Relay, fake_llm: FakeLLM, logs: LogSink
) -> None:
    asked(relay.handles["sense"], SenseBuffer.append, sense())
    assert tick(relay, logs) == "ok"
    assert tick(relay, logs) == "idle"
    assert tick(relay, logs) == "idle"
    assert fake_llm.calls == 1
    assert asked(relay.handles["digest"], DigestStore.stats)["idleSkips"] == 2


def test_the_agents_own_hud_push_is_not_new_activity(
    relay: Relay, fake_llm: FakeLLM, logs: LogSink
) -> None:
    asked(relay.handles["feed"], FeedBuffer.append, TRANSCRIPT, "normal")
    assert tick(relay, logs) == "ok"
    assert last_entry(relay)["pushed"] is True
    assert tick(relay, logs) == "idle"
    assert fake_llm.calls == 1


def test_news_is_seen_when_the_rings_are_full(
    relay: Relay, fake_llm: FakeLLM, logs: LogSink
) -> None:
    for n in range(120):
        asked(relay.handles["feed"], FeedBuffer.append, f"{TRANSCRIPT} {n}", "normal")
    for n in range(40):
        asked(relay.handles["sense"], SenseBuffer.append, sense(ocr=f"screen {n}"))
    assert tick(relay, logs) == "ok"
    assert asked(relay.handles["feed"], FeedBuffer.count) == 100
    assert asked(relay.handles["sense"], SenseBuffer.count) == 30

    # the ring length stays 30
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="one more"))

    assert tick(relay, logs) == "ok"
    assert fake_llm.calls == 2


def test_a_tick_reads_the_published_rings_and_never_waits_for_a_buffer(
    relay: Relay, fake_llm: FakeLLM, logs: LogSink
) -> None:
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="committed before the hang"))
    relay.handles["sense"].tell(RelayActor.inject_fault, "hang", 3.0)
    relay.handles["feed"].tell(RelayActor.inject_fault, "hang", 3.0)
    started = time.monotonic()
    assert tick(relay, logs) == "ok"
    assert time.monotonic() - started < 2.5  # it did not wait out the hangs
    assert "committed before the hang" in str(fake_llm.requests[-1])


def test_an_empty_window_makes_no_call(
    relay: Relay, fake_llm: FakeLLM, clock: FakeClock, logs: LogSink
) -> None:
    asked(relay.handles["feed"], FeedBuffer.append, "a message that is no transcript", "normal")
    assert tick(relay, logs) == "empty"
    asked(relay.handles["sense"], SenseBuffer.append, sense())
    clock.advance(121)  # older than the 2-minute window
    assert tick(relay, logs) == "empty"
    assert fake_llm.calls == 0
    assert asked(relay.handles["digest"], DigestStore.stats)["emptySkips"] == 2


def test_the_same_hud_is_not_pushed_twice_and_idle_is_never_pushed(
    relay: Relay, fake_llm: FakeLLM, logs: LogSink
) -> None:
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="a"))
    assert tick(relay, logs) == "ok"
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="b"))
    assert tick(relay, logs) == "ok"
    fake_llm.hud = "Idle"
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="c"))
    assert tick(relay, logs) == "ok"

    pushed = [e.pushed for e in asked(relay.handles["digest"], DigestStore.history, 10)]
    assert pushed == [False, False, True]  # newest first
    agent_items = [
        i for i in asked(relay.handles["feed"], FeedBuffer.items_after, 0) if i.source == "agent"
    ]
    assert len(agent_items) == 1


def test_push_to_feed_off_stores_but_does_not_push(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = make_relay(relay_settings(fake_llm, push_to_feed=False))
    asked(relay.handles["sense"], SenseBuffer.append, sense())
    assert tick(relay, logs) == "ok"
    assert last_entry(relay)["pushed"] is False
    assert all(i.source is None for i in asked(relay.handles["feed"], FeedBuffer.items_after, 0))


PLAIN = (
    "The user is busy. Editing ticker.py in VS Code. "
    "User is in VS Code editing actors/agent/ticker.py."
)


@pytest.mark.parametrize(
    ("mode", "hud", "digest", "parsed_ok"),
    [
        ("fenced", "Editing ticker.py in VS Code", None, True),
        ("plain", PLAIN[:80], PLAIN, False),
    ],
)
def test_fenced_and_plain_text_answers_are_read_as_the_spec_says(
    relay: Relay,
    fake_llm: FakeLLM,
    logs: LogSink,
    mode: str,
    hud: str,
    digest: str | None,
    parsed_ok: bool,
) -> None:
    fake_llm.mode = mode
    asked(relay.handles["sense"], SenseBuffer.append, sense())
    assert tick(relay, logs) == "ok"
    last = last_entry(relay)
    assert last["hud"] == hud
    assert last["digest"] == (digest or fake_llm.digest)
    assert last["parsedOk"] is parsed_ok


@pytest.mark.parametrize("mode", ["nonjson", "empty", "http500", "http429", "hang"])
def test_an_llm_failure_keeps_the_stored_outputs_and_the_next_tick_retries(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, clock: FakeClock, logs: LogSink, mode: str
) -> None:
    # Only the hang needs a short timeout (it is waited out); the calls that must answer get
    # seconds, and the retries of a 429 or a 5xx run on the fake clock.
    relay = make_relay(relay_settings(fake_llm, timeout_ms=1_000 if mode == "hang" else 5_000))
    requests = 3 if mode in ("http500", "http429") else 1  # a failed tick's, retries included
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="first"))
    assert tick(relay, logs) == "ok"
    before = (
        asked(relay.handles["digest"], DigestStore.latest_digest),
        asked(relay.handles["digest"], DigestStore.history, 50),
    )

    fake_llm.mode = mode
    fake_llm.hud = "must never be stored"
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="second"))
    assert tick(relay, logs, clock) == "failed"

    assert (
        asked(relay.handles["digest"], DigestStore.latest_digest),
        asked(relay.handles["digest"], DigestStore.history, 50),
    ) == before
    stats = asked(relay.handles["digest"], DigestStore.stats)
    assert stats["failures"] == 1
    assert stats["totalCalls"] == 1
    assert stats["lastError"]
    assert not any(
        "must never" in i.text for i in asked(relay.handles["feed"], FeedBuffer.items_after, 0)
    )

    # nothing new, but a failed tick is tried again
    assert tick(relay, logs, clock) == "failed"
    assert fake_llm.calls == 1 + 2 * requests

    fake_llm.mode = "ok"
    fake_llm.hud = "Back in business"
    assert tick(relay, logs) == "ok"
    assert last_entry(relay)["hud"] == "Back in business"


def test_a_hung_llm_is_cut_off_at_the_timeout(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = make_relay(relay_settings(fake_llm, timeout_ms=200))
    fake_llm.mode = "hang"
    asked(relay.handles["sense"], SenseBuffer.append, sense())
    assert tick(relay, logs) == "failed"
    failed = logs.named("tick")[-1]
    assert failed["error"] == "LLMTimeout"
    assert asked(relay.handles["llm"], RelayActor.ping) == "pong"


def test_only_one_llm_request_is_in_flight(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = make_relay(relay_settings(fake_llm, timeout_ms=5_000))
    fake_llm.mode = "slow"
    fake_llm.delay_s = 0.5
    asked(relay.handles["sense"], SenseBuffer.append, sense())
    assert asked(relay.handles["ticker"], Ticker.tick) == "started"
    wait_until(lambda: fake_llm.calls == 1, what="the request to arrive")
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="more news"))

    assert asked(relay.handles["ticker"], Ticker.tick) == "busy"
    assert asked(relay.handles["ticker"], Ticker.tick) == "busy"

    wait_until(lambda: logs.named("tick"), what="the slow tick to finish")
    assert fake_llm.calls == 1
    assert asked(relay.handles["digest"], DigestStore.stats)["busySkips"] == 2


def test_without_a_key_the_agent_makes_no_calls_until_one_is_set(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    settings, transport = via_remote(fake_llm, api_key="")  # a server that needs a key
    relay = make_relay(settings, llm_transport=transport)
    asked(relay.handles["sense"], SenseBuffer.append, sense())
    assert tick(relay, logs) == "inactive"
    assert logs.named("agent.off")
    asked(
        relay.handles["ticker"],
        Ticker.update_config,
        convert({"openrouterApiKey": "new-key"}, AgentConfigUpdate),
    )
    assert tick(relay, logs) == "ok"
    assert fake_llm.requests[0].authorization == "Bearer new-key"


def test_a_crashed_llm_caller_is_restarted_and_the_agent_carries_on(
    relay: Relay, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay.handles["llm"].tell(RelayActor.inject_fault, "crash")
    wait_until(lambda: relay.handles["llm"].restarts == 1, what="llm restart")
    asked(relay.handles["sense"], SenseBuffer.append, sense())
    assert tick(relay, logs) == "ok"
    assert fake_llm.calls == 1


def test_runtime_config_survives_a_ticker_crash(relay: Relay) -> None:
    asked(
        relay.handles["ticker"],
        Ticker.update_config,
        convert({"intervalMs": 7_000, "model": "other/model"}, AgentConfigUpdate),
    )
    relay.handles["ticker"].tell(RelayActor.inject_fault, "crash")
    wait_until(lambda: relay.handles["ticker"].restarts == 1, what="ticker restart")
    config = asked(relay.handles["ticker"], Ticker.config)
    assert (config.interval_ms, config.model) == (7_000, "other/model")


def test_a_runtime_value_out_of_bounds_is_clamped_with_a_warning_naming_it(
    relay: Relay, logs: LogSink
) -> None:
    config = asked(
        relay.handles["ticker"],
        Ticker.update_config,
        convert(
            {"intervalMs": 1_000, "maxAge": 10**12, "cooldownMs": 2_000, "debounceMs": 0},
            AgentConfigUpdate,
        ),
    )
    assert (config.interval_ms, config.max_age_ms, config.cooldown_ms) == (5_000, 86_400_000, 2_000)
    warned = {(e["setting"], e["given"], e["used"]) for e in logs.named("agent.config_clamped")}
    assert warned == {("intervalMs", 1_000, 5_000), ("maxAge", 10**12, 86_400_000)}
    assert {e["level"] for e in logs.named("agent.config_clamped")} == {"warning"}


def test_a_debounce_longer_than_the_interval_is_capped_with_a_warning(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = make_relay(relay_settings(fake_llm, interval_ms=10_000, debounce_ms=60_000))
    wait_until(lambda: logs.named("agent.on"), what="the agent's start line")
    (warned,) = logs.named("agent.config_clamped")
    assert (warned["setting"], warned["given"], warned["used"]) == (
        "AGENT_DEBOUNCE_MS",
        60_000,
        10_000,
    )
    logs.clear()
    asked(
        relay.handles["ticker"],
        Ticker.update_config,
        convert({"debounceMs": 5_000}, AgentConfigUpdate),
    )
    assert logs.named("agent.config_clamped") == []
    asked(
        relay.handles["ticker"],
        Ticker.update_config,
        convert({"intervalMs": 6_000, "debounceMs": 7_000}, AgentConfigUpdate),
    )
    (warned,) = logs.named("agent.config_clamped")
    assert (warned["setting"], warned["given"], warned["used"]) == ("debounceMs", 7_000, 6_000)


def test_an_entry_records_how_fresh_its_window_was(
    relay: Relay, clock: FakeClock, logs: LogSink
) -> None:
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="older"))
    clock.advance(5)
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="newest"))
    clock.advance(2)
    assert tick(relay, logs) == "ok"
    assert last_entry(relay)["contextFreshnessMs"] == 2_000

    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="another"))
    clock.advance(10)
    assert tick(relay, logs) == "ok"
    assert last_entry(relay)["contextFreshnessMs"] == 10_000
    stats = asked(relay.handles["digest"], DigestStore.stats)
    assert stats["contextFreshnessMedianMs"] == 6_000
    assert stats["parseSuccessRate"] == 1.0


def test_the_parse_success_rate_counts_every_answer(
    relay: Relay, fake_llm: FakeLLM, logs: LogSink
) -> None:
    assert asked(relay.handles["digest"], DigestStore.stats)["parseSuccessRate"] is None
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="one"))
    assert tick(relay, logs) == "ok"
    fake_llm.mode = "plain"  # not JSON: kept as a raw-text fallback, counted as a parse failure
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="two"))
    assert tick(relay, logs) == "ok"
    stats = asked(relay.handles["digest"], DigestStore.stats)
    assert (stats["totalCalls"], stats["parseFailures"], stats["parseSuccessRate"]) == (2, 1, 0.5)


def test_the_next_prompt_does_not_give_the_previous_digest_back(
    relay: Relay, fake_llm: FakeLLM, clock: FakeClock, logs: LogSink
) -> None:
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="first screen"))
    assert tick(relay, logs) == "ok"
    clock.advance(40)
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="second screen"))
    assert tick(relay, logs) == "ok"
    second_prompt = fake_llm.requests[1].body["messages"][0]["content"]
    assert "second screen" in second_prompt
    assert fake_llm.digest not in second_prompt  # a small model would copy it as the answer


def test_an_entry_names_the_model_the_server_says_answered(
    relay: Relay, fake_llm: FakeLLM, logs: LogSink
) -> None:
    fake_llm.mode = "summarise"  # answers as `stand-in/heuristic`, whatever model was asked
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr="TODO: fix idle detection"))

    assert tick(relay, logs) == "ok"

    assert fake_llm.requests[0].body["model"] == "google/gemini-2.5-flash-lite"
    assert last_entry(relay)["model"] == "stand-in/heuristic"
    assert logs.named("tick")[-1]["model"] == "stand-in/heuristic"


def test_busy_skips_a_reader_saw_survive_a_crash_of_the_ticker(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = make_relay(relay_settings(fake_llm, timeout_ms=5_000))
    fake_llm.mode = "slow"
    fake_llm.delay_s = 0.5
    asked(relay.handles["sense"], SenseBuffer.append, sense())
    assert asked(relay.handles["ticker"], Ticker.tick) == "started"
    wait_until(lambda: fake_llm.calls == 1, what="the request to arrive")
    assert asked(relay.handles["ticker"], Ticker.tick) == "busy"
    wait_until(lambda: logs.named("tick"), what="the slow tick to finish")
    with client_for(relay) as client:
        wait_until(lambda: client.get("/health").json()["agent"]["busySkips"] == 1)

        ticker = relay.handles["ticker"]
        ticker.tell(RelayActor.inject_fault, "crash")
        wait_until(lambda: restarted(ticker, 1), what="the ticker's restart")

        assert client.get("/health").json()["agent"]["busySkips"] >= 1
