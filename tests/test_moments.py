"""When a hud answered each labelled moment (``tests/support/day_session.py``), from made-up
runs of the agent."""

from __future__ import annotations

from typing import Any

from tests.support.day_session import Moment, moment_acks, moment_to_hud_s
from transport.demo.replay import Posted, SessionEvent


def entry(started_ms: int, latency_ms: int, tokens: tuple[int, int] = (0, 0)) -> dict[str, Any]:
    """An agent entry as ``/agent/history`` serves it: stored when its call answered."""
    return {
        "ts": started_ms + latency_ms,
        "latencyMs": latency_ms,
        "tokensIn": tokens[0],
        "tokensOut": tokens[1],
    }


def test_a_moment_is_answered_by_the_first_call_after_it_and_before_the_next_moment() -> None:
    entries = [
        entry(500, 400),  # started before the first moment: answers nothing
        entry(2_000, 1_000),  # the first moment's
        entry(3_500, 1_000),  # a later one: not the first
        entry(9_200, 1_000),  # after the third moment: the second goes unanswered
        entry(20_000, 1_000),  # the last moment's, however late
    ]
    acks = [1_000, 5_000, 9_000, 12_000]
    assert moment_to_hud_s(acks, entries, speed=1) == [2.0, None, 1.2, 9.0]
    assert moment_to_hud_s(acks, entries, speed=10) == [20.0, None, 12.0, 90.0]
    assert moment_to_hud_s([1_000], [], speed=1) == [None]


def test_a_call_starting_at_the_acknowledgement_answers_and_at_the_next_one_does_not() -> None:
    entries = [entry(1_000, 500), entry(5_000, 500)]
    assert moment_to_hud_s([1_000, 5_000], entries, speed=1) == [0.5, 0.5]
    assert moment_to_hud_s([1_000, 1_000 + 1], [entry(1_001, 500)], speed=1) == [None, 0.5]


def test_a_moment_whose_request_failed_is_unanswered_and_bounds_nothing() -> None:
    events = [SessionEvent(at, "/feed", {"text": "x"}) for at in (0.0, 1.0, 1.0, 2.0)]
    posted = [
        Posted(0.0, "/feed", 0, 100, 200),
        Posted(1.0, "/feed", 0, 1_100, 200),
        Posted(1.0, "/feed", 0, 1_200, 200),
        Posted(2.0, "/feed", 0, 2_100, 503),
    ]
    moments = [Moment(0.0, "a"), Moment(1.0, "b"), Moment(2.0, "c")]
    assert moment_acks(moments, events, posted) == [100, 1_100, None]
    assert moment_acks(moments, events, posted[:2]) == [100, 1_100, None]
    acks = [100, None, 5_000]
    assert moment_to_hud_s(acks, [entry(3_000, 1_000)], speed=1) == [3.9, None, None]
