"""SITUATION.md: what the user is doing, as a Markdown file for Sinain's OpenClaw plugin.

The plugin reads the file sinain-core writes after each tick; the relay writes the same
shape (``RELAY_SITUATION_FILE``): a header with the time, the entry's id, the latency and
the model; the digest; the active app and the app history; the screen lines and the
transcripts of the window (each labelled, as in the prompt, with whose words it holds when its
mark said so); the stack traces found in its OCR; and the window's counts. The
plugin reads the digest back as the text between ``## Digest`` and the next heading.

It is rendered from what the tick used: the entry it stored and the window its prompt was
made from, never the rings as they are when the file is written. That window was built from
what the buffers stored, which was redacted at ingest, so the file holds no secret the rest
of the relay would not show. Ages (``[12s ago]``) count to the entry's time, as the header's
time is, so the same entry and window always give the same text.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from actors.agent.core.entries import AgentRecord
from actors.agent.core.prompt import SPEAKERS
from actors.common.forgetting import Span
from actors.core.stack_traces import MAX_TRACES, StackTrace, find_stack_traces
from actors.core.window import AudioEvent, ScreenEvent, TickWindow
from config.app_names import normalize_app_name

LINE_CHARS = 500
"""Characters of one screen line's text or one transcript, at most."""
TITLE_CHARS = 120
"""Characters of a window title in a screen line, at most."""
APP_SEPARATOR = " -> "
NO_TEXT = "(no text)"
ELLIPSIS = "…"
FORGOTTEN = "(forgotten)"
"""The digest of an entry whose moment was forgotten, where the file showed it."""
_UPDATED = re.compile(r"^> Auto-updated by sinain-relay at (\S+)$", re.M)
_BACKTICKS = re.compile(r"`+")


@dataclass(frozen=True, slots=True)
class Situation:
    """What one successful tick gives the file: the entry it stored and the window its
    prompt was made from; ``tick_id`` ties the writer's log lines to the tick's."""

    tick_id: int
    entry: AgentRecord
    window: TickWindow


def _iso(ms: int) -> str:
    """``2026-01-31T23:13:20.000Z``: UTC to the millisecond."""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def ago(now_ms: int, at_ms: int) -> str:
    return f"[{max(0, round((now_ms - at_ms) / 1000))}s ago]"


def bounded(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    flat = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return flat if len(flat) <= limit else flat[: limit - 1] + ELLIPSIS


def _screen_line(event: ScreenEvent, now_ms: int) -> str:
    where = normalize_app_name(event.app)
    if event.window_title:
        where += " — " + bounded(event.window_title, TITLE_CHARS)
    said = event.ocr or event.narrative or event.title
    text = bounded(said, LINE_CHARS) if said else NO_TEXT
    return f"- {ago(now_ms, event.received_at)} [{where}] {text}"


def _audio_line(chunk: AudioEvent, now_ms: int) -> str:
    speaker = SPEAKERS[chunk.source] if chunk.source is not None else ""
    return f"- {ago(now_ms, chunk.ts)} {speaker}{bounded(chunk.text, LINE_CHARS)}"


def detected_errors(window: TickWindow, limit: int = MAX_TRACES) -> tuple[StackTrace, ...]:
    """The stack traces in the window's OCR, from the newest screen event back, each once,
    at most ``limit``."""
    found: list[StackTrace] = []
    seen: set[str] = set()
    for event in reversed(window.screen):
        for trace in find_stack_traces(event.ocr, limit):
            if trace.text not in seen:
                seen.add(trace.text)
                found.append(trace)
            if len(found) == limit:
                return tuple(found)
    return tuple(found)


def fenced(text: str) -> list[str]:
    """``text`` in a code fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, text, fence, ""]


def render_situation(entry: AgentRecord, window: TickWindow) -> str:
    """The text of SITUATION.md for ``entry`` and the ``window`` its prompt was made from."""
    now = entry.ts
    lines = [
        "# Situation",
        "",
        f"> Auto-updated by sinain-relay at {_iso(now)}",
        f"> Tick #{entry.id} | Latency: {entry.latency_ms}ms | Model: {entry.model}",
        "",
        "## Digest",
        "",
        entry.digest,
        "",
        "## Active Application",
        "",
        normalize_app_name(window.current_app),
        "",
    ]
    if window.app_history:
        apps = APP_SEPARATOR.join(normalize_app_name(a.app) for a in window.app_history)
        lines += ["## App History", "", apps, ""]
    if window.screen:
        lines += ["## Screen (OCR)", "", *(_screen_line(e, now) for e in window.screen), ""]
    if window.audio:
        lines += ["## Audio Transcripts", "", *(_audio_line(a, now) for a in window.audio), ""]
    errors = detected_errors(window)
    if errors:
        lines += ["## Detected Errors", ""]
        for trace in errors:
            lines += fenced(trace.text)
    lines += [
        "## Metadata",
        "",
        f"- Screen events in window: {window.screen_count}",
        f"- Audio events in window: {window.audio_count}",
        f"- Context window: {round(window.window_ms / 1000)}s",
        f"- Parsed OK: {'true' if entry.parsed_ok else 'false'}",
        "",
    ]
    return "\n".join(lines)


def without_span(situation: Situation, span: Span) -> Situation:
    """``situation`` less what arrived in ``span``: the window's screen events and
    transcripts, and the entry's hud and digest when the entry is in it (the counts stay)."""
    window = situation.window
    kept = replace(
        window,
        screen=tuple(e for e in window.screen if not span.holds(e.received_at)),
        audio=tuple(a for a in window.audio if not span.holds(a.ts)),
        images=(),  # never rendered; and they are the range's pictures too
    )
    entry = situation.entry
    if span.holds(entry.ts):
        entry = replace(entry, hud=FORGOTTEN, digest=FORGOTTEN)
    return Situation(situation.tick_id, entry, kept)


def lines_removed(before: str, after: str) -> int:
    """Lines of ``before`` that ``after`` no longer has (each line counted as often as it
    appears)."""
    return sum((Counter(before.splitlines()) - Counter(after.splitlines())).values())


def written_at(text: str) -> int | None:
    """The entry time (epoch ms) a SITUATION.md text says it was written for, if it says."""
    match = _UPDATED.search(text)
    if match is None:
        return None
    try:
        moment = datetime.fromisoformat(match[1].replace("Z", "+00:00"))
    except ValueError:
        return None
    return round(moment.timestamp() * 1000)
