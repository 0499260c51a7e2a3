"""The LLM prompt: the newest moment first under NOW, what came before under EARLIER, ages,
the previous digest's first sentence and one budget for the screen events."""

from __future__ import annotations

import re
from dataclasses import replace

from actors.agent.core.prompt import (
    ANSWER_HEADER,
    AUDIO_HEADER,
    AUDIO_NOW,
    LABELS,
    SCREEN_BUDGET,
    SCREEN_HEADER,
    SCREEN_NOW,
    build_prompt,
    fingerprint,
)
from actors.core.records import FeedRecord
from actors.core.shapes import AppSwitch
from actors.core.window import AudioEvent, ScreenEvent, TickWindow, build_context_window

NOW = 1_769_901_200_000


def ctx(
    *,
    current_app: str = "unknown",
    app_history: tuple[AppSwitch, ...] = (),
    audio: tuple[AudioEvent, ...] = (),
    screen: tuple[ScreenEvent, ...] = (),
) -> TickWindow:
    return TickWindow(
        current_app=current_app,
        app_history=app_history,
        audio=audio,
        screen=screen,
        audio_count=len(audio),
        screen_count=len(screen),
        window_ms=120_000,
    )


def screen(
    app: str, ocr: str, type_: str = "text", *, age_s: float = 0, **extra: str
) -> ScreenEvent:
    at = NOW - round(age_s * 1000)
    return ScreenEvent(ts=at, type=type_, app=app, ocr=ocr, ssim=None, received_at=at, **extra)


def heard(text: str, age_s: float = 0) -> AudioEvent:
    return AudioEvent(NOW - round(age_s * 1000), text)


def prompt_of(window: TickWindow) -> str:
    return build_prompt(window, now_ms=NOW)


def section(prompt: str, header: str) -> list[str]:
    """The lines after ``header`` up to the next blank line or heading; none without it."""
    lines = prompt.split("\n")
    if header not in lines:
        return []
    start = lines.index(header) + 1
    end = start
    while (
        end < len(lines) and lines[end] and not (lines[end] in LABELS and lines[end].endswith(":"))
    ):
        end += 1
    return lines[start:end]


def screens(prompt: str) -> list[str]:
    """The screen lines, newest first: now's, then the earlier ones."""
    return section(prompt, SCREEN_NOW) + section(prompt, SCREEN_HEADER)


def speech(prompt: str) -> list[str]:
    """The transcript lines, newest first: now's, then the earlier ones."""
    return section(prompt, AUDIO_NOW) + section(prompt, AUDIO_HEADER)


EXPECTED_EMPTY_PROMPT = """You are an AI monitoring a user's screen and audio in real-time.
You produce TWO outputs as JSON.

Rules:
- "hud" is for a minimal overlay display.
- "digest" is for an AI assistant to understand the situation NOW and offer help.
- Describe NOW. EARLIER is background, for the digest's last sentence only.
- Write about the user in the third person; never write "I" or "now".
- Do NOT suggest actions in digest — just describe the situation factually.

NOW (what the hud and the digest describe):
Active app: unknown
Screen now (OCR text):
(no screen data)
Speech now:
(silence)

EARLIER (background, newest first):
App history: (none)

Respond with ONLY valid JSON, no markdown:
{
  "hud": "<max 12 words: what the user does now, naming the app, file or page>",
  "digest": "<3-5 sentences: what the user is doing NOW, what is on screen and what was said, with filenames, URLs, errors and UI text from the OCR; what they might need help with; last, what they did EARLIER if it differs.>"
}"""  # noqa: E501


def test_empty_window_prompt_matches_the_template_exactly():
    assert prompt_of(ctx()) == EXPECTED_EMPTY_PROMPT


def test_empty_window_uses_placeholders():
    prompt = prompt_of(ctx())
    assert "\nApp history: (none)\n" in prompt
    assert screens(prompt) == ["(no screen data)"]
    assert speech(prompt) == ["(silence)"]


def test_prompt_asks_for_json_with_hud_and_digest():
    prompt = prompt_of(ctx())
    assert "Respond with ONLY valid JSON, no markdown:" in prompt
    assert '"hud": "<max 12 words' in prompt
    assert '"digest": "<3-5 sentences' in prompt


def test_the_active_app_is_named_apart_when_the_newest_screen_line_does_not_name_it():
    shown = prompt_of(ctx(current_app="code", screen=(screen("code", "main.py"),)))
    assert "Active app:" not in shown
    assert "Screen now (OCR text):\n[0s ago] [VS Code] main.py" in shown
    other = prompt_of(ctx(current_app="Slack", screen=(screen("code", "main.py"),)))
    assert "\nActive app: Slack\nScreen now (OCR text):\n[0s ago] [VS Code] main.py" in other


def test_active_app_is_normalised():
    prompt = prompt_of(ctx(current_app="idea"))
    assert "\nActive app: IntelliJ IDEA\n" in prompt


def test_active_app_unknown_to_the_table_passes_through():
    prompt = prompt_of(ctx(current_app="Obsidian"))
    assert "\nActive app: Obsidian\n" in prompt


def test_app_history_is_joined_with_arrows_and_normalised():
    history = (AppSwitch("idea", 1), AppSwitch("Google Chrome", 2), AppSwitch("Slack", 3))
    prompt = prompt_of(ctx(app_history=history))
    assert "\nApp history: IntelliJ IDEA → Chrome → Slack\n" in prompt


def test_single_app_history_has_no_arrow():
    prompt = prompt_of(ctx(app_history=(AppSwitch("code", 1),)))
    assert "\nApp history: VS Code\n" in prompt


def test_screen_lines_are_newest_first_with_their_age_and_normalised_app():
    events = (screen("iterm2", "ls -la", age_s=42.4), screen("code", "main.py", age_s=3))
    prompt = prompt_of(ctx(screen=events))
    assert screens(prompt) == [
        "[3s ago] [VS Code] main.py",
        "[42s ago] [iTerm] ls -la",
    ]


def test_screen_ocr_lines_are_joined_single_spaced():
    prompt = prompt_of(ctx(screen=(screen("code", "line one\n    line two\n\nline three"),)))
    assert screens(prompt) == ["[0s ago] [VS Code] line one line two line three"]


def test_an_ocr_text_longer_than_the_spec_cut_is_shown_whole_within_the_budget():
    ocr = "\n".join(f"line {n:02d} of the traceback" for n in range(12)) + "\nKeyError: 'user_id'"
    assert len(ocr) > 300
    (line,) = screens(prompt_of(ctx(screen=(screen("iterm2", ocr),))))
    assert line.endswith("line 11 of the traceback KeyError: 'user_id'")
    assert "cut]" not in line


def test_the_screen_budget_is_spent_newest_first_and_the_cut_is_marked():
    newest = "\n".join(f"newest {n:03d} " + "n" * 40 for n in range(SCREEN_BUDGET // 50))
    older = "\n".join(f"older {n}" for n in range(40))
    lines = screens(
        prompt_of(ctx(screen=(screen("code", older, age_s=9), screen("code", newest, age_s=1))))
    )
    assert lines[0].startswith("[1s ago] [VS Code] newest 000 ")
    assert "newest 001" in lines[0]
    assert lines[1].startswith("[9s ago] [VS Code] ")
    assert lines[1].endswith(" lines cut]")
    assert len(lines[0]) + len(lines[1]) < SCREEN_BUDGET + 100


def test_cut_marks_say_how_many_lines_were_left_out():
    one = "\n".join(["x" * 99] * (SCREEN_BUDGET // 100)) + "\n" + "y" * 99
    many = "\n".join("z" * 300 for _ in range(SCREEN_BUDGET // 100))
    (line,) = screens(prompt_of(ctx(screen=(screen("code", one),))))
    assert line.endswith("x" * 99 + " [… 1 line cut]")
    (line,) = screens(prompt_of(ctx(screen=(screen("code", many),))))
    assert re.search(r" \[… \d+ lines cut\]$", line)


def test_an_error_past_the_budget_is_kept_whole():
    ocr = "\n".join(f"collecting item {n}" for n in range(SCREEN_BUDGET // 10)) + (
        "\njson.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"
    )
    (line,) = screens(prompt_of(ctx(screen=(screen("iterm2", ocr),))))
    assert line.endswith(
        " lines cut] json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"
    )


def test_lines_repeated_in_an_older_event_are_shown_once_in_the_newest():
    chrome = "Bookmarks  Gmail  GitHub\n←  →  C  docs.python.org"
    events = (
        screen("Google Chrome", f"{chrome}\nasyncio.wait_for", age_s=20),
        screen("Google Chrome", f"{chrome}\nasyncio.timeout", age_s=10),
        screen("Google Chrome", chrome, age_s=2),
    )
    assert screens(prompt_of(ctx(screen=events))) == [
        "[2s ago] [Chrome] Bookmarks Gmail GitHub ← → C docs.python.org",
        "[10s ago] [Chrome] asyncio.timeout",
        "[20s ago] [Chrome] asyncio.wait_for",
    ]


def test_an_event_whose_every_line_a_newer_one_shows_says_so():
    events = (
        screen("code", "def tick():\n    pass", age_s=5),
        screen("code", "def tick():\n  pass"),
    )
    assert screens(prompt_of(ctx(screen=events))) == [
        "[0s ago] [VS Code] def tick(): pass",
        "[5s ago] [VS Code] (same text as above)",
    ]


def test_screen_event_without_ocr_shows_no_text():
    prompt = prompt_of(ctx(screen=(screen("finder", "", type_="context"),)))
    assert screens(prompt) == ["[0s ago] [Finder] (no text)"]


def test_the_audio_section_says_what_the_user_heard_and_what_they_said():
    posted = [
        (5, "[🔊] where is the config file?"),
        (3, "[🎙] I think it is in the home folder"),
        (1, "a transcript of no known source"),
    ]
    feed = [
        FeedRecord(id=n, text=text, priority="normal", ts=NOW - age * 1000, source="audio")
        for n, (age, text) in enumerate(posted, start=1)
    ]
    window = build_context_window(feed, [], now_ms=NOW, max_age_ms=120_000)
    assert speech(prompt_of(window)) == [
        "[1s ago] a transcript of no known source",
        "[3s ago] (user said) I think it is in the home folder",
        "[5s ago] (user heard) where is the config file?",
    ]


def test_whose_words_a_transcript_holds_is_part_of_the_fingerprint():
    said = ctx(audio=(AudioEvent(NOW, "ship it on friday", source="mic"),))
    heard_it = ctx(audio=(AudioEvent(NOW, "ship it on friday", source="system"),))
    assert fingerprint(said) != fingerprint(heard_it)


def test_audio_lines_are_cut_to_300_characters_newest_first_with_their_age():
    audio = (heard("first", age_s=61), heard("b" * 300 + "OVERFLOW", age_s=2))
    prompt = prompt_of(ctx(audio=audio))
    assert speech(prompt) == ["[2s ago] " + "b" * 300, "[61s ago] first"]


def test_multibyte_text_is_kept_in_the_prompt():
    prompt = prompt_of(
        ctx(audio=(heard("Привет 👋 日本語"),), screen=(screen("telegram", "Привет"),))
    )
    assert speech(prompt) == ["[0s ago] Привет 👋 日本語"]
    assert screens(prompt) == ["[0s ago] [Telegram] Привет"]


def test_populated_prompt_drops_every_placeholder():
    prompt = prompt_of(
        ctx(
            current_app="code",
            app_history=(AppSwitch("code", 1),),
            audio=(heard("hello"),),
            screen=(screen("code", "def main():"),),
        )
    )
    assert "(none)" not in prompt
    assert "(no screen data)" not in prompt
    assert "(silence)" not in prompt


def test_window_title_observation_title_and_narrative_are_shown():
    event = screen(
        "code",
        "def main():",
        window_title="relay.py — sinain-relay",
        title="Editing the relay",
        narrative="A Python file with a failing assertion",
    )
    assert screens(prompt_of(ctx(screen=(event,)))) == [
        "[0s ago] [VS Code — relay.py — sinain-relay] Editing the relay: def main(): "
        "(seen: A Python file with a failing assertion)"
    ]


def test_an_event_without_ocr_shows_its_narrative_instead():
    event = screen("figma", "", type_="visual", narrative="A dashboard mock-up")
    assert screens(prompt_of(ctx(screen=(event,)))) == ["[0s ago] [figma] A dashboard mock-up"]


def test_events_received_in_the_future_are_zero_seconds_old():
    assert screens(prompt_of(ctx(screen=(screen("code", "x", age_s=-5),)))) == [
        "[0s ago] [VS Code] x"
    ]


def test_the_newest_screen_and_speech_are_now_and_the_older_ones_earlier_newest_first():
    window = ctx(
        current_app="code",
        app_history=(AppSwitch("iterm2", 1), AppSwitch("code", 2)),
        screen=(screen("iterm2", "ls -la", age_s=42), screen("code", "main.py", age_s=3)),
        audio=(heard("first", age_s=61), heard("second", age_s=20), heard("third", age_s=5)),
    )
    prompt = prompt_of(window)
    now, earlier = prompt.split("\n\nEARLIER (background, newest first):\n")
    assert now.endswith(
        "\n\nNOW (what the hud and the digest describe):\n"  # the screen line names the app
        "Screen now (OCR text):\n[3s ago] [VS Code] main.py\n"
        "Speech now:\n[5s ago] third"
    )
    assert earlier.startswith(
        "App history: iTerm → VS Code\n"
        "Screens before:\n[42s ago] [iTerm] ls -la\n"
        "Speech before:\n[20s ago] second\n[61s ago] first\n\n" + ANSWER_HEADER
    )


def test_nothing_earlier_leaves_out_the_earlier_screens_and_speech():
    prompt = prompt_of(ctx(screen=(screen("code", "main.py"),), audio=(heard("hello"),)))
    assert "Screens before:" not in prompt
    assert "Speech before:" not in prompt


def busy() -> TickWindow:
    return ctx(
        current_app="code",
        app_history=(AppSwitch("chrome", 1), AppSwitch("code", 2)),
        audio=(heard("we should fix the idle check", age_s=4),),
        screen=(screen("code", "def tick():", age_s=2, window_title="ticker.py"),),
    )


def shifted(window: TickWindow, seconds: float) -> TickWindow:
    ms = round(seconds * 1000)
    return replace(
        window,
        audio=tuple(replace(a, ts=a.ts - ms) for a in window.audio),
        screen=tuple(replace(s, received_at=s.received_at - ms) for s in window.screen),
    )


def test_the_fingerprint_ignores_ages_and_counts():
    window = busy()
    later = replace(shifted(window, 37), audio_count=9, screen_count=12, newest_ms=0)
    assert fingerprint(later) == fingerprint(window)


def test_the_fingerprint_changes_with_what_the_llm_would_be_told():
    window = busy()
    base = fingerprint(window)
    changes = [
        replace(window, current_app="iterm2"),
        replace(window, app_history=window.app_history[1:]),
        replace(window, audio=(heard("something else"),)),
        replace(window, screen=(screen("code", "def tick(self):", window_title="ticker.py"),)),
        replace(window, screen=(screen("code", "def tick():", window_title="clock.py"),)),
    ]
    assert len({fingerprint(w) for w in changes} | {base}) == len(changes) + 1


def test_the_fingerprint_counts_a_line_repeated_right_after_itself_once():
    switch = screen("finder", "", type_="context")
    once = ctx(screen=(switch,))
    twice = ctx(screen=(switch, replace(switch, received_at=NOW - 1)))
    assert fingerprint(twice) == fingerprint(once)


def test_ocr_beyond_what_the_prompt_shows_does_not_change_the_fingerprint():
    head = "\n".join("x" * 99 for _ in range(SCREEN_BUDGET // 100 + 1))
    assert fingerprint(ctx(screen=(screen("code", head + "\ntail one"),))) == fingerprint(
        ctx(screen=(screen("code", head + "\ntail two"),))
    )


def test_the_fingerprint_sees_a_tail_the_spec_cut_would_have_hidden():
    head = "x" * 200
    assert fingerprint(ctx(screen=(screen("code", head + "\ntail one"),))) != fingerprint(
        ctx(screen=(screen("code", head + "\ntail two"),))
    )


def test_the_fingerprint_ignores_an_older_repeat_of_a_newer_line():
    newest = screen("chrome", "Bookmarks Gmail\nnew page", age_s=1)
    assert fingerprint(
        ctx(screen=(screen("chrome", "Bookmarks Gmail\nold page", age_s=9), newest))
    ) == fingerprint(ctx(screen=(screen("chrome", "old page", age_s=9), newest)))
