"""The escalation slot: the one escalation waiting for Sinain's agent, and its counters.

The digest store owns one :class:`EscalationSlot` and stores it as one row of agent.db after
each change, so a pending escalation, the grace list and the counters survive a restart.

- **Latest wins.** A new escalation replaces the pending one; the replaced id goes into a
  grace list of the newest :data:`GRACE_IDS`, with its tick's time.
- **Reading does not consume.** The pending escalation stays until an answer with its id
  clears it, or a newer one replaces it.
- **Answers** (:meth:`EscalationSlot.respond`): the pending id clears the slot; an id of the
  grace list within :data:`GRACE_MS` of its tick is accepted too (the answer was on its way
  when a newer moment came) and leaves the pending one in place; anything else is refused,
  naming the id expected. An accepted answer is accepted once. :meth:`EscalationSlot.judge`
  says what an answer would be without taking it: the digest store takes one only once the
  feed has stored it, so an answer the feed could not take stays to be sent again.

Plain data; the store is the only writer.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from actors.common.forgetting import Span
from actors.core.shapes import Shape
from actors.escalation.decision import Decision

GRACE_IDS = 5
"""Replaced ids whose late answers are still accepted."""
GRACE_MS = 60_000
"""How long after its tick a replaced escalation's answer is still accepted."""

Outcome = Literal["accepted", "late", "mismatch", "none"]
"""An answer's fate: the pending id (``accepted``), a replaced one in its grace (``late``),
another id while one is pending (``mismatch``), or nothing pending (``none``)."""


class FeedbackContext(Shape, frozen=True):
    """What the escalated tick was, for whoever judges the answer (Sinain's ``feedbackCtx``)."""

    tick_id: int
    hud: str
    current_app: str
    escalation_score: int
    escalation_reasons: list[str]
    coding_context: bool
    digest: str


class Pending(Shape, frozen=True):
    """One escalation, as ``GET /escalation/pending`` shows it and agent.db keeps it."""

    id: str
    message: str
    score: int
    coding_context: bool
    ts: int
    """The escalated entry's time, epoch ms."""
    feedback_ctx: FeedbackContext


class _Stored(msgspec.Struct, rename="camel"):
    pending: Pending | None = None
    replaced: list[tuple[str, int, bool]] = msgspec.field(default_factory=list)
    last_ms: int | None = None
    last_digest: str | None = None
    escalations: dict[str, int] = msgspec.field(default_factory=dict)
    skips: dict[str, int] = msgspec.field(default_factory=dict)
    answers: dict[str, int] = msgspec.field(default_factory=dict)
    total: int = 0


@dataclass(frozen=True, slots=True)
class EscalationCounts:
    """A copy of the slot's counters (``/health.agent.escalation``, ``/metrics``)."""

    escalations: dict[str, int]
    """By reason: each score signal (``error``, ``question``, ``code_issue``, ``app_churn``)
    of a ``selective`` escalation, ``changed`` (``focus``, ``rich``), ``stale``."""
    skips: dict[str, int]
    """Decisions that did not escalate, by reason (``cooldown``, ``idle``, ``duplicate``,
    ``below_threshold``); mode ``off`` decides nothing and counts nothing."""
    answers: dict[str, int]
    """Answers by outcome: ``accepted``, ``late`` (a replaced id in its grace), ``mismatch``,
    ``none`` (nothing pending)."""
    pending: bool
    total: int
    """Escalations, every reason together."""

    def to_json(self) -> dict[str, object]:
        """``/health.agent.escalation``."""
        return {
            "pending": self.pending,
            "escalations": self.total,
            "byReason": dict(self.escalations),
            "skips": dict(self.skips),
            "answers": dict(self.answers),
        }


@dataclass(slots=True)
class EscalationSlot:
    """The pending escalation, the grace list, the last escalation, the counters."""

    pending: Pending | None = None
    replaced: list[tuple[str, int, bool]] = field(default_factory=list)
    """``(id, tick ts, coding context)`` of the newest replaced escalations, oldest first."""
    last_ms: int | None = None
    last_digest: str | None = None
    escalations: Counter[str] = field(default_factory=Counter)
    skips: Counter[str] = field(default_factory=Counter)
    answers: Counter[str] = field(default_factory=Counter)
    total: int = 0

    @classmethod
    def from_json(cls, row: bytes | str) -> EscalationSlot:
        """The slot a stored row holds."""
        saved = msgspec.json.decode(row, type=_Stored)
        return cls(
            pending=saved.pending,
            replaced=[(i, ts, coding) for i, ts, coding in saved.replaced],
            last_ms=saved.last_ms,
            last_digest=saved.last_digest,
            escalations=Counter(saved.escalations),
            skips=Counter(saved.skips),
            answers=Counter(saved.answers),
            total=saved.total,
        )

    def to_json(self) -> bytes:
        """The row stored in agent.db."""
        stored = _Stored(
            pending=self.pending,
            replaced=list(self.replaced),
            last_ms=self.last_ms,
            last_digest=self.last_digest,
            escalations=dict(self.escalations),
            skips=dict(self.skips),
            answers=dict(self.answers),
            total=self.total,
        )
        return msgspec.json.encode(stored)

    def decided(self, decision: Decision) -> None:
        """Count a decision that did not escalate (mode ``off`` counts nothing)."""
        if decision.skip is not None and decision.skip != "off":
            self.skips[decision.skip] += 1

    def put(self, entry: Pending, decision: Decision, digest: str) -> None:
        """Make ``entry`` the pending escalation (latest wins) and count it."""
        if self.pending is not None:
            old = self.pending
            self.replaced = [*self.replaced, (old.id, old.ts, old.coding_context)][-GRACE_IDS:]
        self.pending = entry
        self.last_ms = entry.ts
        self.last_digest = digest
        self.total += 1
        if decision.trigger == "score":
            for reason in decision.score.reasons:
                self.escalations[reason.split(":")[0]] += 1
        elif decision.trigger is not None:
            self.escalations[decision.trigger] += 1

    def judge(self, answer_id: str, now_ms: int) -> tuple[Outcome, bool]:
        """What :meth:`respond` would make of an answer to ``answer_id``, changing nothing:
        its outcome, and whether the moment it answers was coding (its answer may be longer).
        """
        pending = self.pending
        if pending is not None and answer_id == pending.id:
            return "accepted", pending.coding_context
        for replaced_id, ts, coding in self.replaced:
            if replaced_id == answer_id and now_ms - ts < GRACE_MS:
                return "late", coding
        return ("mismatch" if pending is not None else "none"), False

    def respond(self, answer_id: str, now_ms: int) -> tuple[Outcome, bool]:
        """Take an answer to ``answer_id`` (:meth:`judge`): an accepted one clears the slot,
        a late one leaves the grace list; each outcome is counted."""
        outcome, coding = self.judge(answer_id, now_ms)
        if outcome == "accepted":
            self.pending = None
        elif outcome == "late":
            self.replaced = [r for r in self.replaced if r[0] != answer_id]
        return self._count(outcome), coding

    def _count(self, outcome: Outcome) -> Outcome:
        self.answers[outcome] += 1
        return outcome

    def forget(self, span: Span, reach_ms: int) -> int:
        """Drop what quotes moments that arrived in ``span``: the pending escalation if its
        tick's window (``reach_ms`` before its entry) met the range, and the last escalated
        digest (kept to tell a repeat) if its entry is in it. Returns the escalations dropped
        (0 or 1); the counters stay."""
        if self.last_ms is not None and span.holds(self.last_ms):
            self.last_digest = None
        pending = self.pending
        if pending is None or pending.ts < span.since or pending.ts - reach_ms > span.until:
            return 0
        self.pending = None
        return 1

    def counts(self) -> EscalationCounts:
        """A copy of the counters."""
        return EscalationCounts(
            escalations=dict(self.escalations),
            skips=dict(self.skips),
            answers=dict(self.answers),
            pending=self.pending is not None,
            total=self.total,
        )


def refusal(pending: Pending | None) -> str:
    """The error an agent reads for a refused answer, given what is pending."""
    if pending is not None:
        return f"id mismatch: expected {pending.id}"
    return "no pending escalation"
