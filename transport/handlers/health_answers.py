"""``GET /health``'s answer as typed structs: the agent's part and the whole, with each
feature's section (``audio``, ``agent.escalation``) of its feature's answers."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, UnsetType

from actors.agent.core.hud_check import LONG_CHARS
from actors.agent.digest_store import DIGEST_PREVIEW_CHARS
from actors.core.shapes import Epoch, ModelCost, Ms, Shape
from transport.agent.local import LocalModelHealth
from transport.agent.redaction import ModelRedactions
from transport.agent.vision import VisionHealth
from transport.answers import ActorState, FormatLevel, Profiling, Storage, StreamCounts, TokenTotals
from transport.audio.answers import AudioHealth
from transport.escalation.answers import EscalationHealth

_Counter = int | UnsetType
_Flag = bool | UnsetType


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


class Health(Shape, frozen=True, kw_only=True):
    """Made for each request: it shows every write answered before it was asked."""

    ok: bool
    error: (
        Annotated[str, Meta(description="On a 503: which actors did not answer.")] | UnsetType
    ) = UNSET
    epoch: Epoch
    messages: int | None
    sense_events: int | None
    agent: AgentHealth
    audio: AudioHealth
    actors: dict[str, ActorState]
    storage: Storage
    streams: StreamCounts
    profiling: Profiling
