"""The freshness bench's figures for labelled moments and cost, from made-up runs."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from bench.bench_freshness import (
    HEADER,
    NAMED_SESSIONS,
    hourly_cost,
    main,
    moment_acks,
    moment_to_hud_s,
    print_ratios,
    session_path,
)
from bench.day_session import DAY_SESSION, Moment
from transport.demo.replay import DEMO_SESSION, Posted, SessionEvent


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


def test_the_cost_per_hour_is_what_the_relay_counted_for_the_session_time() -> None:
    models = {
        "google/gemini-2.5-flash-lite": {"calls": 2, "costUsd": 0.000_56},
        "google/gemini-2.5-flash": {"calls": 1, "costUsd": 0.001_2},
        "local/unpriced": {"calls": 1, "costUsd": None},
    }
    health = {"agent": {"costByModel": models}}
    assert math.isclose(hourly_cost(health, session_s=1_800), (0.000_56 + 0.001_2) * 2)
    assert hourly_cost({"agent": {"costByModel": {}}}, session_s=60) == 0
    assert hourly_cost({}, session_s=60) == 0


def test_sessions_are_named_or_paths() -> None:
    assert NAMED_SESSIONS == {"demo": DEMO_SESSION, "day": DAY_SESSION}
    assert session_path("day") == DAY_SESSION
    assert session_path("mine.jsonl") == Path("mine.jsonl")


def test_a_session_that_cannot_be_read_stops_the_bench_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"at": 0, "path": "/feed", "body": {"text": "x"}}\n')
    bad.with_name("bad.labels.json").write_text('{"moments": [{"at": 4, "reason": "x"}]}')
    for session, error in ((tmp_path / "none.jsonl", "No such file"), (bad, "no request at 4")):
        with pytest.raises(SystemExit) as exit_info:
            main(["--session", str(session)])
        assert exit_info.value.code == 2
        assert error in capsys.readouterr().err


def test_the_vision_ratios_are_the_first_rows_calls_tokens_and_cost_over_the_seconds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cells = {"LLM calls": ("11", "10"), "tokens in": ("9000", "6000"), "$/h": ("$0.06", "$0.02")}
    rows = []
    for n, name in enumerate(("vision on", "vision off")):
        rows.append(tuple(cells[h][n] if h in cells else name for h in HEADER))
    print_ratios(rows)
    assert capsys.readouterr().out.strip() == (
        "vision on / vision off: LLM calls 1.10, tokens in 1.50, $/h 3.00"
    )
