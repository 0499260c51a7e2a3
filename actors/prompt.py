"""The LLM prompt (v2 spec, section 4): a pure function of the context window."""

from __future__ import annotations

from actors.window import ContextWindow
from config.app_names import normalize_app_name

OCR_CHARS = 200
"""OCR characters per screen event in the prompt."""
AUDIO_CHARS = 300
"""Transcript characters per audio chunk in the prompt."""


def build_prompt(ctx: ContextWindow) -> str:
    """Return the single user message that asks for ``{"hud", "digest"}`` as JSON."""
    screen_lines = "\n".join(
        f"[{normalize_app_name(e.app)}] "
        + (e.ocr.replace("\n", " ")[:OCR_CHARS] if e.ocr else "(no text)")
        for e in ctx.screen
    )
    audio_lines = "\n".join(e.text[:AUDIO_CHARS] for e in ctx.audio)
    app_switches = " → ".join(normalize_app_name(a.app) for a in ctx.app_history)

    return f"""You are an AI monitoring a user's screen and audio in real-time.
You produce TWO outputs as JSON.

Active app: {normalize_app_name(ctx.current_app)}
App history: {app_switches or "(none)"}

Screen (OCR text, newest last):
{screen_lines or "(no screen data)"}

Audio transcript (newest last):
{audio_lines or "(silence)"}

Respond with ONLY valid JSON, no markdown:
{{
  "hud": "<max 15 words: what user is doing NOW. Terse. No filler.>",
  "digest": "<3-5 sentences: detailed description of user activity, what's on screen, \
what was said, what they might need help with. Include specifics from OCR text. \
Mention errors, questions, or tasks if visible.>"
}}

Rules:
- "hud" is for a minimal overlay display. Example: "Editing hud-relay.mjs in IDEA"
- "digest" is for an AI assistant to understand the full situation and offer help.
- If nothing is happening, hud="Idle" and digest explains what was last seen.
- Include specific filenames, URLs, error messages, UI text from OCR in digest.
- Do NOT suggest actions in digest — just describe the situation factually."""
