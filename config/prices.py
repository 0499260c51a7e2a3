"""The per-model price table: the built-in ``config/prices.json``, extended by ``RELAY_PRICES``.

Both files have one shape::

    {"models": {"google/gemini-2.5-flash-lite": {"input": 0.10, "output": 0.40}}}

``input`` and ``output`` are USD per million prompt and completion tokens. Other top-level
keys (a ``note``) are ignored; anything else that is not this shape is refused with a
:class:`~config.settings.ConfigError`, so a bad user file stops start-up with exit code 2.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import orjson

from config.common.errors import ConfigError

BUILT_IN = Path(__file__).with_name("prices.json")
"""The table that ships with the relay."""
_ENTRY_KEYS = frozenset(("input", "output"))


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens of one model."""

    input: float
    """Per million prompt tokens."""
    output: float
    """Per million completion tokens."""

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """USD for one call's token counts (not rounded)."""
        return (tokens_in * self.input + tokens_out * self.output) / 1_000_000


PriceTable = Mapping[str, Price]
"""Model name -> its price; read-only."""


def _price(source: str, model: Any, entry: Any) -> Price:
    if not isinstance(model, str) or not model.strip():
        raise ConfigError(f"{source}: model names must be non-empty strings, got {model!r}")
    if not isinstance(entry, dict) or set(entry) != _ENTRY_KEYS:
        raise ConfigError(
            f'{source}: {model} must be {{"input": <USD per million>, "output": '
            f"<USD per million>}}, got {orjson.dumps(entry).decode()[:120]}"
        )
    values = []
    for key in ("input", "output"):
        value = entry[key]
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            msg = f"{source}: {model}.{key} must be a number of 0 or more, got {value!r}"
            raise ConfigError(msg)
        values.append(float(value))
    return Price(input=values[0], output=values[1])


def parse_prices(raw: bytes, source: str) -> dict[str, Price]:
    """The ``models`` table of one prices file.

    Raises:
        ConfigError: ``raw`` is not JSON of the shape the module describes.
    """
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"{source} is not valid JSON: {exc}") from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise ConfigError(
            f'{source} must be a JSON object with a "models" object: '
            '{"models": {"<model>": {"input": 0.1, "output": 0.4}}}'
        )
    return {model.strip(): _price(source, model, entry) for model, entry in models.items()}


def load_prices(user_file: str = "") -> PriceTable:
    """The built-in table, with ``user_file``'s entries added or overriding (if given).

    Raises:
        ConfigError: a file cannot be read or is not a valid prices file.
    """
    table = parse_prices(BUILT_IN.read_bytes(), str(BUILT_IN))
    if user_file:
        try:
            raw = Path(user_file).read_bytes()
        except OSError as exc:
            raise ConfigError(f"RELAY_PRICES: cannot read {user_file}: {exc.strerror}") from None
        table.update(parse_prices(raw, f"RELAY_PRICES ({user_file})"))
    return MappingProxyType(table)
