"""The escalation message: what Sinain's agent reads of an escalated moment.

Sinain's format, sections joined by blank lines: the header ``[sinain-hud live context — tick
#N]``; ``## Digest``; ``## Active Context`` (``App: X``, ``App history: A → B``); ``## Errors
(high priority)``, each error in a code fence; ``## Screen (recent OCR)``, lines ``- [12s ago]
[App] [title] text``; ``## Audio (recent transcripts)``, lines ``- [5s ago] "text"``; what to
do; the footer :data:`FOOTER`. Errors come first; when a question made a ``selective``
escalation (and no error did), the audio comes before the screen, and the screen shows its
newest :data:`SELECTIVE_SCREEN_LINES` events only.

It is made from what the tick used, the entry it stored and the window its prompt was made
from, never the rings as they are later. That window was built from what the buffers stored,
redacted at ingest, so the message holds no secret the rest of the relay would not show.
Ages count to the entry's time, so the same entry and window always give the same text. The
message shows what agents may see of that window (the privacy matrix's ``AGENT_GATEWAY``
column); the decision reads the whole window.
"""

from __future__ import annotations

from actors.agent.core.entries import AgentRecord
from actors.agent.core.situation import (
    LINE_CHARS,
    TITLE_CHARS,
    ago,
    bounded,
    detected_errors,
    fenced,
)
from actors.core.screen_budget import is_error, may_hold_errors
from actors.core.stack_traces import scanned_lines
from actors.core.window import AudioEvent, ScreenEvent, TickWindow
from actors.escalation.decision import (
    Decision,
    Score,
    Trigger,
    coding_context,
    decide,
    escalation_id,
    score,
)
from actors.escalation.slot import EscalationSlot, FeedbackContext, Pending
from config.agent.settings import EscalationMode, EscalationPolicy
from config.app_names import normalize_app_name

FOOTER = "Respond naturally — this will appear on the user's HUD overlay."
SELECTIVE_SCREEN_LINES = 5
"""Screen events a ``selective`` message shows (the newest)."""
MAX_ERRORS = 5
"""Errors shown at most, newest first."""
_RULES = (
    "Never describe what the user is doing: they can see their own screen. Never answer with "
    "filler such as 'standing by'. Fix something, teach something, or connect dots the user "
    "has not noticed."
)
_CODING = (
    "The user is writing code: if there is an error, find its cause and suggest a fix with "
    "code; if they seem stuck, give specific guidance or a snippet; otherwise share an insight "
    "about the technology on screen."
)
_GENERAL = (
    "Help the user with what is above in 2-5 sentences: an error, fix it; a question, answer "
    "it; reading or browsing, a relevant insight; a conversation, its key points and actions."
)
_STALE = (
    "## Note: Stale Escalation\n"
    "Nothing was escalated for a while, though the user's screen is still active. Offer "
    "something proactive that connects to what they were working on."
)


def _screen_line(event: ScreenEvent, now_ms: int) -> str:
    title = f" [{bounded(event.window_title, TITLE_CHARS)}]" if event.window_title else ""
    said = event.ocr or event.narrative or event.title
    return (
        f"- {ago(now_ms, event.received_at)} [{normalize_app_name(event.app)}]{title} "
        f"{bounded(said, LINE_CHARS)}"
    )


def _audio_line(chunk: AudioEvent, now_ms: int) -> str:
    return f'- {ago(now_ms, chunk.ts)} "{bounded(chunk.text, LINE_CHARS)}"'


def error_texts(window: TickWindow) -> list[str]:
    """The window's errors, newest first, each once: its stack traces, or, without any, its
    error lines; at most :data:`MAX_ERRORS`."""
    traces = [trace.text for trace in detected_errors(window, MAX_ERRORS)]
    if traces:
        return traces
    found: list[str] = []
    for event in reversed(window.screen):
        for line in scanned_lines(event.ocr):
            text = line.strip()
            if may_hold_errors(text) and is_error(text) and text not in found:
                found.append(text)
                if len(found) == MAX_ERRORS:
                    return found
    return found


def build_message(
    entry: AgentRecord,
    window: TickWindow,
    *,
    mode: EscalationMode,
    scored: Score,
    trigger: Trigger,
    coding: bool,
) -> str:
    """The message of an escalation of ``entry``, made from the ``window`` of its tick."""
    now = entry.ts
    sections = [f"[sinain-hud live context — tick #{entry.id}]", f"## Digest\n{entry.digest}"]
    active = f"## Active Context\nApp: {normalize_app_name(window.current_app)}"
    if window.app_history:
        apps = " → ".join(normalize_app_name(a.app) for a in window.app_history)
        active += f"\nApp history: {apps}"
    sections.append(active)
    errors = error_texts(window)
    if errors:
        sections.append("## Errors (high priority)")
        sections += ["\n".join(fenced(text)).rstrip("\n") for text in errors]
    selective = mode == "selective"
    screen = window.screen[-SELECTIVE_SCREEN_LINES:] if selective else window.screen
    screen_part = [
        "## Screen (recent OCR)\n" + "\n".join(_screen_line(e, now) for e in reversed(screen))
    ]
    audio_part = [
        "## Audio (recent transcripts)\n"
        + "\n".join(_audio_line(a, now) for a in reversed(window.audio))
    ]
    first_audio = selective and scored.question and not errors
    parts = (audio_part, screen_part) if first_audio else (screen_part, audio_part)
    for part, present in zip(parts, _present(window, first_audio=first_audio), strict=True):
        if present:
            sections += part
    sections.append(f"{_CODING if coding else _GENERAL}\n{_RULES}")
    if trigger == "stale":
        sections.append(_STALE)
    sections.append(FOOTER)
    return "\n\n".join(sections)


def _present(window: TickWindow, *, first_audio: bool) -> tuple[bool, bool]:
    """Whether the two parts, in their order, have lines."""
    screen, audio = bool(window.screen), bool(window.audio)
    return (audio, screen) if first_audio else (screen, audio)


def escalation_of(
    entry: AgentRecord,
    window: TickWindow,
    mode: EscalationMode,
    decision: Decision,
    shown: TickWindow | None = None,
) -> Pending:
    """The escalation of ``entry``, which ``decision`` escalated, and its message, made from
    ``shown`` (what agents may see of the ``window``; by default all of it)."""
    assert decision.trigger is not None, "only an escalating decision makes one"
    scored, coding = decision.score, coding_context(window)
    message = build_message(
        entry,
        window if shown is None else shown,
        mode=mode,
        scored=scored,
        trigger=decision.trigger,
        coding=coding,
    )
    return Pending(
        id=escalation_id(entry.id, entry.ts),
        message=message,
        score=scored.total,
        coding_context=coding,
        ts=entry.ts,
        feedback_ctx=FeedbackContext(
            tick_id=entry.id,
            hud=entry.hud,
            current_app=entry.current_app,
            escalation_score=scored.total,
            escalation_reasons=list(scored.reasons),
            coding_context=coding,
            digest=entry.digest,
        ),
    )


def escalate(
    slot: EscalationSlot,
    entry: AgentRecord,
    window: TickWindow,
    policy: EscalationPolicy,
    shown: TickWindow | None = None,
) -> tuple[Decision, Pending | None]:
    """Decide on ``entry`` (the tick's, with its ``window``) against ``slot``'s last
    escalation; put the escalation into ``slot``, or count the skip. Returns the decision and
    the escalation, if there is one. Its message is made from ``shown``, what agents may see
    of the window (the privacy matrix's ``AGENT_GATEWAY`` column), when given."""
    decision = decide(
        policy,
        hud=entry.hud,
        digest=entry.digest,
        scored=score(entry.digest, window),
        now_ms=entry.ts,
        last_ms=slot.last_ms,
        last_digest=slot.last_digest,
    )
    if decision.trigger is None:
        slot.decided(decision)
        return decision, None
    pending = escalation_of(entry, window, policy.mode, decision, shown)
    slot.put(pending, decision, entry.digest)
    return decision, pending
