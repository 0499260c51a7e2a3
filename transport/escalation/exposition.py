"""The escalation slot's metric families (``relay_escalation*``), from the digest store's
counters (:class:`actors.escalation.slot.EscalationCounts`), stored before they are shown:
a count a scrape saw never goes back, across restarts too."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

from actors.escalation.slot import EscalationCounts

REASONS = ("error", "question", "code_issue", "app_churn", "changed", "stale")
SKIPS = ("cooldown", "idle", "duplicate", "below_threshold")
ANSWERS = ("accepted", "late", "mismatch", "none")


def escalation_families(counts: EscalationCounts) -> Iterator[Metric]:
    """``relay_escalations_total``, ``relay_escalation_reasons_total``,
    ``relay_escalation_skips_total``, ``relay_escalation_answers_total`` and
    ``relay_escalation_pending``; every known label, zeros too."""
    yield CounterMetricFamily(
        "relay_escalations_total",
        "Ticks escalated to the slot Sinain's agents poll.",
        value=counts.total,
    )
    families = (
        (
            "relay_escalation_reasons_total",
            "Escalations by reason: each signal of a selective one (error, question, "
            "code_issue, app_churn), changed (focus, rich), stale.",
            "reason",
            REASONS,
            counts.escalations,
        ),
        (
            "relay_escalation_skips_total",
            "Ticks not escalated, by reason: cooldown, idle (the hud Idle or —), duplicate "
            "(the digest last escalated), below_threshold (selective).",
            "reason",
            SKIPS,
            counts.skips,
        ),
        (
            "relay_escalation_answers_total",
            "Agents' answers by outcome: accepted, late (a replaced escalation within its "
            "grace), mismatch (another id pending), none (nothing pending).",
            "outcome",
            ANSWERS,
            counts.answers,
        ),
    )
    for name, doc, label_name, labels, values in families:
        family = CounterMetricFamily(name, doc, labels=[label_name])
        for label in (*labels, *sorted(set(values) - set(labels))):
            family.add_metric([label], values.get(label, 0))
        yield family
    yield GaugeMetricFamily(
        "relay_escalation_pending",
        "1 while an escalation waits for an answer.",
        value=int(counts.pending),
    )
