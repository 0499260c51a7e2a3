"""The escalation decision, its score and its message: plain functions over plain data."""

from __future__ import annotations

import re

import pytest

from actors.agent.core.escalation_message import FOOTER, escalation_of
from actors.core.window import TickWindow
from actors.escalation.decision import (
    CODING_REPLY_CHARS,
    REPLY_CHARS,
    THRESHOLD,
    Decision,
    Score,
    coding_context,
    decide,
    escalation_id,
    reply_text,
    score,
)
from config.agent.settings import EscalationMode, EscalationPolicy
from tests.actors.core.test_situation import NOW, TRACE, a_window, an_entry, heard, screen

QUIET = a_window([], [screen(1, "Quarterly report draft", "Pages", 10)])
ERROR = a_window([], [screen(1, TRACE, "iTerm2", 10)])
QUESTION = a_window([heard(1, "[🎙] why is the retry rate so high?", 5)], [])
TODO = a_window([], [screen(1, "# TODO: handle the paused state", "Pages", 10)])
CHURN = a_window(
    [],
    [
        screen(n, f"page {n}", app, 60 - 10 * n)
        for n, app in enumerate(("Slack", "Mail", "Safari", "Notes", "Pages"))
    ],
)


def decided(
    mode: EscalationMode,
    *,
    window: TickWindow = QUIET,
    digest: str = "The user drafts the quarterly report.",
    hud: str = "Drafting the report",
    now_ms: int = NOW,
    last_ms: int | None = None,
    last_digest: str | None = None,
    cooldown_ms: int = 30_000,
    stale_ms: int = 0,
) -> Decision:
    return decide(
        EscalationPolicy(mode, cooldown_ms, stale_ms),
        hud=hud,
        digest=digest,
        scored=score(digest, window),
        now_ms=now_ms,
        last_ms=last_ms,
        last_digest=last_digest,
    )


# -- the score --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("window", "digest", "reasons", "total"),
    [
        (QUIET, "The user drafts a report.", (), 0),
        (ERROR, "The user reads a stack trace.", ("error",), 3),
        (QUIET, "The build failed on CI.", ("error",), 3),
        (QUIET, "An error-free run.", ("error",), 3),
        (QUESTION, "The user asks about retries.", ("question:audio",), 2),
        (
            a_window([], [screen(1, "how do I rebase onto main", "Safari", 5)]),
            "The user searches.",
            ("question:screen",),
            2,
        ),
        (TODO, "The user edits notes.", ("code_issue:todo",), 1),
        (
            a_window([], [screen(1, "FAILED tests/test_idle.py::test_paused", "iTerm2", 5)]),
            "Tests run.",
            ("error", "code_issue:failing_test"),
            4,
        ),
        (CHURN, "The user switches apps.", ("app_churn",), 1),
        (
            a_window(
                [heard(1, "[🎙] any ideas why it hangs", 5)],
                [screen(1, "FIXME: the lock", "Pages", 10)],
            ),
            "The user is puzzled.",
            ("question:audio", "code_issue:fixme"),
            3,
        ),
    ],
)
def test_each_signal_adds_its_points(
    window: TickWindow, digest: str, reasons: tuple[str, ...], total: int
) -> None:
    assert score(digest, window) == Score(total, reasons)


def test_a_question_in_the_audio_is_preferred_to_one_on_screen() -> None:
    window = a_window(
        [heard(1, "[🔊] is it the enum?", 5)], [screen(1, "what is wrong here?", "Safari", 5)]
    )
    assert score("x", window).reasons == ("question:audio",)


# -- the decision, mode by mode ----------------------------------------------------------------


def test_mode_off_never_escalates_even_an_error() -> None:
    assert decided("off", window=ERROR, stale_ms=1).skip == "off"


@pytest.mark.parametrize(("window", "trigger"), [(ERROR, "score"), (QUIET, None)])
def test_selective_escalates_at_the_threshold_only(window: TickWindow, trigger: str | None) -> None:
    decision = decided("selective", window=window)
    assert decision.trigger == trigger
    assert decision.escalate == (decision.score.total >= THRESHOLD)
    if trigger is None:
        assert decision.skip == "below_threshold"


def test_selective_a_question_alone_is_not_enough_with_a_code_issue_it_is() -> None:
    assert decided("selective", window=QUESTION).skip == "below_threshold"
    both = a_window(
        [heard(1, "[🎙] why is the retry rate so high?", 5)],
        [screen(1, "TODO: retry budget", "Pages", 10)],
    )
    assert decided("selective", window=both).trigger == "score"


@pytest.mark.parametrize("mode", ["focus", "rich"])
def test_focus_and_rich_escalate_any_changed_digest(mode: EscalationMode) -> None:
    assert decided(mode).trigger == "changed"
    assert decided(mode, last_digest="Another digest.", last_ms=NOW - 60_000).trigger == "changed"


@pytest.mark.parametrize("mode", ["selective", "focus", "rich"])
def test_the_same_digest_is_never_escalated_twice(mode: EscalationMode) -> None:
    digest = "The build failed on CI."
    decision = decided(mode, window=ERROR, digest=digest, last_digest=digest, last_ms=NOW - 60_000)
    assert decision.skip == "duplicate"


@pytest.mark.parametrize("hud", ["Idle", "—"])
@pytest.mark.parametrize("mode", ["selective", "focus", "rich"])
def test_an_idle_hud_is_never_escalated(mode: EscalationMode, hud: str) -> None:
    assert decided(mode, window=ERROR, hud=hud).skip == "idle"


@pytest.mark.parametrize("mode", ["selective", "focus", "rich"])
def test_nothing_escalates_inside_the_cooldown(mode: EscalationMode) -> None:
    inside = decided(mode, window=ERROR, last_ms=NOW - 29_999, last_digest="old")
    assert inside.skip == "cooldown"
    assert decided(mode, window=ERROR, last_ms=NOW - 30_000, last_digest="old").escalate


def test_stale_escalates_an_idle_or_unchanged_moment_after_that_long() -> None:
    digest = "Nothing new."
    stale = decided(
        "selective",
        digest=digest,
        hud="Idle",
        last_ms=NOW - 90_001,
        last_digest=digest,
        stale_ms=90_000,
    )
    assert stale.trigger == "stale"
    fresh = decided(
        "selective",
        digest=digest,
        hud="Idle",
        last_ms=NOW - 89_999,
        last_digest=digest,
        stale_ms=90_000,
    )
    assert fresh.skip == "idle"
    assert decided("selective", hud="Idle", stale_ms=90_000).trigger == "stale"  # none ever


def test_the_cooldown_is_checked_before_staleness() -> None:
    decision = decided("rich", last_ms=NOW - 10_000, cooldown_ms=30_000, stale_ms=5_000)
    assert decision.skip == "cooldown"


def test_staleness_is_off_at_zero() -> None:
    assert decided("selective", hud="Idle", last_ms=NOW - 10**9, stale_ms=0).skip == "idle"


# -- the message --------------------------------------------------------------------------------


def message_of(window: TickWindow, mode: EscalationMode, digest: str = "The user debugs.") -> str:
    entry = an_entry(window, digest)
    decision = decide(
        EscalationPolicy(mode),
        hud=entry.hud,
        digest=digest,
        scored=score(digest, window),
        now_ms=entry.ts,
        last_ms=None,
        last_digest=None,
    )
    assert decision.escalate
    return escalation_of(entry, window, mode, decision).message


def test_the_message_has_sinains_sections_in_order() -> None:
    window = a_window(
        [heard(1, "[🎙] is it the enum?", 5)],
        [
            screen(1, "tab one", "Safari", 40, title="Docs"),
            screen(2, TRACE, "iTerm2", 12, title="pytest"),
        ],
    )
    text = message_of(window, "rich")
    assert text.startswith("[sinain-hud live context — tick #7]\n\n## Digest\nThe user debugs.")
    assert "## Active Context\nApp: iTerm\nApp history: Safari → iTerm" in text
    assert "## Errors (high priority)\n\n```\nTraceback (most recent call last):" in text
    assert "- [12s ago] [iTerm] [pytest] Traceback (most recent call last):" in text
    assert '## Audio (recent transcripts)\n- [5s ago] "is it the enum?"' in text
    assert text.endswith(FOOTER)
    headings = re.findall(r"^## .*$", text, re.MULTILINE)
    assert headings == [
        "## Digest",
        "## Active Context",
        "## Errors (high priority)",
        "## Screen (recent OCR)",
        "## Audio (recent transcripts)",
    ]


def test_a_selective_question_puts_the_audio_first() -> None:
    window = a_window(
        [heard(1, "[🎙] why is the retry rate so high?", 5)],
        [screen(1, "TODO: retry budget", "Pages", 10)],
    )
    text = message_of(window, "selective")
    assert text.index("## Audio (recent transcripts)") < text.index("## Screen (recent OCR)")
    rich = message_of(window, "rich")
    assert rich.index("## Screen (recent OCR)") < rich.index("## Audio (recent transcripts)")


def test_selective_errors_come_first_and_the_screen_is_cut_to_the_newest_five() -> None:
    events = [screen(n, f"line {n}", "iTerm2", 60 - n) for n in range(1, 9)]
    window = a_window([], [*events, screen(9, TRACE, "iTerm2", 1)])
    text = message_of(window, "selective")
    assert text.index("## Errors") < text.index("## Screen")
    screen_lines = [line for line in text.splitlines() if line.startswith("- [")]
    assert len(screen_lines) == 5
    assert screen_lines[0].startswith("- [1s ago] [iTerm] Traceback")


def test_the_same_entry_always_gets_the_same_message_and_id() -> None:
    assert message_of(ERROR, "rich") == message_of(ERROR, "rich")
    assert escalation_id(7, NOW) == escalation_id(7, NOW)
    assert re.fullmatch(r"[0-9a-f]{16}", escalation_id(7, NOW))
    assert escalation_id(7, NOW) != escalation_id(8, NOW) != escalation_id(7, NOW + 1)


def test_a_stale_escalation_says_so() -> None:
    window, entry = QUIET, an_entry(QUIET)
    decision = Decision(score("x", window), trigger="stale")
    assert (
        "## Note: Stale Escalation" in escalation_of(entry, window, "selective", decision).message
    )


def test_coding_context_from_the_editor_or_the_code_on_screen() -> None:
    assert coding_context(a_window([], [screen(1, "notes", "Code", 5)]))
    code = "def tick():\n    return 1\nimport os\nclass Ticker:"
    assert coding_context(a_window([], [screen(1, code, "Safari", 5)]))
    assert not coding_context(QUIET)


def test_an_answer_is_marked_trimmed_and_cut() -> None:
    assert reply_text("  Use -x.  ", coding=False) == "[🤖] Use -x."
    assert len(reply_text("a" * 5000, coding=False)) == len("[🤖] ") + REPLY_CHARS
    assert len(reply_text("a" * 5000, coding=True)) == len("[🤖] ") + CODING_REPLY_CHARS
