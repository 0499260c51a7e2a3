"""The kernel's error texts: through the scrubber it was handed, the type alone without one."""

from __future__ import annotations

import pytest

from actors.core.error_text import safe_text
from actors.kernel import scrubber
from actors.kernel.scrubber import WITHHELD, error_text, scrubbed, use_scrubber
from tests.support.redaction_samples import SK, A


@pytest.mark.usefixtures("no_scrubber")
def test_without_a_scrubber_an_error_shows_its_type_alone() -> None:
    assert error_text(RuntimeError(f"refused key {SK}")) == "RuntimeError"
    assert scrubbed(f"refused key {SK}") == WITHHELD


@pytest.mark.usefixtures("no_scrubber")
def test_the_scrubber_handed_is_what_every_error_text_passes_through() -> None:
    use_scrubber(safe_text)
    assert error_text(RuntimeError(f"refused key {SK}")) == f"RuntimeError: refused key {A}"
    assert scrubbed(f"refused key {SK}") == f"refused key {A}"
    assert use_scrubber(None) is safe_text


def test_the_tests_hand_the_kernel_what_the_composition_root_hands_it() -> None:
    assert scrubber._scrubber is safe_text
