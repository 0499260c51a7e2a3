"""The escalation slot: latest wins, the grace list, answers, the row it is stored as."""

from __future__ import annotations

from actors.common.forgetting import Span
from actors.escalation.decision import Decision, Score
from actors.escalation.slot import (
    GRACE_IDS,
    GRACE_MS,
    EscalationSlot,
    FeedbackContext,
    Pending,
    refusal,
)

NOW = 1_769_901_200_000
ERROR = Decision(Score(4, ("error", "question:audio")), trigger="score")


def pending(n: int, ts: int = NOW, *, coding: bool = False) -> Pending:
    return Pending(
        id=f"{n:016x}",
        message=f"message {n}",
        score=4,
        coding_context=coding,
        ts=ts,
        feedback_ctx=FeedbackContext(
            tick_id=n,
            hud="hud",
            current_app="iTerm2",
            escalation_score=4,
            escalation_reasons=["error"],
            coding_context=coding,
            digest=f"digest {n}",
        ),
    )


def test_the_pending_id_clears_the_slot_and_is_taken_once() -> None:
    slot = EscalationSlot()
    slot.put(pending(1, coding=True), ERROR, "digest 1")
    assert slot.respond(pending(1).id, NOW + 1) == ("accepted", True)
    assert slot.pending is None
    assert slot.respond(pending(1).id, NOW + 2) == ("none", False)
    assert refusal(slot.pending) == "no pending escalation"


def test_latest_wins_and_a_replaced_id_is_taken_within_its_grace() -> None:
    slot = EscalationSlot()
    slot.put(pending(1, NOW), ERROR, "d1")
    slot.put(pending(2, NOW + 5_000), ERROR, "d2")
    assert slot.pending == pending(2, NOW + 5_000)
    assert slot.respond(pending(1).id, NOW + GRACE_MS - 1) == ("late", False)
    assert slot.pending == pending(2, NOW + 5_000)  # kept
    assert slot.respond(pending(1).id, NOW + 1) == ("mismatch", False)  # taken once
    assert refusal(slot.pending) == f"id mismatch: expected {pending(2).id}"


def test_judging_an_answer_takes_nothing_and_counts_nothing() -> None:
    slot = EscalationSlot()
    slot.put(pending(1, NOW), ERROR, "d1")
    slot.put(pending(2, NOW + 1, coding=True), ERROR, "d2")
    before = slot.to_json()
    assert slot.judge(pending(2).id, NOW + 2) == ("accepted", True)
    assert slot.judge(pending(1).id, NOW + 2) == ("late", False)
    assert slot.judge("nobody", NOW + 2) == ("mismatch", False)
    assert slot.to_json() == before


def test_a_replaced_id_past_its_grace_is_a_mismatch() -> None:
    slot = EscalationSlot()
    slot.put(pending(1, NOW), ERROR, "d1")
    slot.put(pending(2, NOW + 1), ERROR, "d2")
    assert slot.respond(pending(1).id, NOW + GRACE_MS) == ("mismatch", False)


def test_only_the_newest_five_replaced_ids_are_kept() -> None:
    slot = EscalationSlot()
    for n in range(1, GRACE_IDS + 3):
        slot.put(pending(n), ERROR, f"d{n}")
    assert [i for i, _, _ in slot.replaced] == [pending(n).id for n in range(2, GRACE_IDS + 2)]
    assert slot.respond(pending(1).id, NOW)[0] == "mismatch"
    assert slot.respond(pending(2).id, NOW)[0] == "late"


def test_counts_by_reason_and_the_row_round_trips() -> None:
    slot = EscalationSlot()
    slot.put(pending(1), ERROR, "d1")
    slot.put(pending(2), Decision(Score(0, ()), trigger="stale"), "d2")
    slot.decided(Decision(Score(0, ()), skip="cooldown"))
    slot.decided(Decision(Score(0, ()), skip="off"))
    slot.respond("nobody", NOW)
    again = EscalationSlot.from_json(slot.to_json())
    counts = again.counts()
    assert counts.total == 2
    assert counts.escalations == {"error": 1, "question": 1, "stale": 1}
    assert counts.skips == {"cooldown": 1}
    assert counts.answers == {"mismatch": 1}
    assert again.pending == pending(2)
    assert again.replaced == slot.replaced
    assert (again.last_ms, again.last_digest) == (NOW, "d2")


def test_forgetting_a_range_drops_the_escalation_whose_window_met_it() -> None:
    reach = 120_000
    slot = EscalationSlot()
    slot.put(pending(1, NOW), ERROR, "d1")
    assert slot.forget(Span(since=NOW + 1, until=NOW + 10), reach) == 0  # after its moment
    assert slot.forget(Span(since=0, until=NOW - reach - 1), reach) == 0  # before its window
    assert slot.counts().pending
    assert slot.forget(Span(since=NOW - reach, until=NOW - reach), reach) == 1  # its window
    assert not slot.counts().pending
    assert (slot.last_ms, slot.last_digest) == (NOW, "d1")  # its entry was not in the range
    total = slot.counts().total
    slot.put(pending(2, NOW + 5), ERROR, "d2")
    assert slot.forget(Span(since=NOW + 5, until=NOW + 5), reach) == 1
    assert (slot.last_ms, slot.last_digest) == (NOW + 5, None)
    assert slot.counts().total == total + 1  # the counters stay
