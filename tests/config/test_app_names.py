"""The app-name table of the v2 spec (section 4)."""

from __future__ import annotations

import pytest

from config.app_names import APP_NAMES, normalize_app_name

SPEC_TABLE = {
    "idea": "IntelliJ IDEA",
    "code": "VS Code",
    "code - insiders": "VS Code Insiders",
    "webstorm": "WebStorm",
    "pycharm": "PyCharm",
    "datagrip": "DataGrip",
    "google chrome": "Chrome",
    "firefox": "Firefox",
    "safari": "Safari",
    "telegram lite": "Telegram",
    "telegram": "Telegram",
    "iterm2": "iTerm",
    "terminal": "Terminal",
    "finder": "Finder",
    "audio midi setup": "Audio MIDI Setup",
}


def test_table_is_exactly_the_specs():
    assert APP_NAMES == SPEC_TABLE


@pytest.mark.parametrize(("raw", "display"), sorted(SPEC_TABLE.items()))
def test_each_process_name_is_normalised(raw, display):
    assert normalize_app_name(raw) == display


@pytest.mark.parametrize(
    ("raw", "display"),
    [
        ("IDEA", "IntelliJ IDEA"),
        ("Idea", "IntelliJ IDEA"),
        ("Google Chrome", "Chrome"),
        ("GOOGLE CHROME", "Chrome"),
        ("Code - Insiders", "VS Code Insiders"),
        ("iTerm2", "iTerm"),
        ("Telegram Lite", "Telegram"),
        ("Audio MIDI Setup", "Audio MIDI Setup"),
    ],
)
def test_lookup_ignores_case(raw, display):
    assert normalize_app_name(raw) == display


@pytest.mark.parametrize(("raw", "display"), [(" Code ", "VS Code"), ("\tsafari\n", "Safari")])
def test_lookup_ignores_surrounding_white_space(raw, display):
    assert normalize_app_name(raw) == display


@pytest.mark.parametrize("raw", ["Slack", "Obsidian", "unknown", "", "Chrome", "vs code", " Foo "])
def test_unknown_names_pass_through_unchanged(raw):
    assert normalize_app_name(raw) == raw


def test_display_names_are_not_remapped():
    assert normalize_app_name("IntelliJ IDEA") == "IntelliJ IDEA"
    assert normalize_app_name("iTerm") == "iTerm"
