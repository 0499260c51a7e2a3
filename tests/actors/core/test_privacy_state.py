"""The privacy controls as plain data: what a start puts in force, what a change keeps, when a
pause is over; no actor, no clock but the ``now_ms`` given."""

from __future__ import annotations

import msgspec

from actors.core.bodies import decode, sense_input
from actors.core.control_bodies import PrivacyUpdate
from actors.core.exclusion import PrivacyState, StoredPrivacy, changed, starting

NOW = 1_769_901_200_000
ENV = PrivacyState.of(("1Password",), ("(?i)incognito",), 7.0)


def update(**fields: object) -> PrivacyUpdate:
    return decode(msgspec.json.encode(fields), PrivacyUpdate)


def test_a_start_with_nothing_stored_is_the_environments() -> None:
    assert starting(ENV, StoredPrivacy(), NOW) == ENV


def test_what_was_set_wins_over_the_environment_and_the_rest_follows_it() -> None:
    state, kept = changed(ENV, StoredPrivacy(), update(excludeApps=["Slack"]), NOW)
    assert (state.exclude_apps, state.exclude_titles) == (("Slack",), ("(?i)incognito",))
    restarted = starting(PrivacyState.of(("Code",), ("bank",), 2.0), kept, NOW)
    assert (restarted.exclude_apps, restarted.exclude_titles, restarted.retention_days) == (
        ("Slack",),
        ("bank",),
        2.0,
    )


def test_a_timed_pause_is_over_at_its_end_and_at_a_later_start() -> None:
    state, kept = changed(ENV, StoredPrivacy(), update(pauseMinutes=1), NOW)
    assert state.paused_at(NOW + 59_999)
    assert not state.paused_at(NOW + 60_000)
    assert starting(ENV, kept, NOW + 1_000).paused
    assert not starting(ENV, kept, NOW + 60_000).paused


def test_a_change_keeps_the_fields_it_leaves_out_and_the_rule_follows_the_lists() -> None:
    paused, kept = changed(ENV, StoredPrivacy(), update(paused=True), NOW)
    state, _ = changed(paused, kept, update(excludeTitles=["(?i)vault", "payroll"]), NOW)
    assert (state.paused, state.paused_until_ms, state.exclude_apps) == (True, None, ("1Password",))
    title = {"type": "text", "ts": 1, "meta": {"app": "Files", "windowTitle": "Payroll"}}
    assert state.rule.reason(sense_input(title)) is None  # written without (?i)
    title["meta"] = {"app": "Files", "windowTitle": "payroll.xlsx"}
    assert state.rule.reason(sense_input(title)) == "title"
    title["meta"] = {"app": "Files", "windowTitle": "My VAULT"}
    assert state.rule.reason(sense_input(title)) == "title"
