"""The agent's configuration as ``GET`` and ``POST /agent/config`` answer it, as typed
structs: the key itself is never shown. The API document's components are generated from
them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Literal

from msgspec import Meta

from actors.core.shapes import Shape
from config.agent.settings import AgentSettings, EscalationMode, ResponseFormat
from config.common.secrets import shown_url


class AgentConfig(Shape, frozen=True):
    """The agent's runtime configuration."""

    enabled: bool
    interval_ms: int
    debounce_ms: int
    cooldown_ms: int
    model: str
    max_age_ms: int
    max_tokens: int
    temperature: float
    push_to_feed: bool
    log_verbose: bool
    economy: bool
    timeout_ms: int
    fallback_models: list[str]
    response_format: ResponseFormat
    base_url: Annotated[
        str, Meta(description="`AGENT_BASE_URL` without its credentials (user, password, keys).")
    ]
    has_api_key: Annotated[bool, Meta(description="The key itself is never shown.")]
    escalation_mode: EscalationMode
    escalation_cooldown_ms: int
    escalation_stale_ms: int
    vision_enabled: bool
    vision_model: str
    vision_max_images: int


def public_config(config: AgentSettings) -> AgentConfig:
    """The ``/agent/config`` view of ``config``: the key itself is never shown, ``hasApiKey``
    instead."""
    return AgentConfig(
        enabled=config.enabled,
        interval_ms=config.interval_ms,
        debounce_ms=config.debounce_ms,
        cooldown_ms=config.cooldown_ms,
        model=config.model,
        max_age_ms=config.max_age_ms,
        max_tokens=config.max_tokens,
        temperature=config.temperature,
        push_to_feed=config.push_to_feed,
        log_verbose=config.log_verbose,
        economy=config.economy,
        timeout_ms=config.timeout_ms,
        fallback_models=list(config.fallback_models),
        response_format=config.response_format,
        base_url=shown_url(config.base_url),
        has_api_key=bool(config.api_key),
        escalation_mode=config.escalation_mode,
        escalation_cooldown_ms=config.escalation_cooldown_ms,
        escalation_stale_ms=config.escalation_stale_ms,
        vision_enabled=config.vision_enabled,
        vision_model=config.vision_model,
        vision_max_images=config.vision_max_images,
    )


class Clamped(Shape, frozen=True):
    """A setting the agent uses at another value than it was given."""

    setting: Annotated[str, Meta(description="Its name in `AgentConfigUpdate`.")]
    given: float
    used: int


class ConfigAnswer(Shape, frozen=True):
    """The agent's runtime configuration."""

    ok: Literal[True]
    config: AgentConfig
    clamped: Annotated[
        list[Clamped],
        Meta(
            description="The settings used at another value than given: those of the body "
            "raised to their least or capped at a day, and `debounceMs` while it is longer "
            "than the interval (capped at it). Empty when every value is used as given."
        ),
    ]


def config_answer(
    config: AgentSettings, given: Iterable[tuple[str, float, int]] = ()
) -> ConfigAnswer:
    """``/agent/config``'s answer: ``config``, and what was clamped: ``given`` (a body's
    :meth:`~actors.agent.core.config_update.AgentConfigUpdate.clamped`) and a debounce capped at the
    interval."""
    clamped = {setting: Clamped(setting, value, used) for setting, value, used in given}
    if config.effective_debounce_ms != config.debounce_ms:
        before = clamped.get("debounceMs")
        value = before.given if before else config.debounce_ms
        clamped["debounceMs"] = Clamped("debounceMs", value, config.effective_debounce_ms)
    return ConfigAnswer(ok=True, config=public_config(config), clamped=list(clamped.values()))
