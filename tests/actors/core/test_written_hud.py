"""The local worker sends a hud ahead of its answer as soon as the hud's string is closed."""

from __future__ import annotations

import pytest

from actors.agent.llm_worker import written_hud


@pytest.mark.parametrize(
    ("text", "hud"),
    [
        ('{"hud": "Editing app', None),  # still being written
        ('{"hud": "Editing app.py"', "Editing app.py"),
        ('{ "hud" :"Reading \\"main.py\\" in VS Code", "dig', 'Reading "main.py" in VS Code'),
        ('\n{"hud": "Caf\\u00e9 menu open",', "Café menu open"),
        ('{"digest": "first", "hud": "later"}', None),  # not first: left to the whole answer
        ('{"hud": 12, "digest": "x"}', None),
        ("The user is editing", None),
    ],
)
def test_the_hud_is_read_once_its_string_is_closed(text: str, hud: str | None) -> None:
    assert written_hud(text) == hud


def test_reading_a_long_unclosed_hud_is_linear() -> None:
    assert written_hud('{"hud": "' + "\\\\a" * 100_000) is None
