"""The LLM prompt and the fingerprint of what it would send.

The prompt opens with its role and rules (:data:`OPENING`), the same every time; the window
follows, and the answer's shape (:data:`ANSWER_TEMPLATE`) closes it, the last thing the
model reads before it answers. The window says which moment is now. A small model takes the
first thing it reads, so the window's newest moment comes first, under :data:`NOW_HEADER`:
the active app, the newest screen event and the newest transcript. What came before follows
as background, under :data:`EARLIER_HEADER`: the app history, then the older screen events
and transcripts, newest first. Every event is labelled with its age (``[12s ago]``). The
screen events' OCR texts share one budget (:data:`SCREEN_BUDGET`), spent newest first, with
repeated lines shown once, error and question lines whole and each cut marked
(:mod:`actors.core.screen_budget`): the newest screen is the one shown most fully.

The previous digest is not part of it: given back, a small model copies it as the new digest
instead of describing now, and the background holds what it would say. The rules ask the
digest to end with what the user did before.

The prompt's labels are constants here: whatever reads a prompt back (the demo's stand-in
LLM) takes them from this module, so the format is written once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from actors.core.screen_budget import Cut, Fitted, fit_screen
from actors.core.shapes import AudioSource
from actors.core.window import AudioEvent, ScreenEvent, TickWindow
from config.app_names import normalize_app_name

SCREEN_BUDGET = 1_200
"""OCR characters the screen section shows, all its events together (each line costs its
characters and a space)."""
AUDIO_CHARS = 300
"""Transcript characters per audio chunk in the prompt."""
TITLE_CHARS = 120
"""Characters of a window title or an observation title in the prompt."""
NARRATIVE_CHARS = 200
"""Characters of an observation's narrative in the prompt."""
NOW_HEADER = "NOW (what the hud and the digest describe):"
"""Heads the newest moment: the active app, the newest screen, the newest speech."""
ACTIVE_APP = "Active app:"
"""Names the active app under :data:`NOW_HEADER` when the newest screen line does not (there
is none, or it is of another app): a model copied the line as its hud."""
SCREEN_NOW = "Screen now (OCR text):"
AUDIO_NOW = "Speech now:"
EARLIER_HEADER = "EARLIER (background, newest first):"
"""Heads what came before the newest moment: the app history, older screens and speech."""
APP_HISTORY = "App history:"
APP_SEPARATOR = " → "
NO_APPS = "(none)"
SCREEN_HEADER = "Screens before:"
"""Heads the older screen events, when there are any."""
NO_SCREEN = "(no screen data)"
SCREENSHOTS = "Screenshots attached (newest first): {count}"
"""The prompt's last line when the request carries screen images (``{count}`` of them), which
follow it (:func:`actors.agent.core.completion.request_body`); a request sent without them has
neither."""
AUDIO_HEADER = "Speech before:"
"""Heads the older transcripts, when there are any."""
NO_AUDIO = "(silence)"
HEARD = "(user heard) "
"""Before a transcript of system audio: words the user heard (a call, a video)."""
SAID = "(user said) "
"""Before a transcript of the microphone: words the user said."""
SPEAKERS: dict[AudioSource, str] = {"system": HEARD, "mic": SAID}
"""The label before a transcript, by its source; a transcript of no known source has none."""
ANSWER_HEADER = "Respond with ONLY valid JSON, no markdown:"
TITLE_SEPARATOR = " — "
"""Between the app and the window title in a screen line's ``[...]``."""
NO_TEXT = "(no text)"
CUT_ONE = "[… 1 line cut]"
"""Where one line of an OCR text was left out for want of budget."""
CUT_MANY = "[… {count} lines cut]"
"""Where ``{count}`` lines in a row of an OCR text were left out for want of budget."""
AS_ABOVE = "(same text as above)"
"""The OCR part of an event whose every line a newer event (listed above it) also has."""
SEEN = "(seen: {narrative})"
"""The capture client's narrative, after the OCR of the same event."""
AGE = "[{seconds}s ago] "

INTRO = """You are an AI monitoring a user's screen and audio in real-time.
You produce TWO outputs as JSON."""
"""The prompt's first lines."""
HUD_PLACEHOLDER = "<max 12 words: what the user does now, naming the app, file or page>"
ANSWER_TEMPLATE = f"""{{
  "hud": "{HUD_PLACEHOLDER}",
  "digest": "<3-5 sentences: what the user is doing NOW, what is on screen and what was \
said, with filenames, URLs, errors and UI text from the OCR; what they might need help with; \
last, what they did EARLIER if it differs.>"
}}"""
"""The answer's shape, after :data:`ANSWER_HEADER`; its values are placeholders."""
RULES = """Rules:
- "hud" is for a minimal overlay display.
- "digest" is for an AI assistant to understand the situation NOW and offer help.
- Describe NOW. EARLIER is background, for the digest's last sentence only.
- Write about the user in the third person; never write "I" or "now".
- Do NOT suggest actions in digest — just describe the situation factually."""
"""The prompt's last lines."""
INSTRUCTIONS = (INTRO, ANSWER_HEADER, ANSWER_TEMPLATE, RULES)
"""The prompt's instruction lines: what a model's answer must not repeat back as a hud
(:mod:`actors.agent.core.hud_check`)."""
OPENING = f"{INTRO}\n\n{RULES}"
"""The prompt's opening, the same in every prompt: a model on this machine reads it once
and keeps it (llama.cpp reuses the state of a prompt's first tokens when the next prompt
begins with them), so each call reads only the window and the answer's shape after it."""
LABELS = (
    NOW_HEADER,
    ACTIVE_APP,
    SCREEN_NOW,
    AUDIO_NOW,
    EARLIER_HEADER,
    APP_HISTORY,
    NO_APPS,
    SCREEN_HEADER,
    NO_SCREEN,
    SCREENSHOTS,
    AUDIO_HEADER,
    NO_AUDIO,
)
"""The prompt's section labels: ours too, around the user's data."""


def _age(now_ms: int, at_ms: int) -> str:
    return AGE.format(seconds=max(0, round((now_ms - at_ms) / 1000)))


def screen_line(event: ScreenEvent, text: str) -> str:
    """One screen event as the prompt shows it, without its age, ``text`` standing for its
    OCR (what the screen section kept of it)."""
    where = normalize_app_name(event.app)
    if event.window_title:
        where += TITLE_SEPARATOR + _one_line(event.window_title)[:TITLE_CHARS]
    parts = [f"[{where}]"]
    if event.title:
        parts.append(f"{_one_line(event.title)[:TITLE_CHARS]}:")
    if text:
        parts.append(text)
    if event.narrative:
        narrative = _one_line(event.narrative)[:NARRATIVE_CHARS]
        parts.append(SEEN.format(narrative=narrative) if event.ocr else narrative)
    if not text and not event.narrative:
        parts.append(NO_TEXT)
    return " ".join(parts)


def _screen_lines(ctx: TickWindow, budget: int = SCREEN_BUDGET) -> list[tuple[int, str]]:
    """The screen section's lines, newest first, each with its event's arrival."""
    newest_first = ctx.screen[::-1]
    fitted = fit_screen([e.ocr for e in newest_first], budget)
    return [
        (e.received_at, screen_line(e, _shown(f)))
        for e, f in zip(newest_first, fitted, strict=True)
    ]


def _shown(fitted: Fitted) -> str:
    """What the prompt shows of one OCR text: its kept lines, each cut marked."""
    if not fitted.pieces and fitted.repeated:
        return AS_ABOVE
    return " ".join(piece if isinstance(piece, str) else _cut(piece) for piece in fitted.pieces)


def _cut(cut: Cut) -> str:
    return CUT_ONE if cut.lines == 1 else CUT_MANY.format(count=cut.lines)


def audio_line(chunk: AudioEvent) -> str:
    """One transcript chunk as the prompt shows it, without its age: whose words they are,
    when its mark said so, then its text."""
    speaker = SPEAKERS[chunk.source] if chunk.source is not None else ""
    return speaker + chunk.text[:AUDIO_CHARS]


def _one_line(text: str) -> str:
    return text.replace("\n", " ")


def _labelled(lines: Iterable[tuple[int, str]], now_ms: int) -> str:
    return "\n".join((_age(now_ms, at) if at else "") + line for at, line in lines)


def build_prompt(
    ctx: TickWindow,
    *,
    now_ms: int,
    screen_budget: int = SCREEN_BUDGET,
) -> str:
    """Return the single user message that asks for ``{"hud", "digest"}`` as JSON.

    ``now_ms`` (server time) is what the ``[Ns ago]`` labels count from; ``screen_budget``
    the OCR characters of the screen section (the relay's is :data:`SCREEN_BUDGET`, which
    :func:`fingerprint` assumes).
    """
    screen = _labelled(_screen_lines(ctx, screen_budget), now_ms)
    return prompt_with_screen(ctx, screen, now_ms=now_ms)


def prompt_with_screen(ctx: TickWindow, screen_lines: str, *, now_ms: int) -> str:
    """The prompt of :func:`build_prompt` around a screen section given as it stands (its
    lines, ages included, newest first): a comparison of two ways to fill that section can
    share the rest. The first line is the newest screen, under :data:`NOW_HEADER`."""
    newest_screen, _, older_screens = screen_lines.partition("\n")
    app = normalize_app_name(ctx.current_app)
    shown = bool(ctx.screen) and normalize_app_name(ctx.screen[-1].app) == app
    active = "" if shown else f"{ACTIVE_APP} {app}\n"
    audio = [(a.ts, audio_line(a)) for a in reversed(ctx.audio)]
    app_switches = APP_SEPARATOR.join(normalize_app_name(a.app) for a in ctx.app_history)
    earlier = [f"{APP_HISTORY} {app_switches or NO_APPS}"]
    if older_screens:
        earlier += [SCREEN_HEADER, older_screens]
    if len(audio) > 1:
        earlier += [AUDIO_HEADER, _labelled(audio[1:], now_ms)]
    return f"""{OPENING}

{NOW_HEADER}
{active}{SCREEN_NOW}
{newest_screen or NO_SCREEN}
{AUDIO_NOW}
{_labelled(audio[:1], now_ms) or NO_AUDIO}

{EARLIER_HEADER}
{chr(10).join(earlier)}

{ANSWER_HEADER}
{ANSWER_TEMPLATE}"""


def fingerprint(ctx: TickWindow) -> str:
    """A digest of what the prompt would tell the LLM about the window, timing aside.

    The ``[Ns ago]`` labels and the counts are left out (they change
    with every tick), and a line repeated right after itself counts once: a window whose
    fingerprint equals the last call's holds nothing the LLM has not already seen.
    """
    parts = [
        normalize_app_name(ctx.current_app),
        APP_SEPARATOR.join(normalize_app_name(a.app) for a in ctx.app_history),
        "\x1e".join(_collapsed(line for _, line in reversed(_screen_lines(ctx)))),
        "\x1e".join(_collapsed(audio_line(a) for a in ctx.audio)),
    ]
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=16).hexdigest()


def _collapsed(lines: Iterable[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if not out or out[-1] != line:
            out.append(line)
    return out
