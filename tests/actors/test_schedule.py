"""The agent's schedule: debounce, max interval, cooldown and the fingerprint skip.

Real actors and the real fake LLM on loopback; time is the injected fake clock, which moves
only when a test advances it. ``show`` waits until the Ticker has seen the item, so a test's
clock steps line up with the schedule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from actors.agent.core.config_update import AgentConfigUpdate
from actors.agent.digest_store import DigestStore
from actors.agent.ticker import Ticker
from actors.core.bodies import convert
from actors.kernel.base import RelayActor
from actors.kernel.clock import FakeClock
from actors.tree import Relay
from tests.support.actor_calls import advance, asked, hear, last_entry, settled, show, ticker_status
from tests.support.observe import LogSink, wait_until
from tests.support.relay import relay_settings, via_remote
from transport.agent.fake_llm import FakeLLM


@pytest.fixture
def start(make_relay: Callable[..., Relay], fake_llm: FakeLLM) -> Callable[..., Relay]:
    def start(**agent: Any) -> Relay:
        schedule = {"debounce_ms": 3_000, "interval_ms": 30_000, **agent}
        return make_relay(relay_settings(fake_llm, **schedule))

    return start


def test_nothing_new_arms_no_timer(start: Callable[..., Relay], clock: FakeClock) -> None:
    relay = start()
    assert ticker_status(relay)["nextTickInMs"] is None
    assert advance(relay, clock, 3_600)["nextTickInMs"] is None


def test_a_tick_runs_the_debounce_after_the_last_item(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start()
    show(relay)
    assert ticker_status(relay)["nextTickInMs"] == 3_000
    assert advance(relay, clock, 2.9)["inFlight"] is False
    assert fake_llm.calls == 0
    advance(relay, clock, 0.1)
    assert [t["outcome"] for t in settled(relay, logs, 1)] == ["ok"]
    assert fake_llm.calls == 1


def test_each_new_item_restarts_the_debounce(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start()
    show(relay, "one")
    advance(relay, clock, 2)
    show(relay, "two")
    advance(relay, clock, 2)
    show(relay, "three")
    assert advance(relay, clock, 2.9)["pending"] is True
    assert fake_llm.calls == 0
    advance(relay, clock, 0.1)
    settled(relay, logs, 1)
    assert fake_llm.calls == 1
    prompt = fake_llm.requests[0].body["messages"][0]["content"]
    assert all(word in prompt for word in ("one", "two", "three"))


def test_a_steady_stream_ticks_at_the_latest_one_interval_after_the_previous_tick(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start()
    for n in range(15):  # an item every 2 s: never 3 s of quiet
        show(relay, f"line {n}")
        advance(relay, clock, 2)
    settled(relay, logs, 1)  # at 30 s after the Ticker started
    assert fake_llm.calls == 1
    for n in range(14):
        show(relay, f"more {n}")
        advance(relay, clock, 2)
    assert fake_llm.calls == 1  # 28 s after the first tick
    show(relay, "last")
    advance(relay, clock, 2)
    settled(relay, logs, 2)
    assert fake_llm.calls == 2


def test_after_a_quiet_spell_longer_than_the_interval_the_first_item_ticks_at_once(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start()
    advance(relay, clock, 31)
    show(relay)
    settled(relay, logs, 1)  # no clock step needed
    assert fake_llm.calls == 1


def test_a_debounce_longer_than_the_interval_is_capped(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start(debounce_ms=60_000, interval_ms=10_000)
    show(relay)
    assert ticker_status(relay)["nextTickInMs"] == 10_000
    advance(relay, clock, 10)
    settled(relay, logs, 1)
    assert fake_llm.calls == 1


def test_the_cooldown_keeps_llm_calls_apart(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start(cooldown_ms=20_000)
    show(relay, "first")
    advance(relay, clock, 3)
    settled(relay, logs, 1)
    show(relay, "second")
    assert ticker_status(relay)["nextTickInMs"] == 20_000  # 20 s after the first call began
    advance(relay, clock, 19.9)
    assert fake_llm.calls == 1
    advance(relay, clock, 0.1)
    settled(relay, logs, 2)
    assert fake_llm.calls == 2


def test_the_same_window_again_makes_no_llm_call(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start()
    show(relay, "def tick():")
    hear(relay)
    advance(relay, clock, 3)
    settled(relay, logs, 1)
    show(relay, "def tick():")  # the same OCR again...
    hear(relay)  # ...and the same transcript
    advance(relay, clock, 3)
    assert [t["outcome"] for t in settled(relay, logs, 2)] == ["ok", "unchanged"]
    assert fake_llm.calls == 1
    assert asked(relay.handles["digest"], DigestStore.stats)["unchangedSkips"] == 1

    show(relay, "def tock():")
    advance(relay, clock, 3)
    assert [t["outcome"] for t in settled(relay, logs, 3)][-1] == "ok"
    assert fake_llm.calls == 2


def test_the_agents_own_hud_line_schedules_nothing(
    start: Callable[..., Relay], clock: FakeClock, logs: LogSink
) -> None:
    relay = start()
    show(relay)
    advance(relay, clock, 3)
    settled(relay, logs, 1)
    assert last_entry(relay)["pushed"] is True
    after = ticker_status(relay)
    assert (after["pending"], after["nextTickInMs"]) == (False, None)


def test_a_failed_tick_is_tried_again_one_interval_later_without_news(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start()
    fake_llm.mode = "http401"  # not retried within the tick
    show(relay)
    advance(relay, clock, 3)
    assert [t["outcome"] for t in settled(relay, logs, 1)] == ["failed"]
    fake_llm.mode = "ok"
    assert ticker_status(relay)["nextTickInMs"] == 30_000
    advance(relay, clock, 30)
    assert [t["outcome"] for t in settled(relay, logs, 2)][-1] == "ok"


def test_news_during_a_tick_runs_a_tick_when_it_ends(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start()
    fake_llm.mode, fake_llm.delay_s = "slow", 0.3
    show(relay, "first")
    advance(relay, clock, 3)
    wait_until(lambda: fake_llm.calls == 1, what="the first call")
    show(relay, "second")
    assert advance(relay, clock, 3)["inFlight"] is True  # due, but one is in flight
    settled(relay, logs, 2)
    assert fake_llm.calls == 2
    assert "second" in fake_llm.requests[1].body["messages"][0]["content"]


def test_the_schedule_follows_a_runtime_change(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start()
    show(relay)
    asked(
        relay.handles["ticker"],
        Ticker.update_config,
        convert({"debounceMs": 500}, AgentConfigUpdate),
    )
    assert ticker_status(relay)["nextTickInMs"] == 500
    advance(relay, clock, 0.5)
    settled(relay, logs, 1)
    assert fake_llm.calls == 1
    assert asked(relay.handles["ticker"], Ticker.config).debounce_ms == 500


def test_an_inactive_agent_waits_and_ticks_once_it_has_a_key(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, clock: FakeClock, logs: LogSink
) -> None:
    settings, transport = via_remote(fake_llm, api_key="", debounce_ms=3_000)
    relay = make_relay(settings, llm_transport=transport)
    show(relay)
    assert ticker_status(relay)["nextTickInMs"] is None
    asked(
        relay.handles["ticker"],
        Ticker.update_config,
        convert({"openrouterApiKey": "late-key"}, AgentConfigUpdate),
    )
    advance(relay, clock, 3)
    settled(relay, logs, 1)
    assert fake_llm.requests[0].authorization == "Bearer late-key"


def test_pending_news_survives_a_ticker_crash(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start()
    show(relay)
    relay.handles["ticker"].tell(RelayActor.inject_fault, "crash")
    wait_until(lambda: relay.handles["ticker"].restarts == 1, what="ticker restart")
    assert ticker_status(relay)["pending"] is True
    advance(relay, clock, 3)
    settled(relay, logs, 1)
    assert fake_llm.calls == 1
