"""The hud gate: which lines reach the overlay, which are withheld and why."""

from __future__ import annotations

import pytest

from actors.agent.core.completion import parse_analysis
from actors.agent.core.hud_check import checked_hud, judge, salvage
from actors.agent.core.prompt import HUD_PLACEHOLDER, INTRO, SCREENSHOTS, build_prompt
from actors.core.shapes import NO_OUTPUT
from tests.support.prompt_corpus import case_window, cases, session_prompt, tick_ms
from transport.agent.stand_in import summarise

LEGITIMATE = [
    "Editing idle.py in VS Code",
    "Terminal: FAILED tests/test_idle.py::test_paused - AssertionError",
    "User is reading the screen in Chrome",
    "Reading Slack message from Dana about the deploy",
    "Searching Google for python asyncio timeout",
    "Fixing Map<String, Integer> type error in OrderService.java",
    "Reviewing PR #42: fix idle detection [draft]",
    "Debugging NullPointerException in UserService.java:42",
    "Watching a YouTube video on screen recording",
    "Idle",
    "Chatting in Telegram: «Когда релиз?»",
    "Reading MDN docs on Array.prototype.flatMap()",
    "npm ERR! code ELIFECYCLE in the web build",
    "User asked about the error on screen",
    "Typing a reply to the user in Discord",
    'Slack: Dana asks "I am blocked on the deploy, can you look?"',
    "Reading Immich docs in Safari",
    "Reading [draft] RFC: retry budgets",
    "Editing [slug].tsx in the Next.js app",
    "VS Code: fixing test_idle.py: AssertionError in classify",
    "Terminal: what is holding port 8080?",
    "You have 2 failing tests in test_idle.py",
    "You're in a Zoom call with Dana",
    "Reading 'Active app' docs in Notion",
    "Writing the JSON schema for the orders API",
    "Slack: Dana shared the following code snippet",
    "Build failed 12s ago: missing module 'fastapi'",
    "Reviewing the overlay display settings in System Preferences",
    "Editing the user activity report in Google Docs",
]


@pytest.mark.parametrize("hud", LEGITIMATE)
def test_a_line_a_user_can_read_passes(hud: str) -> None:
    assert judge(hud) is None


@pytest.mark.parametrize(
    ("hud", "reason"),
    [
        # what SmolLM2-135M answered to the relay's prompt
        ("You're a helpful AI in monitoring an app. Your screen is filled wi", "echo"),
        ("The user is monitoring their screen and audio in real-time.", "echo"),
        ("You are an AI monitoring a user's screen and audio in real-time. You produce", "echo"),
        ("I will produce two outputs as JSON: a hud and a digest.", "echo"),
        ("Hello, I'm a chatbot. I can't believe you're here! I've been monitoring", "echo"),
        ("I will describe the screen.", "echo"),
        # a run of the instructions' own words inside a line of other words
        (
            "12-06-2023: Maya hit exactly this bug, let's see what the user is doing now. "
            "Terse. No fil",
            "echo",
        ),
        ("Chrome: what they might need help with on the page", "echo"),
        # template slots a model fills with its own placeholders
        (
            "The latest news is [insert new information about the user's situation]. "
            "Today at [insert d",
            "placeholder",
        ),
        ("Working on [your task here]", "placeholder"),
        ("Editing {filename} in {app}", "fragment"),
        # the model addressed as the prompt addresses it
        ("You are a helpful AI in monitoring the output of a script.\nYour responses", "echo"),
        ("You're an AI assistant for text re-writing. Rewrite the input text again", "echo"),
        ("🌟 I'm here to help you with your project. Please share the details", "echo"),
        # the model answering the prompt as a chat: about its own text, not the user
        ("Your screen is a new one and you're using it to produce JSON.\nHere's how you", "echo"),
        ("You've already covered the key points. Here's a more detailed and polished", "echo"),
        ("The above text contains a lot of information, but it's not really helpful.", "echo"),
        ("You can use the following code to generate a JSON file with your audio", "echo"),
        ("Sure! The user is editing a file.", "echo"),
        ("Hello, I'm a testing AI assistant. This is a test of your patience.", "echo"),
        ("Task definition ready. You can roll it out with a minimal overlay display", "echo"),
        # the prompt's own data section played back
        ("12s ago", "echo"),
        ("20s ago: (Terminal) 120×40,\n(Same as previous digest)", "echo"),
        ("[12s ago]\nActive app: Chrome\nApp history: Chrome — HTMLMediaElement: paused", "echo"),
        ("PyCharm\nApp history: PyCharm\n\nScreen (OCR text, latest):\n[6s ago] [Python", "echo"),
        ("[17s ago] [Terminal — zsh — sinain-relay — 120×40] $ python -m pytest", "echo"),
        # a line that stops where its content should begin
        ("The latest event is:", "fragment"),
        (HUD_PLACEHOLDER, "placeholder"),
        ("<max 15 words>", "placeholder"),
        ("max 12 words: what the user does now, naming the app", "placeholder"),
        ("<describe what the user does>", "placeholder"),
        ('{"hud": "Editing', "fragment"),
        ('", "digest": "}, {"hud": [":", "', "fragment"),
        ("hud: Editing idle.py, digest: The user", "fragment"),
        ('{ "hud": "", "digest": "" }', "fragment"),
        ('["", ":", "x"]', "fragment"),
        ("<|im_end|>", "markup"),
        ("<think>The user is editing", "markup"),
        ("```json", "markup"),
        ("## Summary", "markup"),
        ('<p class="hud">Editing</p>', "markup"),
        ("", "empty"),
        ("   ", "empty"),
        (NO_OUTPUT, "empty"),
        ("...", "empty"),
    ],
)
def test_garbage_is_withheld_with_its_reason(hud: str, reason: str) -> None:
    assert judge(hud) == reason


def test_a_cut_off_json_answer_gives_up_its_hud() -> None:
    content = '{"hud": "Running pytest in Terminal", "digest": "The user ran the tests and'
    analysis = parse_analysis(content)
    assert analysis.parsed_ok is False
    checked = checked_hud(analysis, content)
    assert (checked.analysis.hud, checked.withheld) == ("Running pytest in Terminal", None)
    assert checked.analysis.digest == content  # the digest stays the spec's fallback
    assert salvage("{'hud': 'Editing main.go', 'digest': 'x'") == "Editing main.go"
    assert salvage('{"hud": "\\u00e9dition"}x') == "\u00e9dition"
    assert salvage('{"hud": "Editing') is None  # an unterminated value is not taken


def test_the_prose_fallback_stays_when_it_reads_well() -> None:
    content = "The user is busy. Editing ticker.py in VS Code. User is in VS Code editing it."
    checked = checked_hud(parse_analysis(content), content)
    assert (checked.analysis.hud, checked.withheld) == (content[:80], None)


def test_a_prose_echo_of_our_instructions_is_withheld_but_its_digest_kept() -> None:
    content = f"{INTRO} I will describe the screen."
    checked = checked_hud(parse_analysis(content), content)
    assert (checked.analysis.hud, checked.withheld) == (NO_OUTPUT, "echo")
    assert checked.analysis.digest == content


def test_a_parsed_placeholder_is_withheld() -> None:
    content = '{ "hud": "<max 15 words>", "digest": "<3-5 sentences>" }'
    checked = checked_hud(parse_analysis(content), content)
    assert checked.analysis.parsed_ok is True
    assert (checked.analysis.hud, checked.withheld) == (NO_OUTPUT, "placeholder")


def test_no_stand_in_hud_of_the_corpus_or_the_demo_session_is_withheld() -> None:
    """Legitimate huds made from every window of the prompt corpus and of the shipped
    session: none may be withheld."""
    prompts = [build_prompt(case_window(c), now_ms=tick_ms(c)) for c in cases()]
    prompts += [session_prompt(float(s)) for s in range(5, 300, 5)]
    huds = [summarise(prompt)[0] for prompt in prompts]
    assert len(huds) > 90
    withheld = {hud: judge(hud) for hud in huds if judge(hud) is not None}
    assert withheld == {}


def test_a_hud_playing_back_the_screenshots_line_is_an_echo() -> None:
    assert judge(SCREENSHOTS.format(count=1)) == "echo"
    assert judge("Reviewing a revenue chart in Sheets") is None


def test_a_hud_longer_than_any_overlay_line_is_withheld_unread() -> None:
    # A model that wrote its whole answer into the hud: no line an overlay shows, and reading
    # a megabyte of it would hold the LLM caller for a second.
    long_hud = "The user edits idle.py in VS Code. " * 30_000
    content = '{"hud": "' + long_hud + '", "digest": "The user edits idle.py."}'

    checked = checked_hud(parse_analysis(content), content)

    assert checked.withheld == "long"
    assert checked.analysis.hud == NO_OUTPUT
    assert checked.analysis.digest == "The user edits idle.py."
    assert judge("Editing idle.py in VS Code " + "x" * 200) is None  # long, but a line
