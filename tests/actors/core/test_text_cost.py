"""Whatever reads a person's screen or speech costs time in proportion to its length: every
entry point of the relay's text work, fed every shape of ``tests/data/adversarial_text.json``
at 1x, 4x and 16x a size, grows about linearly (a ratio of CPU times measured in one run, with
a generous bound: quadratic work grows 16x from 1x to 16x, linear work about 1x), and reads
2 MiB of the shapes marked ``slow`` (a backtracking scan takes seconds or more over them)
well under a second.

``python -m bench text-cost`` prints the figures.
"""

from __future__ import annotations

import pytest

from actors.agent.chat_request import MAX_RESPONSE_BYTES
from tests.support.text_cost import ENTRY_POINTS, cost_s, growth, shapes

SIZE = 2048
"""The smallest size measured (characters); 4x and 16x it are measured too."""
BOUND = 4.0
"""The most one character may cost more at 16x (or 4x) the size than at 1x: linear work stays
near 1 (lower, when a call's fixed cost weighs at the small size), quadratic work reaches 16."""
HUGE = 2 * 1024 * 1024
"""A body's most (``POST /sense`` and ``/feed``)."""
LARGEST = {"answer and hud check": MAX_RESPONSE_BYTES}
"""Entry points that are never given as much: the LLM client reads no longer answer."""
HUGE_CPU_S = 2.0
"""Thread CPU seconds that 2 MiB of one of the shapes marked ``slow`` may take at the most: it
makes a scan that backtracks, or starts again at each match, take seconds or more."""


@pytest.mark.slow
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_cost_grows_linearly_with_the_text(entry: str) -> None:
    function = ENTRY_POINTS[entry]
    grown = {}
    for shape in shapes():
        ratios = growth(function, shape, SIZE)
        if max(ratios.values()) > BOUND:
            grown[shape.name] = {f"{factor}x": round(r, 1) for factor, r in ratios.items()}
    assert not grown, f"{entry}: cost per character grew by {grown}"


@pytest.mark.slow
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_a_body_of_the_slowest_shapes_takes_well_under_a_second(entry: str) -> None:
    function = ENTRY_POINTS[entry]
    slow = {}
    for shape in shapes():
        if shape.slow:
            spent = cost_s(function, shape, LARGEST.get(entry, HUGE))
            if spent > HUGE_CPU_S:
                slow[shape.name] = round(spent, 2)
    assert not slow, f"{entry}: CPU seconds for 2 MiB: {slow}"


def test_the_corpus_names_each_shape_once() -> None:
    names = [shape.name for shape in shapes()]
    assert len(names) == len(set(names))
    assert any(shape.slow for shape in shapes())
