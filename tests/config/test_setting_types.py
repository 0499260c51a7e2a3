"""A setting's text decoded as its field's type (:func:`config.common.setting_types.decode`):
msgspec checks the bounds the field declares, and a refusal states them."""

from __future__ import annotations

from dataclasses import fields
from typing import Annotated, Any, Literal, get_type_hints

import pytest
from msgspec import Meta
from msgspec import inspect as types

from config.agent.settings import AgentSettings
from config.audio.settings import AudioConfig
from config.common.errors import ConfigError
from config.common.setting_types import Names, PositiveNumber, decode
from config.options import OPTIONS, SECTIONS
from config.privacy import PrivacySettings
from config.settings import Settings

Nine = Annotated[int, Meta(ge=3, le=9, description="a made-up setting", extra={"env": "NINE"})]


@pytest.mark.parametrize(
    ("annotation", "raw", "message"),
    [
        (Nine, "10", "NINE must be a whole number from 3 to 9, got '10'"),
        (Nine, " 2 ", "NINE must be a whole number from 3 to 9, got '2'"),
        (Nine, "4.0", "NINE must be a whole number from 3 to 9, got '4.0'"),
        (Annotated[int, Meta(ge=0)], "-1", "NINE must be a whole number of 0 or more"),
        (Annotated[float, Meta(ge=0.5, le=1.5)], "2", "NINE must be a number from 0.5 to 1.5"),
        (PositiveNumber, "inf", "NINE must be a positive number, got 'inf'"),
        (Literal["b", "a"], "c", "NINE must be one of b, a, got 'c'"),  # as declared
        (bool, "sure", "NINE must be true or false, got 'sure'"),
        (Annotated[str, Meta(min_length=1)], "  ", "NINE must not be empty"),
    ],
)
def test_a_refusal_names_the_setting_and_the_bounds_its_field_declares(
    annotation: Any, raw: str, message: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        decode(annotation, "NINE", raw)
    assert message in str(refused.value)


@pytest.mark.parametrize(
    ("annotation", "raw", "value"),
    [
        (Nine, " 009 ", 9),  # ASCII digits, as written
        (PositiveNumber, "1_000.5", 1000.5),
        (bool, "On", True),
        (bool, "no", False),
        (Literal["json_schema", "off"], " JSON_Schema ", "json_schema"),
        (Names, " a, ,b ,", ("a", "b")),
    ],
)
def test_text_is_read_as_its_fields_type(annotation: Any, raw: str, value: Any) -> None:
    assert decode(annotation, "NINE", raw) == value


def test_each_setting_is_a_field_that_names_its_variable_and_says_what_it_means() -> None:
    sections = [Settings, AgentSettings, AudioConfig, PrivacySettings]
    assert [section.owner for section in SECTIONS] == sections
    declared = set()
    for section in SECTIONS:
        hints = get_type_hints(section.owner, include_extras=True)
        for field in fields(section.owner):
            info = types.type_info(hints[field.name])
            if isinstance(info, types.Metadata) and "env" in (info.extra or {}):
                declared.add((section.name, field.name))
    assert {(option.section, option.attr) for option in OPTIONS} == declared
    assert len(OPTIONS) == len(declared) == len({option.name for option in OPTIONS})
    assert all(option.help for option in OPTIONS)
