"""The agent's settings: its model and how it is asked, its schedule, escalation and vision,
read at start (each field declared once, as :mod:`config.settings` says) and changed at run
time by ``POST /agent/config``."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Annotated, Any, Literal, Protocol, get_args

from msgspec import Meta

from config.agent.local_llm import default_threads
from config.common.loopback import loopback_url
from config.common.setting_types import ApiKey, Names, NonNegativeInt, PositiveInt, Text, Url

DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
DEFAULT_MODEL = "google/gemini-2.5-flash-lite"
DEFAULT_VISION_MODEL = "google/gemini-2.5-flash"
MAX_IMAGES_LIMIT = 4
"""The most screen images one call may carry (``AGENT_VISION_MAX_IMAGES``)."""
MIN_RUNTIME_INTERVAL_MS = 5_000
"""``POST /agent/config`` raises a smaller ``intervalMs`` to this (the environment is not)."""
MIN_RUNTIME_MAX_AGE_MS = 10_000
"""``POST /agent/config`` raises a smaller ``maxAge`` to this."""
AgentApi = Literal["openai", "local"]
"""How the agent asks its model (``AGENT_API``): ``openai``, an OpenAI-compatible chat-completions
server at ``AGENT_BASE_URL``; ``local``, a GGUF model on this machine, in a worker process of
the LLM caller (the ``local-llm`` extra; :mod:`config.agent.local_llm`)."""
AGENT_APIS: tuple[AgentApi, ...] = get_args(AgentApi)
ResponseFormat = Literal["auto", "json_schema", "json_object", "off"]
"""What the agent's requests ask of the LLM (``AGENT_RESPONSE_FORMAT``)."""
RESPONSE_FORMATS: tuple[ResponseFormat, ...] = get_args(ResponseFormat)
"""``AGENT_RESPONSE_FORMAT``'s values (see :mod:`actors.agent.core.response_format`)."""
EscalationMode = Literal["off", "selective", "focus", "rich"]
"""When a tick's moment goes to Sinain's agent (``ESCALATION_MODE``,
:mod:`actors.escalation.decision`)."""
ESCALATION_MODES: tuple[EscalationMode, ...] = get_args(EscalationMode)
MIN_RUNTIME_ESCALATION_COOLDOWN_MS = 5_000
"""``POST /agent/config`` raises a smaller ``escalationCooldownMs`` to this."""


@dataclass(frozen=True, slots=True)
class EscalationPolicy:
    """The escalation settings a tick carries to the decision
    (:mod:`actors.escalation.decision`)."""

    mode: EscalationMode = "off"
    cooldown_ms: int = 30_000
    """The least time between two escalations."""
    stale_ms: int = 0
    """Above 0: escalate anyway once nothing was escalated for this long."""


class ConfigUpdate(Protocol):
    """A decoded ``POST /agent/config`` body: the fields it sets, by ``AgentSettings`` name."""

    def changes(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """The agent's runtime configuration; ``POST /agent/config`` makes a new one."""

    enabled: Annotated[
        bool,
        Meta(
            description="run the agent loop",
            extra={"env": "AGENT_ENABLED", "flag": "agent_enabled"},
        ),
    ] = True
    api: Annotated[
        AgentApi,
        Meta(
            description="how the agent asks its model: openai (an OpenAI-compatible server at "
            "AGENT_BASE_URL) or local (a GGUF model on this machine, the local-llm extra); unset: "
            "local when the extra is installed and neither OPENROUTER_API_KEY nor AGENT_BASE_URL "
            "is set",
            extra={"env": "AGENT_API", "flag": "agent_api"},
        ),
    ] = "openai"
    api_key: Annotated[
        ApiKey,
        Meta(
            description="the LLM key; without it the agent is off",
            extra={
                "env": "OPENROUTER_API_KEY",
                "flag": "openrouter_api_key",
                "secret": True,
                "shown": "unset",
            },
        ),
    ] = ""
    base_url: Annotated[
        Url, Meta(description="OpenAI-compatible API root", extra={"env": "AGENT_BASE_URL"})
    ] = DEFAULT_BASE_URL
    model: Annotated[
        Text,
        Meta(
            description="model to ask; with AGENT_API=local a .gguf file, a directory holding "
            "one, or a known model's name (default qwen2.5-coder-1.5b-instruct)",
            extra={"env": "AGENT_MODEL"},
        ),
    ] = DEFAULT_MODEL
    interval_ms: Annotated[
        PositiveInt,
        Meta(
            description="the longest time between two ticks while anything is new, in ms",
            extra={"env": "AGENT_INTERVAL_MS"},
        ),
    ] = 30_000
    debounce_ms: Annotated[
        NonNegativeInt,
        Meta(
            description="a tick looks at new feed and sense items this long after the first one "
            "no tick has seen (the first after a quiet spell: after 1 s; with "
            "AGENT_ECONOMY=false: this long after the last), in ms; capped at the interval",
            extra={"env": "AGENT_DEBOUNCE_MS"},
        ),
    ] = 3_000
    """Capped at the interval (:attr:`effective_debounce_ms`)."""
    cooldown_ms: Annotated[
        NonNegativeInt,
        Meta(
            description="the least time between two LLM calls, in ms",
            extra={"env": "AGENT_COOLDOWN_MS"},
        ),
    ] = 0
    max_age_ms: Annotated[
        PositiveInt, Meta(description="context window in ms", extra={"env": "AGENT_MAX_AGE_MS"})
    ] = 120_000
    max_tokens: Annotated[
        PositiveInt,
        Meta(description="max_tokens of each request", extra={"env": "AGENT_MAX_TOKENS"}),
    ] = 200
    temperature: Annotated[
        float,
        Meta(
            ge=0,
            le=2,
            description="sampling temperature, 0 to 2",
            extra={"env": "AGENT_TEMPERATURE"},
        ),
    ] = 0.3
    timeout_ms: Annotated[
        PositiveInt,
        Meta(
            description="bound on one LLM request, end to end, in ms",
            extra={"env": "AGENT_TIMEOUT_MS"},
        ),
    ] = 15_000
    push_to_feed: Annotated[
        bool,
        Meta(description="push each new hud line to /feed", extra={"env": "AGENT_PUSH_TO_FEED"}),
    ] = True
    log_verbose: Annotated[
        bool,
        Meta(description="log every tick, idle ones too", extra={"env": "AGENT_LOG_VERBOSE"}),
    ] = False
    economy: Annotated[
        bool,
        Meta(
            description="call the LLM only when the window changed meaningfully, and never more "
            "often than a fixed beat of the interval would; false: on every new window",
            extra={"env": "AGENT_ECONOMY"},
        ),
    ] = True
    fallback_models: Annotated[
        Names,
        Meta(
            description="comma-separated models tried in order when the model fails",
            extra={"env": "AGENT_FALLBACK_MODELS"},
        ),
    ] = ()
    response_format: Annotated[
        ResponseFormat,
        Meta(
            description="what each request asks for: auto tries json_schema, then json_object, "
            "then nothing, stepping down when the server refuses and remembering what answered; "
            "json_schema, json_object or off sends that level only",
            extra={"env": "AGENT_RESPONSE_FORMAT"},
        ),
    ] = "auto"
    """See ``RESPONSE_FORMATS`` and :mod:`actors.agent.core.response_format`."""
    escalation_mode: Annotated[
        EscalationMode,
        Meta(
            description="when a tick's moment goes to the escalation slot Sinain's agents poll: "
            "off; selective (errors, questions, code issues, app churn score 3 or more); focus "
            "or rich (any changed digest)",
            extra={"env": "ESCALATION_MODE"},
        ),
    ] = "off"
    """See :mod:`actors.escalation.decision`."""
    escalation_cooldown_ms: Annotated[
        NonNegativeInt,
        Meta(
            description="the least time between two escalations, in ms (5000 at least over HTTP)",
            extra={"env": "ESCALATION_COOLDOWN_MS"},
        ),
    ] = 30_000
    escalation_stale_ms: Annotated[
        NonNegativeInt,
        Meta(
            description="above 0: escalate anyway once nothing was escalated for this long, in ms",
            extra={"env": "ESCALATION_STALE_MS"},
        ),
    ] = 0
    vision_enabled: Annotated[
        bool,
        Meta(
            description="send the newest screen images (the capture client's roi.data) with each "
            "call; false: no image leaves the machine",
            extra={"env": "AGENT_VISION_ENABLED"},
        ),
    ] = True
    """See :mod:`actors.core.screen_image`."""
    vision_model: Annotated[
        Text,
        Meta(
            description="the model a call with images asks first, before the model and its "
            "fallbacks",
            extra={"env": "AGENT_VISION_MODEL"},
        ),
    ] = DEFAULT_VISION_MODEL
    vision_max_images: Annotated[
        int,
        Meta(
            ge=0,
            le=MAX_IMAGES_LIMIT,
            description=f"the most screen images one call carries, 0 to {MAX_IMAGES_LIMIT}: the "
            "newest distinct ones not sent by a recent call",
            extra={"env": "AGENT_VISION_MAX_IMAGES"},
        ),
    ] = 1
    local_threads: Annotated[
        PositiveInt,
        Meta(
            description="threads the local model computes with (AGENT_API=local)",
            extra={
                "env": "AGENT_LOCAL_THREADS",
                "flag": "agent_local_threads",
                "shown": "every core but one",
            },
        ),
    ] = field(default_factory=default_threads)

    @property
    def local(self) -> bool:
        """The model runs on this machine (no server, no key)."""
        return self.api == "local"

    @property
    def escalation(self) -> EscalationPolicy:
        """The escalation settings, as a tick carries them."""
        return EscalationPolicy(
            self.escalation_mode, self.escalation_cooldown_ms, self.escalation_stale_ms
        )

    @property
    def models(self) -> tuple[str, ...]:
        """``model`` then the fallbacks, without repeats (a local model has none: one model
        is loaded at a time)."""
        if self.local:
            return (self.model,)
        return tuple(dict.fromkeys((self.model, *self.fallback_models)))

    @property
    def sends_images(self) -> bool:
        """Whether a call may carry screen images (not to a local model: it reads text)."""
        return self.vision_enabled and self.vision_max_images > 0 and not self.local

    def models_for(self, *, images: bool) -> tuple[str, ...]:
        """The models a call asks in turn: with images, ``vision_model`` first, then
        :attr:`models` (given the same images); without, :attr:`models`."""
        if not images:
            return self.models
        return tuple(dict.fromkeys((self.vision_model, *self.models)))

    def tick_budget_ms(self, *, images: bool = False) -> int:
        """How long one tick may take, retries and fallbacks included: one timeout a model."""
        return self.timeout_ms * len(self.models_for(images=images))

    @property
    def effective_debounce_ms(self) -> int:
        """The debounce, capped at the interval."""
        return min(self.debounce_ms, self.interval_ms)

    @property
    def reachable(self) -> bool:
        """The agent has a model to ask: a local one, a key, or a server on this machine
        (which needs none)."""
        return self.local or bool(self.api_key) or loopback_url(self.base_url)

    @property
    def active(self) -> bool:
        """Ticks call the LLM only when the agent is enabled and has a model to ask."""
        return self.enabled and self.reachable

    def updated(self, update: ConfigUpdate) -> AgentSettings:
        """Return this config with a ``POST /agent/config`` body applied.

        The body was checked as it was decoded
        (:class:`~actors.agent.core.config_update.AgentConfigUpdate` says what each field takes);
        ``intervalMs`` is raised to :data:`MIN_RUNTIME_INTERVAL_MS`
        and ``maxAge`` to :data:`MIN_RUNTIME_MAX_AGE_MS` at least, by its ``changes()``.
        """
        return replace(self, **update.changes())
