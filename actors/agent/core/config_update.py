"""``POST /agent/config``'s body: any subset of the agent's runtime settings, each checked
as it is decoded, and what it changes of :class:`~config.agent.settings.AgentSettings`."""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import UNSET, Meta, Struct, UnsetType

from actors.agent.core.config_fields import MAX_RUNTIME_PERIOD_MS, about, period
from actors.core.bodies import Text, Whole, not_blank
from config.agent.settings import (
    ESCALATION_MODES,
    MAX_IMAGES_LIMIT,
    MIN_RUNTIME_ESCALATION_COOLDOWN_MS,
    MIN_RUNTIME_INTERVAL_MS,
    MIN_RUNTIME_MAX_AGE_MS,
    RESPONSE_FORMATS,
)
from config.common.setting_types import check_api_key

MAX_TOKENS = 32_000
"""The most ``maxTokens`` ``POST /agent/config`` takes."""

_NOT_BLANK = "Not only whitespace."
_MaxAge = Annotated[Whole, period("max_age_ms", "Context window", MIN_RUNTIME_MAX_AGE_MS)]
"""``maxAge`` and ``maxAgeMs`` (the same setting under two names)."""


class AgentConfigUpdate(Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """Any subset of the fields. An unknown field or a wrong type rejects the whole body.
    Each field's title, unit and help are the console's settings form."""

    enabled: Annotated[bool, about("enabled", "Agent on")] | UnsetType = UNSET
    interval_ms: (
        Annotated[
            Whole, period("interval_ms", "Longest time between ticks", MIN_RUNTIME_INTERVAL_MS)
        ]
        | UnsetType
    ) = UNSET
    debounce_ms: Annotated[Whole, period("debounce_ms", "Wait after news")] | UnsetType = UNSET
    cooldown_ms: Annotated[Whole, period("cooldown_ms", "Least time between calls")] | UnsetType = (
        UNSET
    )
    model: Annotated[Text, about("model", "Model", note=_NOT_BLANK)] | UnsetType = UNSET
    fallback_models: (
        Annotated[list[Text], about("fallback_models", "Fallback models")] | UnsetType
    ) = UNSET
    max_age: _MaxAge | UnsetType = UNSET
    max_age_ms: _MaxAge | UnsetType = UNSET
    max_tokens: (
        Annotated[
            int, Meta(ge=1, le=MAX_TOKENS), about("max_tokens", "Longest answer", unit="tokens")
        ]
        | UnsetType
    ) = UNSET
    temperature: (
        Annotated[float, Meta(ge=0, le=2), about("temperature", "Temperature")] | UnsetType
    ) = UNSET
    push_to_feed: Annotated[bool, about("push_to_feed", "Hud lines to the feed")] | UnsetType = (
        UNSET
    )
    log_verbose: Annotated[bool, about("log_verbose", "Log every tick")] | UnsetType = UNSET
    economy: Annotated[bool, about("economy", "Economy")] | UnsetType = UNSET
    response_format: (
        Annotated[
            str,
            Meta(extra_json_schema={"enum": list(RESPONSE_FORMATS)}),
            about("response_format", "Response format"),
        ]
        | UnsetType
    ) = UNSET
    escalation_mode: (
        Annotated[
            str,
            Meta(extra_json_schema={"enum": list(ESCALATION_MODES)}),
            about("escalation_mode", "Escalation"),
        ]
        | UnsetType
    ) = UNSET
    escalation_cooldown_ms: (
        Annotated[
            Whole,
            period(
                "escalation_cooldown_ms",
                "Least time between escalations",
                MIN_RUNTIME_ESCALATION_COOLDOWN_MS,
            ),
        ]
        | UnsetType
    ) = UNSET
    escalation_stale_ms: (
        Annotated[Whole, period("escalation_stale_ms", "Escalate anyway after")] | UnsetType
    ) = UNSET
    vision_enabled: Annotated[bool, about("vision_enabled", "Send screen pictures")] | UnsetType = (
        UNSET
    )
    vision_model: (
        Annotated[Text, about("vision_model", "Vision model", note=_NOT_BLANK)] | UnsetType
    ) = UNSET
    vision_max_images: (
        Annotated[
            int,
            Meta(ge=0, le=MAX_IMAGES_LIMIT),
            about("vision_max_images", "Pictures per call", unit="pictures"),
        ]
        | UnsetType
    ) = UNSET
    openrouter_api_key: (
        Annotated[
            str,
            Meta(extra_json_schema={"pattern": r"^\s*[!-~]*\s*$"}),
            about(
                "api_key",
                "API key",
                note="Printable ASCII without spaces (spaces around it are dropped); empty "
                "removes the key. Never shown back.",
            ),
        ]
        | UnsetType
    ) = UNSET

    def __post_init__(self) -> None:
        # Raised here, msgspec reports it as the body's ValidationError.
        if self.model is not UNSET:
            not_blank("model", self.model)
        if self.vision_model is not UNSET:
            not_blank("visionModel", self.vision_model)
        if self.fallback_models is not UNSET:
            for n, model in enumerate(self.fallback_models):
                not_blank(f"fallbackModels[{n}]", model)
        if self.response_format is not UNSET and _format(self.response_format) is None:
            raise ValueError(f"responseFormat must be one of {', '.join(RESPONSE_FORMATS)}")
        if self.escalation_mode is not UNSET and (
            self.escalation_mode.strip().lower() not in ESCALATION_MODES
        ):
            raise ValueError(f"escalationMode must be one of {', '.join(ESCALATION_MODES)}")
        if self.openrouter_api_key is not UNSET:
            check_api_key("openrouterApiKey", self.openrouter_api_key.strip())

    def given(self) -> dict[str, Any]:
        """The fields the body gave, by their names on the wire."""
        return {
            wire: value
            for name, wire in zip(
                self.__struct_fields__, self.__struct_encode_fields__, strict=True
            )
            if (value := getattr(self, name)) is not UNSET
        }

    def changes(self) -> dict[str, Any]:
        """What the body changes, by :class:`~config.settings.AgentSettings` field: each period
        whole and within its bounds, each text without its surrounding spaces."""
        out: dict[str, Any] = {}
        for field, floor in _PERIODS:
            if (value := getattr(self, field)) is not UNSET:
                out["max_age_ms" if field == "max_age" else field] = _bounded(value, floor)
        for field in _AS_GIVEN.split():
            if (value := getattr(self, field)) is not UNSET:
                out[field] = value
        if self.temperature is not UNSET:
            out["temperature"] = float(self.temperature)
        if self.model is not UNSET:
            out["model"] = self.model.strip()
        if self.vision_model is not UNSET:
            out["vision_model"] = self.vision_model.strip()
        if self.fallback_models is not UNSET:
            out["fallback_models"] = tuple(m.strip() for m in self.fallback_models)
        if self.response_format is not UNSET:
            out["response_format"] = _format(self.response_format)
        if self.escalation_mode is not UNSET:
            out["escalation_mode"] = self.escalation_mode.strip().lower()
        if self.openrouter_api_key is not UNSET:
            out["api_key"] = self.openrouter_api_key.strip()
        return out

    def clamped(self) -> list[tuple[str, int | float, int]]:
        """Each period the body gave outside its bounds: its name on the wire, the value
        given and the value used (:meth:`changes` raises it to its floor or caps it at a
        day), so that whoever applies the body can say so."""
        wire = dict(zip(self.__struct_fields__, self.__struct_encode_fields__, strict=True))
        return [
            (wire[field], value, used)
            for field, floor in _PERIODS
            if (value := getattr(self, field)) is not UNSET
            and (used := _bounded(value, floor)) != value
        ]


_PERIODS = (
    ("interval_ms", MIN_RUNTIME_INTERVAL_MS),
    ("debounce_ms", 0),
    ("cooldown_ms", 0),
    ("max_age", MIN_RUNTIME_MAX_AGE_MS),
    ("max_age_ms", MIN_RUNTIME_MAX_AGE_MS),
    ("escalation_cooldown_ms", MIN_RUNTIME_ESCALATION_COOLDOWN_MS),
    ("escalation_stale_ms", 0),
)
"""The update's periods and the least each may be; a day is the most."""


def _bounded(value: float, floor: int) -> int:
    """A period as applied: whole, at least ``floor``, at most :data:`MAX_RUNTIME_PERIOD_MS`."""
    return min(max(int(value), floor), MAX_RUNTIME_PERIOD_MS)


_AS_GIVEN = "enabled max_tokens push_to_feed log_verbose economy vision_enabled vision_max_images"
"""The update's fields that :class:`~config.settings.AgentSettings` takes as they are."""


def _format(value: str) -> str | None:
    """The response format ``value`` names (any case, spaces around), or ``None``."""
    level = value.strip().lower()
    return level if level in RESPONSE_FORMATS else None
