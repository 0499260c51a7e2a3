"""What the agent's actors report for its counters: events, told to whoever listens.

The context builder tells why a tick was skipped, the LLM caller that a tick failed, the
Ticker when a quiet spell begins or ends, the SITUATION.md writer that a write failed. The
digest store listens and counts them with the agent's other counters (``/health.agent``,
``/metrics``, kept in agent.db); the emitters do not know who counts
(:mod:`actors.kernel.listeners`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from actors.agent.core.ticks import LLMAttempt
from actors.core.screen_image import RefusalReason

SkipReason = Literal["idle", "empty", "unchanged", "minor", "deferred"]
"""Why a tick did not call the LLM (:data:`actors.agent.core.ticks.Outcome` names them)."""


class AgentEvent:
    """Base of the agent's events (frozen values)."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class TickSkipped(AgentEvent):
    """ContextBuilder: a tick ended without calling the LLM, and why."""

    reason: SkipReason


@dataclass(frozen=True, slots=True)
class ImageRefused(AgentEvent):
    """ContextBuilder: a screen image in the window will never be sent, and why (told once
    per image)."""

    reason: RefusalReason


@dataclass(frozen=True, slots=True)
class TickNotStarted(AgentEvent):
    """Ticker: a tick was due but did not start: one is in flight (``busy``), or the circuit
    breaker is cooling off (``circuit_open``)."""

    reason: Literal["busy", "circuit_open"]


@dataclass(frozen=True, slots=True)
class TickFailed(AgentEvent):
    """LLMCaller: a tick's LLM path failed; its last error and each request it made."""

    error: str
    attempts: tuple[LLMAttempt, ...] = ()


@dataclass(frozen=True, slots=True)
class QuietSpell(AgentEvent):
    """Ticker: at ``at`` (monotonic seconds) the agent has been quiet since ``since`` (nothing
    new, nothing in flight), with a tick due every ``interval_s``; ``since`` ``None``: it is
    not quiet."""

    since: float | None
    interval_s: float
    at: float


@dataclass(frozen=True, slots=True)
class SituationWriteFailed(AgentEvent):
    """SituationWriter: a SITUATION.md write failed (the writer logged why)."""
