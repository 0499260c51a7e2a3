"""``agent.idleSkips`` counts what a fixed beat of ``intervalMs`` would have skipped.

Ticks run only when something arrives, so no tick runs while nothing does; the counter still
goes up by one for each interval that passes with nothing new, as the spec's 30 s timer
would, computed when it is read (no timer while idle). Real actors, the real fake LLM, the
injected clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from actors.agent.core.events import QuietSpell
from actors.agent.digest_store import DigestStore
from actors.kernel.base import ChildHandle, RelayActor
from actors.kernel.clock import FakeClock
from actors.tree import Relay
from tests.support.actor_calls import restarted, ticker_status
from tests.support.observe import LogSink, wait_until
from tests.support.relay import client_for, relay_settings
from transport.agent.fake_llm import FakeLLM

INTERVAL_S = 30.0
DEBOUNCE_S = 3.0
TRANSCRIPT = "[PERIODIC] (normal)\n[2s ago, openrouter] the idle counter"


@pytest.fixture
def relay(make_relay: Callable[..., Relay], fake_llm: FakeLLM) -> Relay:
    settings = relay_settings(
        fake_llm, interval_ms=round(INTERVAL_S * 1000), debounce_ms=round(DEBOUNCE_S * 1000)
    )
    return make_relay(settings)


def idle_skips(client: httpx.Client) -> int:
    """``/health.agent.idleSkips``, checked against ``relay_ticks_total{outcome="idle"}``."""
    health = client.get("/health").json()["agent"]["idleSkips"]
    metrics = client.get("/metrics").text
    (ticks,) = (f for f in text_string_to_metric_families(metrics) if f.name == "relay_ticks")
    (idle,) = (s.value for s in ticks.samples if s.labels.get("outcome") == "idle")
    assert int(idle) == health, "/metrics and /health disagree"
    return int(health)


def post_screen(client: httpx.Client, relay: Relay, ocr: str) -> None:
    event = {"type": "text", "ts": 1, "ocr": ocr, "meta": {"app": "code"}}
    assert client.post("/sense", json=event).status_code == 200
    ticker_status(relay)


def run_tick(relay: Relay, clock: FakeClock, logs: LogSink, outcome: str) -> None:
    """Let the debounce pass and wait for the tick it starts."""
    before = len(logs.named("tick"))
    clock.advance(DEBOUNCE_S)
    wait_until(lambda: len(logs.named("tick")) > before, what="the tick to end")
    assert logs.named("tick")[-1]["outcome"] == outcome
    wait_until(lambda: not ticker_status(relay)["inFlight"], what="the tick slot to free")


def test_each_quiet_interval_counts_one_idle_skip_without_a_timer(
    relay: Relay, client: httpx.Client, clock: FakeClock, logs: LogSink
) -> None:
    post_screen(client, relay, "def tick():")
    run_tick(relay, clock, logs, "ok")
    assert idle_skips(client) == 0

    clock.advance(INTERVAL_S - 0.5)
    assert idle_skips(client) == 0
    clock.advance(0.5)
    assert idle_skips(client) == 1  # the spec's check: a beat with nothing new
    assert ticker_status(relay)["nextTickInMs"] is None  # and still no timer armed
    clock.advance(2 * INTERVAL_S + 1)
    assert idle_skips(client) == 3

    # Something new ends the quiet spell: the count is kept, and a new spell starts with
    # the tick that covered it.
    before = len(logs.named("tick"))
    post_screen(client, relay, "def tock():")  # after a long spell, ticks at once
    wait_until(lambda: len(logs.named("tick")) > before, what="the tick to end")
    assert logs.named("tick")[-1]["outcome"] == "ok"
    assert idle_skips(client) == 3
    clock.advance(INTERVAL_S - 1)
    assert idle_skips(client) == 3
    clock.advance(1)
    assert idle_skips(client) == 4


def test_a_window_without_audio_or_screen_keeps_the_spell_idle(
    relay: Relay, client: httpx.Client, clock: FakeClock, logs: LogSink
) -> None:
    """A note posted to the feed is news, but the spec's tick would find its window empty."""
    clock.advance(INTERVAL_S * 0.5)
    assert client.post("/feed", json={"text": "a note, not a transcript"}).status_code == 200
    ticker_status(relay)
    run_tick(relay, clock, logs, "empty")
    clock.advance(INTERVAL_S * 0.5 - DEBOUNCE_S)
    assert idle_skips(client) == 1  # counted from the start, across the empty tick


def test_a_disabled_agent_counts_no_idle_skips(
    relay: Relay, client: httpx.Client, clock: FakeClock
) -> None:
    assert client.post("/agent/config", json={"enabled": False}).status_code == 200
    clock.advance(10 * INTERVAL_S)
    assert idle_skips(client) == 0
    assert client.post("/agent/config", json={"enabled": True}).status_code == 200
    clock.advance(INTERVAL_S)
    assert idle_skips(client) == 1


def test_idle_skips_survive_a_restart_of_the_relay(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, clock: FakeClock, tmp_path: Any
) -> None:
    settings = relay_settings(fake_llm, interval_ms=round(INTERVAL_S * 1000))
    settings = replace(settings, data_dir=str(tmp_path / "data"))
    first = make_relay(settings)
    with client_for(first) as c:
        clock.advance(2 * INTERVAL_S)
        assert idle_skips(c) == 2
    assert first.stop()
    second = make_relay(settings)
    with client_for(second) as c:
        assert idle_skips(c) == 2
        clock.advance(INTERVAL_S)
        assert idle_skips(c) == 3


def test_a_spell_counts_to_when_it_ended_however_late_the_store_hears_of_it(
    relay: Relay, client: httpx.Client, clock: FakeClock
) -> None:
    """The ticker says when a spell ended; a busy machine may deliver that late."""
    digest: ChildHandle[DigestStore] = relay.handles["digest"]
    start = clock.monotonic()
    digest.ask(DigestStore.on_event, QuietSpell(start, INTERVAL_S, start)).result(timeout=5)
    clock.advance(10 * INTERVAL_S)
    ended = start + 1.5 * INTERVAL_S
    digest.ask(DigestStore.on_event, QuietSpell(None, INTERVAL_S, ended)).result(timeout=5)
    assert idle_skips(client) == 1


def test_the_count_never_goes_back_below_what_a_reader_saw(
    relay: Relay, client: httpx.Client, clock: FakeClock
) -> None:
    digest: ChildHandle[DigestStore] = relay.handles["digest"]
    start = clock.monotonic()
    digest.ask(DigestStore.on_event, QuietSpell(start, INTERVAL_S, start)).result(timeout=5)
    clock.advance(3 * INTERVAL_S)
    assert idle_skips(client) == 3
    ended = QuietSpell(None, INTERVAL_S, start + INTERVAL_S)
    digest.ask(DigestStore.on_event, ended).result(timeout=5)
    assert idle_skips(client) == 3


def test_a_count_a_reader_saw_survives_a_crash_of_the_digest_store(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, clock: FakeClock, tmp_path: Any
) -> None:
    """What a reader was shown is stored before it is shown: a crash loses none of it."""
    settings = relay_settings(fake_llm, interval_ms=round(INTERVAL_S * 1000))
    relay = make_relay(replace(settings, data_dir=str(tmp_path / "data")))
    digest: ChildHandle[DigestStore] = relay.handles["digest"]
    with client_for(relay) as client:
        clock.advance(3 * INTERVAL_S)
        assert idle_skips(client) == 3
        digest.tell(RelayActor.inject_fault, "crash")
        wait_until(partial(restarted, digest, 1), what="the digest store's restart")
        assert idle_skips(client) >= 3
