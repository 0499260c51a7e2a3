"""The LLM prompt (v2 spec, section 4)."""

from __future__ import annotations

from actors.prompt import build_prompt
from actors.window import AppSwitch, AudioEvent, ContextWindow, ScreenEvent


def ctx(
    *,
    current_app: str = "unknown",
    app_history: tuple[AppSwitch, ...] = (),
    audio: tuple[AudioEvent, ...] = (),
    screen: tuple[ScreenEvent, ...] = (),
) -> ContextWindow:
    return ContextWindow(
        current_app=current_app,
        app_history=app_history,
        audio=audio,
        screen=screen,
        audio_count=len(audio),
        screen_count=len(screen),
        window_ms=120_000,
    )


def screen(app: str, ocr: str, type_: str = "text") -> ScreenEvent:
    return ScreenEvent(ts=1, type=type_, app=app, ocr=ocr, ssim=None)


def section(prompt: str, header: str) -> list[str]:
    """The lines after ``header`` up to the next blank line."""
    lines = prompt.split("\n")
    start = lines.index(header) + 1
    end = lines.index("", start)
    return lines[start:end]


EXPECTED_EMPTY_PROMPT = """You are an AI monitoring a user's screen and audio in real-time.
You produce TWO outputs as JSON.

Active app: unknown
App history: (none)

Screen (OCR text, newest last):
(no screen data)

Audio transcript (newest last):
(silence)

Respond with ONLY valid JSON, no markdown:
{
  "hud": "<max 15 words: what user is doing NOW. Terse. No filler.>",
  "digest": "<3-5 sentences: detailed description of user activity, what's on screen, what was said, what they might need help with. Include specifics from OCR text. Mention errors, questions, or tasks if visible.>"
}

Rules:
- "hud" is for a minimal overlay display. Example: "Editing hud-relay.mjs in IDEA"
- "digest" is for an AI assistant to understand the full situation and offer help.
- If nothing is happening, hud="Idle" and digest explains what was last seen.
- Include specific filenames, URLs, error messages, UI text from OCR in digest.
- Do NOT suggest actions in digest — just describe the situation factually."""  # noqa: E501


def test_empty_window_prompt_matches_the_spec_template_exactly():
    assert build_prompt(ctx()) == EXPECTED_EMPTY_PROMPT


def test_empty_window_uses_placeholders():
    prompt = build_prompt(ctx())
    assert "App history: (none)\n" in prompt
    assert section(prompt, "Screen (OCR text, newest last):") == ["(no screen data)"]
    assert section(prompt, "Audio transcript (newest last):") == ["(silence)"]


def test_prompt_asks_for_json_with_hud_and_digest():
    prompt = build_prompt(ctx())
    assert "Respond with ONLY valid JSON, no markdown:" in prompt
    assert '"hud": "<max 15 words' in prompt
    assert '"digest": "<3-5 sentences' in prompt


def test_active_app_is_normalised():
    prompt = build_prompt(ctx(current_app="idea"))
    assert "\nActive app: IntelliJ IDEA\n" in prompt


def test_active_app_unknown_to_the_table_passes_through():
    prompt = build_prompt(ctx(current_app="Obsidian"))
    assert "\nActive app: Obsidian\n" in prompt


def test_app_history_is_joined_with_arrows_and_normalised():
    history = (AppSwitch("idea", 1), AppSwitch("Google Chrome", 2), AppSwitch("Slack", 3))
    prompt = build_prompt(ctx(app_history=history))
    assert "\nApp history: IntelliJ IDEA → Chrome → Slack\n" in prompt


def test_single_app_history_has_no_arrow():
    prompt = build_prompt(ctx(app_history=(AppSwitch("code", 1),)))
    assert "\nApp history: VS Code\n" in prompt


def test_screen_lines_are_prefixed_with_normalised_app_newest_last():
    events = (screen("iterm2", "ls -la"), screen("code", "main.py"))
    prompt = build_prompt(ctx(screen=events))
    assert section(prompt, "Screen (OCR text, newest last):") == [
        "[iTerm] ls -la",
        "[VS Code] main.py",
    ]


def test_screen_ocr_newlines_are_flattened():
    prompt = build_prompt(ctx(screen=(screen("code", "line one\nline two\n\nline three"),)))
    assert section(prompt, "Screen (OCR text, newest last):") == [
        "[VS Code] line one line two  line three"
    ]


def test_screen_ocr_is_cut_to_200_characters():
    ocr = "a" * 199 + "bc" + "z" * 300
    prompt = build_prompt(ctx(screen=(screen("code", ocr),)))
    assert section(prompt, "Screen (OCR text, newest last):") == ["[VS Code] " + "a" * 199 + "b"]


def test_screen_ocr_is_cut_after_flattening_newlines():
    ocr = "\n".join(["x" * 99] * 3)  # 99 + 1 + 99 + 1 + 99 characters
    line = section(
        build_prompt(ctx(screen=(screen("code", ocr),))), "Screen (OCR text, newest last):"
    )
    assert line == ["[VS Code] " + "x" * 99 + " " + "x" * 99 + " "]


def test_screen_event_without_ocr_shows_no_text():
    prompt = build_prompt(ctx(screen=(screen("finder", "", type_="context"),)))
    assert section(prompt, "Screen (OCR text, newest last):") == ["[Finder] (no text)"]


def test_audio_lines_are_cut_to_300_characters_newest_last():
    audio = (AudioEvent(1, "first"), AudioEvent(2, "b" * 300 + "OVERFLOW"))
    prompt = build_prompt(ctx(audio=audio))
    assert section(prompt, "Audio transcript (newest last):") == ["first", "b" * 300]


def test_multibyte_text_is_kept_in_the_prompt():
    prompt = build_prompt(
        ctx(audio=(AudioEvent(1, "Привет 👋 日本語"),), screen=(screen("telegram", "Привет"),))
    )
    assert section(prompt, "Audio transcript (newest last):") == ["Привет 👋 日本語"]
    assert section(prompt, "Screen (OCR text, newest last):") == ["[Telegram] Привет"]


def test_populated_prompt_drops_every_placeholder():
    prompt = build_prompt(
        ctx(
            current_app="code",
            app_history=(AppSwitch("code", 1),),
            audio=(AudioEvent(1, "hello"),),
            screen=(screen("code", "def main():"),),
        )
    )
    assert "(none)" not in prompt
    assert "(no screen data)" not in prompt
    assert "(silence)" not in prompt
