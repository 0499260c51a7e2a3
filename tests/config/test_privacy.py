"""The privacy matrix from ``PRIVACY_MODE`` and its cells: presets, overrides, refusals."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from config.command_line import load_settings
from config.common.errors import ConfigError
from config.privacy import (
    DESTINATIONS,
    KINDS,
    MODES,
    PRESETS,
    Matrix,
    default_matrix,
    privacy_matrix,
    variable,
)
from config.settings import Settings


def matrix_of(environ: dict[str, str]) -> Matrix:
    settings = load_settings([], environ, isatty=False)
    return privacy_matrix(settings.privacy, redact=settings.redact)


def test_unset_the_matrix_is_the_relays_default_text_redacted_images_to_a_vision_model() -> None:
    matrix = matrix_of({})
    assert matrix == default_matrix(redact=True)
    assert {matrix.ocr.openrouter, matrix.audio.local_llm, matrix.titles.agent_gateway} == {
        "redacted"
    }
    assert (matrix.images.openrouter, matrix.images.local_llm) == ("full", "none")
    assert matrix_of({"RELAY_REDACT": "off"}).ocr.local_buffer == "full"


def test_a_preset_sets_every_cell_as_sinain_does() -> None:
    paranoid = matrix_of({"PRIVACY_MODE": "paranoid"})
    assert (paranoid.ocr.openrouter, paranoid.images.openrouter) == ("none", "none")
    strict = matrix_of({"PRIVACY_MODE": "Strict"})
    assert (strict.ocr.openrouter, strict.images.openrouter) == ("summary", "none")
    standard = matrix_of({"PRIVACY_MODE": "standard"})
    assert (standard.ocr.openrouter, standard.images.openrouter) == ("redacted", "none")
    off = matrix_of({"PRIVACY_MODE": "off"})
    assert {getattr(getattr(off, k), d) for k in KINDS for d in DESTINATIONS} == {"full"}


def test_a_cell_set_on_its_own_overrides_the_preset() -> None:
    matrix = matrix_of({"PRIVACY_MODE": "paranoid", "PRIVACY_OCR_LOCAL_LLM": "summary"})
    assert matrix.ocr.local_llm == "summary"
    assert matrix.ocr.openrouter == "none"
    assert matrix_of({"PRIVACY_IMAGES_OPENROUTER": "none"}).images.openrouter == "none"
    flagged = load_settings(["--privacy-ocr-local-buffer", "none"], {}, isatty=False)
    assert privacy_matrix(flagged.privacy, redact=True).ocr.local_buffer == "none"


@pytest.mark.parametrize(
    ("variable", "value"),
    [("PRIVACY_MODE", "secret"), ("PRIVACY_OCR_OPENROUTER", "partial")],
)
def test_a_bad_value_stops_the_start_naming_the_variable(variable: str, value: str) -> None:
    with pytest.raises(ConfigError, match=rf"^{variable} must be one of .*got '{value}'"):
        load_settings([], {variable: value}, isatty=False)


def test_a_redacted_cell_while_redaction_is_off_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"PRIVACY_OCR_LOCAL_BUFFER is redacted .*RELAY_REDACT"):
        load_settings([], {"PRIVACY_MODE": "standard", "RELAY_REDACT": "off"}, isatty=False)
    with pytest.raises(ConfigError, match=r"PRIVACY_AUDIO_OPENROUTER is redacted .*itself"):
        load_settings(
            [], {"PRIVACY_AUDIO_OPENROUTER": "redacted", "RELAY_REDACT": "0"}, isatty=False
        )


def test_the_matrix_is_shown_with_camel_case_keys() -> None:
    shown = msgspec.to_builtins(PRESETS["strict"])
    assert shown["ocr"] == {
        "localBuffer": "redacted",
        "openrouter": "summary",
        "localLlm": "summary",
        "agentGateway": "none",
    }
    assert set(shown) == set(KINDS)


def test_a_column_is_one_destinations_levels() -> None:
    column = PRESETS["standard"].column("openrouter")
    assert (column.ocr, column.images, column.audio, column.titles) == (
        "redacted",
        "none",
        "redacted",
        "summary",
    )
    assert Settings().privacy.mode == ""


def test_the_privacy_document_states_every_preset_cell_as_the_code_does() -> None:
    """docs/privacy.md's presets table: a row per cell, the unset default then each preset."""
    doc = Path(__file__).resolve().parents[2] / "docs" / "privacy.md"
    rows = {}
    for line in doc.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip().strip("`") for cell in line.strip().strip("|").split("|")]
        if len(cells) == 6 and "_" in cells[0] and cells[0].isupper():
            rows[cells[0]] = tuple(cells[1:])
    default = default_matrix(redact=True)
    expected = {}
    for kind in KINDS:
        for destination in DESTINATIONS:
            name = variable(kind, destination).removeprefix("PRIVACY_")
            matrices = (default, *(PRESETS[mode] for mode in MODES))
            expected[name] = tuple(getattr(getattr(m, kind), destination) for m in matrices)
    assert rows == expected
