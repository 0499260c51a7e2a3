"""Redaction of a client's JSON object: every string and every key redacted, and each number
that is a card, but the image data and the numbers a sense event must keep as they are."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from actors.core.redaction.rules import R_CARD, Rule, rules_for
from actors.core.redaction.text import Counts, apply_rules, normalised

_IMAGES = ("roi", "diff")
"""Top-level objects whose ``data`` is base64 image data: not text, never redacted."""
_CARD_LEAST = 10**12
"""Integers below this have fewer than 13 digits: no card."""


def _number_text(value: Any) -> str | None:
    """A JSON number as the text a card would be, or ``None`` when it cannot be one."""
    kind = type(value)
    if kind is int:
        return str(value) if value >= _CARD_LEAST else None
    if kind is float and value >= _CARD_LEAST and value.is_integer() and value < 1e20:
        return str(int(value))
    return None


def _collect(value: Any, strings: list[str], keys: list[str]) -> None:
    """Add the strings in ``value``, a dict or a list, at any depth, to ``strings`` (string
    values and the numbers that may be cards) and ``keys``."""
    if type(value) is dict:
        keys.extend(value)
        items = value.values()
    else:
        items = value
    for item in items:
        kind = type(item)
        if kind is str:
            strings.append(item)
        elif kind is dict or kind is list:
            _collect(item, strings, keys)
        elif (kind is int or kind is float) and item >= _CARD_LEAST:
            number = _number_text(item)
            if number is not None:
                strings.append(number)


_APART = b"\x00"
"""What strings tested at once are joined by: a byte no literal, key run or card holds, so a
rule is chosen for the join exactly when it would be for one of the strings (the cheap tests
are all that the join is for)."""


def tested(strings: Sequence[str]) -> bytes:
    """``strings`` as the patterns read them, joined (:data:`_APART`) to be tested at once."""
    joined = "\x00".join(strings)
    if joined.isascii():  # each string is its own view
        return joined.encode("ascii")
    return _APART.join([normalised(string) for string in strings])


def _payload_strings(payload: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The string values of ``payload`` but the image data (and the numbers that may be
    cards), and its keys, at any depth."""
    strings: list[str] = []
    keys: list[str] = list(payload)
    for key, value in payload.items():
        kind = type(value)
        if kind is str:
            strings.append(value)
        elif (kind is int or kind is float) and key != "ts":
            number = _number_text(value)
            if number is not None:
                strings.append(number)
        elif kind is dict and key in _IMAGES and "data" in value:
            keys.append("data")
            _collect({k: v for k, v in value.items() if k != "data"}, strings, keys)
        elif kind is dict or kind is list:
            _collect(value, strings, keys)
    return strings, keys


_PLAIN_KEYS = frozenset(
    (
        *("type", "ts", "ocr", "meta", "roi", "diff", "observation", "extra"),
        *("app", "windowTitle", "screen", "ssim", "data", "bbox", "thumb", "scene"),
        *("title", "subtitle", "facts", "narrative", "concepts"),
    )
)
"""The names a sense event's fields have in Sinain's capture client: no secret, not tested."""


def unique(out: dict[str, Any], key: str) -> str:
    """``key``, or ``key#2``, ``key#3``... the first that ``out`` does not hold yet: two keys
    that redact alike keep both their values."""
    if key not in out:
        return key
    n = 2
    while f"{key}#{n}" in out:
        n += 1
    return f"{key}#{n}"


@dataclass(frozen=True, slots=True)
class _Rebuild:
    """Redacts a payload's values with ``rules`` and its keys with ``key_rules`` (those the
    cheap tests chose for each), adding to ``counts``."""

    rules: Sequence[Rule]
    key_rules: Sequence[Rule]
    counts: Counts

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return apply_rules(value, self.rules, self.counts) if self.rules else value
        if isinstance(value, dict):
            return self.object(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if R_CARD in self.rules and (number := _number_text(value)) is not None:
            redacted = apply_rules(number, (R_CARD,), self.counts)
            return value if redacted == number else redacted
        return value

    def object(self, value: dict[str, Any], kept: str | None = None) -> dict[str, Any]:
        """``value`` redacted, but the value of ``kept`` (image data, a number to keep)."""
        out: dict[str, Any] = {}
        for k, v in value.items():
            out[unique(out, self.key(k))] = v if k == kept else self.value(v)
        return out

    def key(self, key: str) -> str:
        return apply_rules(key, self.key_rules, self.counts) if self.key_rules else key


def redact_payload(payload: dict[str, Any]) -> tuple[dict[str, Any], Counts]:
    """A client's JSON object with every string redacted, keys too, and each number that is a
    card replaced by the card's marker (a string).

    ``roi.data`` and ``diff.data`` (base64 images) are kept as they are: image data is not
    text, and what it shows is not read. ``ts`` and ``meta.ssim`` stay numbers. A key that
    redacts to a key already there gets ``#2`` (``#3``...) after it, so both values stay.
    The object is never changed: when something is redacted, a new one is returned;
    otherwise ``payload`` itself.
    """
    strings, keys = _payload_strings(payload)
    keys = [key for key in keys if key not in _PLAIN_KEYS]
    rules = rules_for(tested(strings))
    key_rules = rules_for(tested(keys)) if keys else []
    if not rules and not key_rules:
        return payload, {}
    rebuild = _Rebuild(rules, key_rules, {})
    out: dict[str, Any] = {}
    for key, value in payload.items():
        if key in _IMAGES and isinstance(value, dict):
            kept: Any = rebuild.object(value, "data")
        elif key == "meta" and isinstance(value, dict):
            kept = rebuild.object(value, "ssim")
        elif key == "ts":
            kept = value
        else:
            kept = rebuild.value(value)
        out[unique(out, rebuild.key(key))] = kept
    counts = rebuild.counts
    return (out if counts else payload), counts
