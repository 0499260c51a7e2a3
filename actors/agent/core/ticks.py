"""The messages of one agent tick: Ticker -> ContextBuilder -> LLMCaller -> DigestStore.

A tick is a chain of ``tell``s, never a blocking call chain, so no actor waits on the LLM.
The step that ends it tells the Ticker how it went: each request carries ``reply_to``, which
sends a :class:`TickDone` to the Ticker (the steps need not know the Ticker).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from actors.agent.core.change import Gist
from actors.agent.core.completion import Analysis
from actors.core.window import TickWindow
from config.agent.settings import AgentSettings, EscalationPolicy

ESCALATION_OFF = EscalationPolicy()
"""No escalation (what a result made without a configuration carries)."""

Marks = tuple[int, int]
"""The feed and sense activity counters a tick saw: equal marks mean nothing new arrived."""

ReplyTo = Callable[["TickDone"], None]
"""How the last step of a tick tells the Ticker; raises ``ActorUnavailable`` while the Ticker
restarts."""

Outcome = Literal["ok", "idle", "empty", "unchanged", "minor", "deferred", "failed"]
"""``ok``: the LLM answered; ``idle``: nothing arrived since the last tick; ``empty``: nothing
inside the window; ``unchanged``: new events, but the window says what the last call was
told (same fingerprint); ``minor``: the window changed in no meaningful way
(:mod:`actors.agent.core.change`); ``deferred``: it did, but the call waits (a burst of switching
settling, or the call budget spent); ``failed``: the LLM path failed."""


@dataclass(frozen=True, slots=True)
class TickRequest:
    """Ticker -> ContextBuilder: build the window and, if there is news, ask the LLM."""

    tick_id: int
    config: AgentSettings
    last_marks: Marks | None
    """The marks of the last tick that did not fail; ``None`` before the first."""
    reply_to: ReplyTo
    """Tells the Ticker that the tick ended."""
    last_fingerprint: str | None = None
    """The fingerprint of the window of the last successful LLM call."""
    last_gist: Gist | None = None
    """What the window of the last successful LLM call held (what a change is judged against)."""
    calls_left: float = math.inf
    """The call budget: a meaningful change may call with one left, a minor one that is an
    interval old with two (one stays for what matters)."""
    stale_in_s: float = 0.0
    """How soon the last call is old enough for a minor change to call too (0: now)."""


@dataclass(frozen=True, slots=True)
class LLMRequest:
    """ContextBuilder -> LLMCaller: one chat completion."""

    tick_id: int
    config: AgentSettings
    prompt: str
    window: TickWindow
    marks: Marks
    reply_to: ReplyTo
    """Tells the Ticker that the tick ended."""
    fingerprint: str = ""
    gist: Gist | None = None
    why: dict[str, str] = field(default_factory=dict)
    """Why the tick calls: ``{"reason", "change"?}``, for its log line."""


@dataclass(frozen=True, slots=True)
class LLMAttempt:
    """One chat-completions request of a tick: which model, how long, whether it answered."""

    model: str
    seconds: float
    ok: bool
    refused: bool = False
    """A refusal of what it asked (its response format, its images), asked again at once
    without it: counted as a request, not as a failure."""


@dataclass(frozen=True, slots=True)
class TickResult:
    """LLMCaller -> DigestStore: what a successful tick produced."""

    tick_id: int
    analysis: Analysis
    window: TickWindow
    model: str
    latency_ms: int
    tokens_in: int
    tokens_out: int
    push_to_feed: bool
    cost_usd: float | None = None
    """The call's cost as the provider reported it (``usage.cost``), if it did."""
    fallback: bool = False
    """Answered by a model other than the first of the tick's models."""
    attempts: tuple[LLMAttempt, ...] = ()
    """Every request of the tick, failed ones first, the answering one last."""
    answered_model: str | None = None
    """The model the server says answered, when it names one; the entry shows it, while
    counts and prices stay with ``model``, the configured name that was asked for."""
    hud_withheld: str | None = None
    """Why the model's hud is not pushed (:mod:`actors.agent.core.hud_check`); ``analysis.hud`` is
    then ``—``."""
    escalation: EscalationPolicy = ESCALATION_OFF
    """The escalation settings of the tick's configuration (:mod:`actors.escalation.decision`)."""
    images: int = 0
    """Screen images the call sent."""
    redacted: Mapping[str, int] = field(default_factory=dict)
    """Secrets taken out of the model's hud and digest, by kind
    (:mod:`actors.agent.core.answer_redaction`): ``analysis`` holds the redacted text."""


@dataclass(frozen=True, slots=True)
class TickDone:
    """Any step -> Ticker: the tick is over; ``detail`` goes into the tick's log line."""

    tick_id: int
    outcome: Outcome
    marks: Marks | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    fingerprint: str | None = None
    """The window's fingerprint, on ``ok`` (what the next tick compares with)."""
    gist: Gist | None = None
    """The window's gist, on ``ok`` (what the next tick's judgement compares with)."""
    recheck_in_s: float | None = None
    """On ``minor`` and ``deferred``: look again this soon even if nothing new arrives."""
