"""The stand-in of ``python run.py --demo``: a summary read from the prompt alone, no LLM."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from actors.agent.core.prompt import build_prompt
from actors.core.window import AudioEvent, ScreenEvent, TickWindow
from tests.support.prompt_corpus import T0_MS, session_prompt
from transport.agent.stand_in import (
    STAND_IN_MARKER,
    HeardLine,
    PromptView,
    SeenLine,
    read_prompt,
    summarise,
)


def test_summarise_reads_the_prompt_of_a_real_window() -> None:
    prompt = session_prompt(44.0)
    view = read_prompt(prompt)
    assert view.active_app == "Terminal"
    assert view.app_history == ("VS Code", "Terminal")
    assert [(line.app, line.window) for line in view.screen][:2] == [
        ("Terminal", "zsh — sinain-relay — 120×40"),
        ("Terminal", "zsh — sinain-relay — 120×40"),
    ]
    assert "AssertionError: assert 'idle' == 'watching'" in view.screen[0].text
    assert view.screen[0].age_s is not None
    assert "(seen:" not in view.screen[0].text
    assert view.heard[0].text == "okay, the paused video test fails, as expected"

    hud, digest = summarise(prompt)
    assert hud == (
        "Terminal: FAILED tests/test_idle.py::test_paused_video_is_not_idle - AssertionError"
    )
    assert len(hud.split()) <= 15
    assert digest.startswith(f"{STAND_IN_MARKER} The user is in Terminal, on ")
    assert "App history: VS Code → Terminal." in digest
    assert "test_paused_video_is_not_idle" in digest
    # (which of the two identical transcripts the window keeps is the window's business)
    heard = 'ago): "okay, the paused video test fails, as expected".'
    assert re.search(r"Last heard \(\d+s " + re.escape(heard), digest)


PROMPT = """You are an AI monitoring a user's screen and audio in real-time.

NOW (what the hud and the digest describe):
Active app: VS Code
Screen now (OCR text):
[2s ago] [VS Code — relay.py — sinain-relay] def tick(self): (seen: the user types)
Speech now:
[5s ago] so the tick runs after the debounce

EARLIER (background, newest first):
App history: Chrome → VS Code
Screens before:
[12s ago] [Chrome — MDN] Page Visibility API
[15s ago] [Chrome] (no text)
Speech before:
[40s ago] first remark

Respond with ONLY valid JSON, no markdown:
Screens before:
[1s ago] [Not — this] ignored
"""


def test_read_prompt_takes_each_section_apart() -> None:
    assert read_prompt(PROMPT) == PromptView(
        active_app="VS Code",
        app_history=("Chrome", "VS Code"),
        screen=(
            SeenLine(2, "VS Code", "relay.py — sinain-relay", "def tick(self):"),
            SeenLine(12, "Chrome", "MDN", "Page Visibility API"),
            SeenLine(15, "Chrome", "", ""),
        ),
        heard=(
            HeardLine(5, "so the tick runs after the debounce"),
            HeardLine(40, "first remark"),
        ),
    )
    hud, digest = summarise(PROMPT)
    assert hud == "Editing relay.py in VS Code"
    assert digest == (
        '(stand-in, no LLM) The user is in VS Code, on "relay.py — sinain-relay". '
        "App history: Chrome → VS Code. "
        'On screen, newest first: in VS Code "def tick(self):"; in Chrome "Page Visibility API". '
        'Last heard (5s ago): "so the tick runs after the debounce". '
        'Before that, the user was in Chrome, on "MDN".'
    )


def test_summarise_says_where_the_user_was_before_when_they_moved_on() -> None:
    _, digest = summarise(session_prompt(51.0))
    assert digest.endswith(
        'Before that, the user was in Terminal, on "zsh — sinain-relay — 120×40".'
    )
    assert digest.count(STAND_IN_MARKER) == 1
    _, first = summarise(session_prompt(0.4))  # one place so far: nothing before it
    assert "Before that" not in first


@pytest.mark.parametrize(
    ("until_s", "hud"),
    [
        (0.4, "Editing idle.py in VS Code"),
        (29.0, "Running python -m pytest tests/test_idle.py -q in Terminal"),
        (91.0, "Chatting in Slack: sinain-dev (Channel)"),
        (166.0, "Switched to Terminal"),
    ],
)
def test_summarise_names_what_the_newest_screen_shows(until_s: float, hud: str) -> None:
    assert summarise(session_prompt(until_s))[0] == hud


def test_summarise_of_an_empty_window_is_idle_and_of_sound_alone_is_talk() -> None:
    empty = TickWindow("unknown", (), (), (), 0, 0, 120_000)
    hud, digest = summarise(build_prompt(empty, now_ms=T0_MS))
    assert hud == "Idle"
    assert digest == f"{STAND_IN_MARKER} The user is in unknown. Nothing on screen in the window."
    heard = replace(empty, audio=(AudioEvent(T0_MS - 2_000, "so what about the overlay"),))
    hud, digest = summarise(build_prompt(replace(heard, audio_count=1), now_ms=T0_MS))
    assert hud == "Talking: so what about the overlay"
    assert digest.endswith('Last heard (2s ago): "so what about the overlay".')
    assert summarise("hi")[0] == "Idle"


def test_summarise_quotes_a_transcript_without_the_label_saying_whose_words_they_are() -> None:
    said = AudioEvent(T0_MS - 2_000, "so what about the overlay", source="mic")
    window = TickWindow("unknown", (), (said,), (), 1, 0, 120_000)
    hud, digest = summarise(build_prompt(window, now_ms=T0_MS))
    assert hud == "Talking: so what about the overlay"
    assert digest.endswith('Last heard (2s ago): "so what about the overlay".')


def test_read_prompt_leaves_the_budget_marks_out_of_the_screen_text() -> None:
    newest = ScreenEvent(
        ts=T0_MS - 1_000,
        type="text",
        app="Terminal",
        ocr="$ make\n" + "".join(f"compiling unit {n}\n" for n in range(200)) + "error: ld failed",
        ssim=None,
        received_at=T0_MS - 1_000,
    )
    older = replace(newest, ocr="compiling unit 0", ts=T0_MS - 9_000, received_at=T0_MS - 9_000)
    window = TickWindow("Terminal", (), (), (older, newest), 0, 2, 120_000)
    prompt = build_prompt(window, now_ms=T0_MS)
    assert " lines cut]" in prompt
    assert "(same text as above)" in prompt
    view = read_prompt(prompt)
    newest_text, older_text = (line.text for line in view.screen)
    assert newest_text.startswith("$ make compiling unit 0 compiling unit 1 ")
    assert newest_text.endswith(" … error: ld failed")
    assert "[" not in newest_text
    assert older_text == ""
    hud, digest = summarise(prompt)
    assert hud == "Terminal: error: ld failed"
    assert "lines cut" not in digest
    assert "as above" not in digest
