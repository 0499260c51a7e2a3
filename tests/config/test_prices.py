"""The price table: the built-in one, a user's file (``RELAY_PRICES``), and bad files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pykka
import pytest

import run
from actors.agent.core.counting.cost import call_cost
from config.common.errors import ConfigError
from config.prices import BUILT_IN, Price, load_prices
from tests.support.relay import relay_settings

FLASH_LITE = "google/gemini-2.5-flash-lite"


def test_the_built_in_table_prices_the_default_model_and_a_few_common_ones():
    table = load_prices()
    assert table[FLASH_LITE] == Price(input=0.10, output=0.40)
    assert table["google/gemini-2.0-flash-lite-001"] == Price(input=0.075, output=0.30)
    assert {"openai/gpt-4o-mini", "anthropic/claude-3.5-haiku"} <= set(table)
    assert BUILT_IN.name == "prices.json" and BUILT_IN.parent.name == "config"


def test_a_user_file_extends_the_table_and_overrides_its_entries(tmp_path: Path):
    user = tmp_path / "prices.json"
    user.write_text(
        '{"models": {"google/gemini-2.5-flash-lite": {"input": 1, "output": 2},'
        ' "local/llama3": {"input": 0, "output": 0}}}'
    )
    table = load_prices(str(user))
    assert table[FLASH_LITE] == Price(input=1.0, output=2.0)
    assert table["local/llama3"] == Price(input=0.0, output=0.0)
    assert table["openai/gpt-4o-mini"] == load_prices()["openai/gpt-4o-mini"]  # kept
    assert call_cost("local/llama3", 5000, 500, None, table) == (0.0, "table")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ("[]", 'a "models" object'),
        ('{"google/gemini-2.5-flash-lite": {"input": 1, "output": 2}}', 'a "models" object'),
        ('{"models": {"m": {"input": 1}}}', '{"input": <USD per million>'),
        ('{"models": {"m": {"input": 1, "output": 2, "cached": 0.5}}}', "must be"),
        ('{"models": {"m": {"inptu": 1, "output": 2}}}', "must be"),
        ('{"models": {"m": {"input": -1, "output": 2}}}', "m.input must be a number of 0"),
        ('{"models": {"m": {"input": "0.1", "output": 2}}}', "m.input must be a number"),
        ('{"models": {"m": {"input": true, "output": 2}}}', "m.input must be a number"),
        ('{"models": {"m": [0.1, 0.4]}}', "must be"),
        ('{"models": {" ": {"input": 1, "output": 2}}}', "model names must be non-empty"),
    ],
)
def test_a_bad_prices_file_is_refused_with_what_is_wrong(tmp_path: Path, content, fragment):
    user = tmp_path / "prices.json"
    user.write_text(content)
    with pytest.raises(ConfigError, match="RELAY_PRICES") as caught:
        load_prices(str(user))
    assert fragment in str(caught.value)


def test_a_missing_prices_file_is_refused(tmp_path: Path):
    with pytest.raises(ConfigError, match="RELAY_PRICES: cannot read"):
        load_prices(str(tmp_path / "nowhere.json"))


def test_a_bad_prices_file_stops_start_up_with_exit_code_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    user = tmp_path / "prices.json"
    user.write_text('{"models": {"m": {"input": -1, "output": 2}}}')
    monkeypatch.setenv("RELAY_PRICES", str(user))
    monkeypatch.setenv("RELAY_PORT", "1")  # never bound: the check comes first
    with pytest.raises(SystemExit) as exited:
        run.main([])
    assert exited.value.code == 2
    assert "m.input must be a number of 0 or more" in capsys.readouterr().err
    assert not pykka.ActorRegistry.get_all()


def test_start_relay_refuses_a_bad_prices_file(make_relay, tmp_path: Path):
    user = tmp_path / "prices.json"
    user.write_text("{}")
    with pytest.raises(ConfigError, match='"models"'):
        make_relay(replace(relay_settings(), prices_file=str(user)))
