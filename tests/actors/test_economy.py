"""Agent economy: the LLM is called on meaningful changes only, soon after them, and never more
often than a fixed beat of the interval would call it.

Real actors and the real fake LLM on loopback; time is the injected fake clock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from actors.agent.core.prompt import AUDIO_NOW
from actors.agent.digest_store import DigestStore
from actors.core.shapes import MARKS, TRANSCRIPT_SOURCE, AudioSource
from actors.ingest.feed_buffer import FeedBuffer
from actors.kernel.clock import FakeClock
from actors.tree import Relay
from tests.support.actor_calls import advance, asked, settled, show, ticker_status
from tests.support.observe import LogSink, wait_until
from tests.support.relay import relay_settings
from transport.agent.fake_llm import FakeLLM

CODE = "def classify(last_ms, now_ms):\n    return 'idle' if now_ms - last_ms > IDLE else 'on'"


def clock_at(minute: int) -> str:
    """The same editor with the menu bar's clock at ``minute``: flicker."""
    return f"File  Edit  View   Mon 10:{minute:02d}\n{CODE}"


def looked(relay: Relay) -> None:
    """Wait until the tick the clock made due, if any, has ended."""
    wait_until(lambda: not ticker_status(relay)["inFlight"], what="the tick to end")


@pytest.fixture
def start(make_relay: Callable[..., Relay], fake_llm: FakeLLM) -> Callable[..., Relay]:
    def start(**agent: Any) -> Relay:
        schedule = {"debounce_ms": 3_000, "interval_ms": 30_000, "economy": True, **agent}
        return make_relay(relay_settings(fake_llm, **schedule))

    return start


def outcomes(logs: LogSink) -> list[str]:
    return [t["outcome"] for t in logs.named("tick")]


def test_flicker_makes_no_call_and_is_counted_as_minor(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start()
    show(relay, clock_at(0), app="Code")
    advance(relay, clock, 1)  # the first news after a quiet spell is looked at after 1 s
    settled(relay, logs, 1)
    assert fake_llm.calls == 1
    for minute in range(1, 13):  # a frame every second for 12 s: only the clock moves
        show(relay, clock_at(minute), app="Code")
        advance(relay, clock, 1)
        looked(relay)
    assert fake_llm.calls == 1
    assert set(outcomes(logs)[1:]) == {"minor"}
    assert logs.named("tick")[-1]["reason"] == "nothing"
    stats = asked(relay.handles["digest"], DigestStore.stats)
    assert stats["minorSkips"] == len(outcomes(logs)) - 1
    assert asked(relay.handles["digest"], DigestStore.metrics).ticks["minor_skip"] >= 4


def test_an_error_amid_flicker_is_called_within_the_debounce(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start()
    show(relay, clock_at(0), app="Code")
    advance(relay, clock, 1)
    settled(relay, logs, 1)
    for minute in range(1, 8):
        show(relay, clock_at(minute), app="Code")
        advance(relay, clock, 1)
        looked(relay)
    calls = fake_llm.calls
    show(relay, clock_at(8) + "\nTypeError: classify() missing 1 required argument", app="Code")
    for minute in range(9, 12):  # the flicker goes on
        advance(relay, clock, 1)
        looked(relay)
        show(relay, clock_at(minute) + "\nTypeError: classify() missing 1", app="Code")
    advance(relay, clock, 3)
    looked(relay)
    ticks = logs.named("tick")
    assert fake_llm.calls == calls + 1, ticks
    called = [t for t in ticks if t["outcome"] == "ok"][-1]
    assert called["reason"] == "error"
    assert "TypeError" in called["change"]


@pytest.mark.parametrize(("source", "label"), [("system", "user heard"), ("mic", "user said")])
def test_a_transcript_of_the_relay_is_a_question_the_model_hears_with_whose_words_they_are(
    start: Callable[..., Relay],
    clock: FakeClock,
    fake_llm: FakeLLM,
    logs: LogSink,
    source: AudioSource,
    label: str,
) -> None:
    relay = start()
    show(relay, CODE, app="Code")
    advance(relay, clock, 1)
    settled(relay, logs, 1)
    advance(relay, clock, 40)  # a quiet spell: the next news is looked at after 1 s
    text = MARKS[source] + "where is the config file?"
    asked(relay.handles["feed"], FeedBuffer.append, text, "normal", TRANSCRIPT_SOURCE)
    advance(relay, clock, 1)
    looked(relay)
    assert fake_llm.calls == 2, logs.named("tick")
    called = logs.named("tick")[-1]
    assert (called["reason"], called["change"]) == ("question", "where is the config file?")
    prompt = fake_llm.requests[-1].body["messages"][-1]["content"]
    audio = prompt.split(AUDIO_NOW + "\n", 1)[1].split("\n\n", 1)[0]
    assert audio == f"[1s ago] ({label}) where is the config file?"


def test_the_first_news_after_a_quiet_spell_is_looked_at_fast(
    start: Callable[..., Relay], clock: FakeClock
) -> None:
    relay = start()
    show(relay, CODE)
    assert ticker_status(relay)["nextTickInMs"] == 1_000


def test_a_burst_of_switching_is_called_once_it_settles(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start()
    show(relay, CODE, app="Code")
    advance(relay, clock, 1)
    settled(relay, logs, 1)
    advance(relay, clock, 40)  # a quiet spell: the next news is looked at after 1 s
    for app in ("Mail", "Slack", "Chrome", "Slack"):  # a switch every half second
        show(relay, f"the {app} window", app=app)
        advance(relay, clock, 0.5)
        looked(relay)
    assert fake_llm.calls == 1, logs.named("tick")
    assert "deferred" in outcomes(logs)
    assert logs.named("tick")[-1].get("waiting") == "settling"
    advance(relay, clock, 3)
    looked(relay)
    assert fake_llm.calls == 2
    assert "the Slack window" in str(fake_llm.requests[-1].body)
    assert logs.named("tick")[-1]["reason"] == "app"


def test_calls_never_outnumber_a_fixed_beat_and_a_deferred_change_waits_for_the_next_slot(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start(debounce_ms=1_000)
    for n, app in enumerate(("Code", "Chrome", "Slack", "Terminal")):  # one every 5 s
        show(relay, f"what {app} shows", app=app)
        advance(relay, clock, 5 if n else 1)
        settled(relay, logs, n + 1)
    # one slot of the beat (30 s) has had news so far: its call and the one allowed ahead
    assert fake_llm.calls == 2
    assert [t.get("waiting") for t in logs.named("tick")[2:]] == ["budget"] * 2
    advance(relay, clock, 15)  # into the next slot, with news in it
    show(relay, "what Terminal shows, one more line of output", app="Terminal")
    advance(relay, clock, 1)
    settled(relay, logs, 5)
    assert fake_llm.calls == 3
    assert "Terminal" in str(fake_llm.requests[-1].body)
    show(relay, "what Code shows", app="Code")  # the same slot: its call is spent
    advance(relay, clock, 1)
    settled(relay, logs, 6)
    assert fake_llm.calls == 3
    assert logs.named("tick")[-1]["waiting"] == "budget"


def test_a_minor_change_is_summarised_once_an_interval_old(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start()
    show(relay, CODE, app="Code")
    advance(relay, clock, 1)
    settled(relay, logs, 1)
    show(relay, CODE + "\n# a comment", app="Code")  # one new line: minor
    advance(relay, clock, 3)
    settled(relay, logs, 2)
    assert logs.named("tick")[-1]["outcome"] == "minor"
    assert fake_llm.calls == 1
    assert ticker_status(relay)["nextTickInMs"] == 27_000  # 30 s after the call began, at 1 s
    advance(relay, clock, 26.5)  # into the beat's next slot, where flicker earns a call
    show(relay, CODE + "\n# a comment", app="Code")
    advance(relay, clock, 0.5)
    settled(relay, logs, 3)
    assert fake_llm.calls == 2
    assert logs.named("tick")[-1]["reason"] == "minor_stale"


def test_a_minor_change_does_not_spend_the_last_call(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start()
    show(relay, CODE, app="Code")
    advance(relay, clock, 1)
    settled(relay, logs, 1)
    show(relay, CODE + "\n# a comment", app="Code")
    advance(relay, clock, 3)
    settled(relay, logs, 2)
    advance(relay, clock, 27)  # an interval old, but no news since: one call left, kept
    settled(relay, logs, 3)
    assert fake_llm.calls == 1
    assert logs.named("tick")[-1]["outcome"] == "minor"
    assert ticker_status(relay)["nextTickInMs"] is None


def test_with_economy_off_every_new_window_is_called(
    start: Callable[..., Relay], clock: FakeClock, fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = start(economy=False)
    show(relay, clock_at(0), app="Code")
    advance(relay, clock, 3)
    settled(relay, logs, 1)
    show(relay, clock_at(1), app="Code")
    advance(relay, clock, 3)
    settled(relay, logs, 2)
    assert fake_llm.calls == 2
    assert logs.named("tick")[-1]["reason"] == "new"
