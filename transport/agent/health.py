"""The agent feature's section of ``GET /health``: ``/health.agent``, its settings, its
counters and its LLM path, asked of the agent's actors once the request arrived (the
escalation slot's counters among them: the digest store keeps them)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType, field

from actors.agent.core.counting.health_stats import DIGEST_PREVIEW_CHARS
from actors.agent.core.hud_check import LONG_CHARS
from actors.agent.core.response_format import Level
from actors.agent.digest_store import DigestStore
from actors.agent.ticker import Ticker
from actors.core.errors import ActorUnavailable
from actors.core.shapes import ModelCost, Ms, Shape
from transport.agent.local import LocalModelHealth, local_health, local_stats
from transport.agent.redaction import ModelRedactions
from transport.agent.vision import VisionHealth
from transport.escalation.answers import EscalationHealth
from transport.host.feature import Reading

if TYPE_CHECKING:
    from transport.shell.bridge import Asker
    from transport.shell.state import Peers

_Counter = int | UnsetType
_Flag = bool | UnsetType


class TokenTotals(Shape, frozen=True):
    """Tokens sent and received, every model together."""

    in_: int = field(name="in")
    out: int


class FormatLevel(Shape, frozen=True):
    """The `response_format` level that last answered a model at a base URL."""

    model: str
    base_url: str
    level: Level
    images: Annotated[bool, Meta(description="`false`: it refused images lately.")] | UnsetType = (
        UNSET
    )


class HourFigures(Shape, frozen=True):
    """One model's answered calls in one hour."""

    calls: int
    tokens_in: int
    tokens_out: int
    cost_usd: Annotated[float, Meta(description="USD, of the calls whose cost is known.")]


class HourCost(Shape, frozen=True):
    """The answered calls of one hour, by model."""

    hour: Annotated[int, Meta(description="The hour's start, epoch milliseconds.")]
    models: dict[str, HourFigures]


class AgentHealth(Shape, frozen=True):
    """The agent's settings, counters and LLM path."""

    # Each part comes from one actor; one that does not answer leaves its part out.
    enabled: _Flag = UNSET
    active: Annotated[bool, Meta(description="Enabled and keyed.")] | UnsetType = UNSET
    has_api_key: _Flag = UNSET
    model: str | UnsetType = UNSET
    interval_ms: _Counter = UNSET
    debounce_ms: (
        Annotated[int, Meta(description="As applied: capped at the interval.")] | UnsetType
    ) = UNSET
    cooldown_ms: _Counter = UNSET
    last_analysis: Ms | UnsetType | None = UNSET
    last_digest: Annotated[str, Meta(max_length=DIGEST_PREVIEW_CHARS)] | UnsetType | None = UNSET
    total_calls: _Counter = UNSET
    total_tokens: TokenTotals | UnsetType = UNSET
    estimated_cost: (
        Annotated[float, Meta(description="USD, every model's known cost.")] | UnsetType
    ) = UNSET
    cost_by_model: (
        Annotated[
            dict[str, ModelCost],
            Meta(description="By model, those that answered at least once."),
        ]
        | UnsetType
    ) = UNSET
    fallbacks: Annotated[int, Meta(description="Ticks a fallback model answered.")] | UnsetType = (
        UNSET
    )
    idle_skips: _Counter = UNSET
    empty_skips: _Counter = UNSET
    unchanged_skips: _Counter = UNSET
    minor_skips: _Counter = UNSET
    deferred_ticks: _Counter = UNSET
    failures: _Counter = UNSET
    last_error: (
        Annotated[str, Meta(description="The latest failure since the last answer.")]
        | UnsetType
        | None
    ) = UNSET
    last_error_at: Ms | UnsetType | None = UNSET
    parse_failures: _Counter = UNSET
    parse_success_rate: Annotated[float, Meta(ge=0, le=1)] | UnsetType | None = UNSET
    context_freshness_median_ms: int | UnsetType | None = UNSET
    huds_withheld: (
        Annotated[
            dict[str, int],
            Meta(
                description="Answers whose hud was not pushed because it was no line a user "
                "can read, by reason: `echo` (our instructions), `fragment` (JSON pieces), "
                "`markup`, `placeholder` (the prompt's), `empty`, `long` (over "
                f"{LONG_CHARS} characters)."
            ),
        ]
        | UnsetType
    ) = UNSET
    model_redactions: ModelRedactions | UnsetType = UNSET
    situation_write_failures: (
        Annotated[
            int, Meta(description="SITUATION.md writes that failed (`RELAY_SITUATION_FILE`).")
        ]
        | UnsetType
    ) = UNSET
    response_formats: (
        Annotated[
            list[FormatLevel],
            Meta(
                description="The `response_format` level that last answered, per model and "
                "base URL (`AGENT_RESPONSE_FORMAT`); empty before the first answer."
            ),
        ]
        | UnsetType
    ) = UNSET
    local: (
        Annotated[
            LocalModelHealth,
            Meta(description="The model on this machine (`AGENT_API=local`), once called."),
        ]
        | UnsetType
    ) = UNSET
    state: (
        Annotated[
            Literal["ok", "degraded", "open", "disabled", "no_key"],
            Meta(
                description="The LLM path: `disabled` when the agent is switched off, `no_key` "
                "when it is on but has no key."
            ),
        ]
        | UnsetType
    ) = UNSET
    consecutive_failures: _Counter = UNSET
    circuit_open_for_ms: _Counter = UNSET
    circuit_skips: _Counter = UNSET
    in_flight: _Flag = UNSET
    busy_skips: _Counter = UNSET
    pending: _Flag = UNSET
    next_tick_in_ms: int | UnsetType | None = UNSET
    escalation: EscalationHealth | UnsetType = UNSET
    vision: VisionHealth | UnsetType = UNSET
    cost_by_hour: (
        Annotated[
            list[HourCost],
            Meta(description="The last 24 hours with answered calls, oldest first."),
        ]
        | UnsetType
    ) = UNSET


PRIVATE_HEALTH_FIELDS = ("lastDigest", "lastError")
"""``/health.agent`` fields that say what the user did (the digest's first 200 characters,
an LLM error that may quote the prompt): ``null`` for callers without the token, since
``/health`` needs none; so is each client's ``profiling.*.extra`` (its counters, by name),
and so are ``audio.sources.*.lastStderr`` and ``audio.transcriber.lastError`` (a device's
name, a speech service's message)."""


async def read_agent(peers: Peers, ask: Asker, *, private: bool) -> Reading:
    """``/health.agent``: each part asked of the actor that owns it (the digest store's
    counters, the ticker's settings and status); a part whose actor does not answer in time
    is left out, and named."""
    results = await asyncio.gather(
        ask(peers.digest, DigestStore.stats),
        ask(peers.ticker, Ticker.config),
        ask(peers.ticker, Ticker.status),
        return_exceptions=True,
    )
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, ActorUnavailable):
            raise result
    stats, config, status = results
    agent: dict[str, Any] = {}
    if not isinstance(config, BaseException):
        agent.update(
            enabled=config.enabled,
            active=config.active,
            hasApiKey=bool(config.api_key),
            model=config.model,
            intervalMs=config.interval_ms,
            debounceMs=config.effective_debounce_ms,
            cooldownMs=config.cooldown_ms,
        )
    for part in (stats, status):
        if isinstance(part, dict):
            agent.update(part)
    agent["responseFormats"] = peers.formats.value.to_json()
    if (local := local_stats(peers.local_models)) is not None:
        agent["local"] = local_health(local)
    if not private:
        for key in PRIVATE_HEALTH_FIELDS:
            if key in agent:
                agent[key] = None
    unanswered = tuple(str(r) for r in results if isinstance(r, BaseException))
    return Reading(msgspec.convert(agent, AgentHealth), unanswered)
