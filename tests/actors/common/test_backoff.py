"""The one backoff every retry and restart waits by. Each caller's own numbers are pinned by
its tests: the supervisor's (tests/actors/kernel/test_supervisor.py), the LLM caller's and the
breaker's (tests/actors/test_llm_path.py), a capture's (tests/actors/audio/test_capture.py)."""

from __future__ import annotations

import math

import pytest

from actors.common.backoff import backoff


def test_it_doubles_from_its_base_up_to_its_cap() -> None:
    assert [backoff(n, base=0.5, cap=4.0) for n in range(6)] == [0.5, 1, 2, 4, 4, 4]
    assert backoff(3, base=1.0, factor=3.0) == 27.0
    assert backoff(2, base=0.5) == 2.0  # no cap


def test_jitter_stretches_by_up_to_its_fraction_from_the_source_given() -> None:
    assert backoff(1, base=0.5, jitter=0.2, rng=lambda: 0.0) == 1.0
    assert backoff(1, base=0.5, jitter=0.2, rng=lambda: 1.0) == pytest.approx(1.2)
    assert backoff(9, base=1.0, cap=5.0, jitter=0.5, rng=lambda: 0.5) == 6.25  # cap, then jitter


def test_no_jitter_asks_no_random_number() -> None:
    def refuse() -> float:
        raise AssertionError("asked")

    assert backoff(2, base=1.0, rng=refuse) == 4.0


def test_a_step_past_what_a_float_holds_waits_the_cap() -> None:
    assert backoff(5000, base=0.5, cap=30.0) == 30.0
    assert backoff(5000, base=0.5) == math.inf
    assert backoff(5000, base=0.0, cap=30.0) == 0.0
