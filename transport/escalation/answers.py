"""The escalation slot's answers, as typed structs: ``GET /escalation/pending``,
``POST /escalation/respond`` and ``/health.agent.escalation``.

The escalation itself is :class:`actors.escalation.slot.Pending`, the shape the digest
store keeps; handlers encode from these, and the API document's components are generated
from them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, UnsetType

from actors.core.shapes import Shape
from actors.escalation.slot import Pending
from config.agent.settings import AgentSettings, EscalationMode


class EscalationConfig(Shape, frozen=True):
    """The escalation settings in force (``POST /agent/config`` changes them)."""

    escalation_mode: EscalationMode
    cooldown_ms: int
    stale_ms: int


def escalation_config(config: AgentSettings) -> EscalationConfig:
    """The ``config`` object of ``GET /escalation/pending``."""
    return EscalationConfig(
        escalation_mode=config.escalation_mode,
        cooldown_ms=config.escalation_cooldown_ms,
        stale_ms=config.escalation_stale_ms,
    )


class PendingAnswer(Shape, frozen=True):
    """The escalation waiting for an answer, or `null`; reading it does not consume it."""

    ok: Literal[True]
    escalation: Pending | None
    config: EscalationConfig


class RespondAnswer(Shape, frozen=True):
    """Whether the answer was taken: `ok` true, or false with why (a 200 either way, as
    Sinain's agents expect)."""

    ok: bool
    error: (
        Annotated[
            str,
            Meta(description="`id mismatch: expected <id>` or `no pending escalation`."),
        ]
        | UnsetType
    ) = UNSET


_Counts = Annotated[dict[str, int], Meta(description="By reason.")]


class EscalationHealth(Shape, frozen=True):
    """The escalation slot's counters, kept in agent.db."""

    pending: Annotated[bool, Meta(description="Whether an escalation waits for an answer.")]
    escalations: Annotated[int, Meta(description="Escalations, every reason together.")]
    by_reason: Annotated[
        dict[str, int],
        Meta(
            description="Escalations by reason: each signal of a `selective` one (`error`, "
            "`question`, `code_issue`, `app_churn`), `changed` (`focus`, `rich`), `stale`."
        ),
    ]
    skips: Annotated[
        dict[str, int],
        Meta(
            description="Ticks not escalated, by reason: `cooldown`, `idle`, `duplicate`, "
            "`below_threshold` (mode `off` counts none)."
        ),
    ]
    answers: Annotated[
        dict[str, int],
        Meta(
            description="Answers by outcome: `accepted`, `late` (a replaced escalation within "
            "its grace), `mismatch`, `none` (nothing pending)."
        ),
    ]
