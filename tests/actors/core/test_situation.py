"""SITUATION.md's text: rendered from an agent entry and the window its prompt was made from."""

from __future__ import annotations

import re
from dataclasses import replace

from actors.agent.core.entries import AgentRecord
from actors.agent.core.situation import render_situation
from actors.core.bodies import sense_input
from actors.core.records import FeedRecord, SenseRecord
from actors.core.window import TickWindow, build_context_window

NOW = 1_769_901_200_000
"""2026-01-31T23:13:20Z."""

TRACE = """Traceback (most recent call last):
  File "/home/ana/relay/idle.py", line 12, in classify
    return MediaState(state)
ValueError: 'paused' is not a valid MediaState"""


def screen(
    n: int, ocr: str, app: str, ago_s: float, title: str = "", observation: str = ""
) -> SenseRecord:
    body: dict[str, object] = {"type": "text", "ts": 5, "ocr": ocr, "meta": {"app": app}}
    if title:
        body["meta"] = {"app": app, "windowTitle": title}
    if observation:
        body["observation"] = {"narrative": observation}
    return SenseRecord.stored(n, NOW - round(ago_s * 1000), sense_input(body))


def heard(n: int, text: str, ago_s: float) -> FeedRecord:
    return FeedRecord(id=n, text=text, priority="normal", ts=NOW - round(ago_s * 1000))


def a_window(feed: list[FeedRecord], sense: list[SenseRecord]) -> TickWindow:
    return build_context_window(feed, sense, now_ms=NOW - 900, max_age_ms=120_000)


def an_entry(window: TickWindow, digest: str = "The user fixes idle.py.") -> AgentRecord:
    return AgentRecord(
        id=7,
        ts=NOW,
        hud="Fixing idle.py",
        digest=digest,
        current_app=window.current_app,
        app_history=tuple((a.app, a.ts) for a in window.app_history),
        audio_count=window.audio_count,
        screen_count=window.screen_count,
        pushed=True,
        model="google/gemini-2.5-flash-lite",
        latency_ms=812,
        tokens_in=310,
        tokens_out=85,
        parsed_ok=True,
    )


def test_the_file_holds_the_header_digest_app_history_screen_transcript_errors_and_counts() -> None:
    window = a_window(
        [
            heard(1, "[PERIODIC]\n[2s ago, openrouter] the paused video test fails", 30),
            heard(2, "a note, not a transcript", 20),
            heard(3, "[📝] so it is the enum", 5),
        ],
        [
            screen(1, "def classify(state):\n    return MediaState(state)", "code", 40, "idle.py"),
            screen(2, f"$ pytest\n{TRACE}\n$", "iterm2", 12),
        ],
    )

    text = render_situation(an_entry(window), window)

    assert text == (
        "# Situation\n"
        "\n"
        "> Auto-updated by sinain-relay at 2026-01-31T23:13:20.000Z\n"
        "> Tick #7 | Latency: 812ms | Model: google/gemini-2.5-flash-lite\n"
        "\n"
        "## Digest\n"
        "\n"
        "The user fixes idle.py.\n"
        "\n"
        "## Active Application\n"
        "\n"
        "iTerm\n"
        "\n"
        "## App History\n"
        "\n"
        "VS Code -> iTerm\n"
        "\n"
        "## Screen (OCR)\n"
        "\n"
        "- [40s ago] [VS Code — idle.py] def classify(state):     return MediaState(state)\n"
        "- [12s ago] [iTerm] $ pytest Traceback (most recent call last):   File "
        '"/home/ana/relay/idle.py", line 12, in classify     return MediaState(state) '
        "ValueError: 'paused' is not a valid MediaState $\n"
        "\n"
        "## Audio Transcripts\n"
        "\n"
        "- [30s ago] the paused video test fails\n"
        "- [5s ago] so it is the enum\n"
        "\n"
        "## Detected Errors\n"
        "\n"
        "```\n"
        f"{TRACE}\n"
        "```\n"
        "\n"
        "## Metadata\n"
        "\n"
        "- Screen events in window: 2\n"
        "- Audio events in window: 2\n"
        "- Context window: 120s\n"
        "- Parsed OK: true\n"
    )


def test_a_transcript_says_whose_words_it_holds_as_the_prompt_does() -> None:
    window = a_window(
        [
            heard(1, "[🔊] where is the config file?", 8),
            heard(2, "[🎙] in the home folder, I think", 4),
        ],
        [],
    )

    text = render_situation(an_entry(window), window)

    assert (
        "## Audio Transcripts\n\n"
        "- [8s ago] (user heard) where is the config file?\n"
        "- [4s ago] (user said) in the home folder, I think\n"
    ) in text


def test_sections_without_content_are_left_out_and_the_digest_reads_back() -> None:
    window = a_window([], [screen(1, "", "slack", 3, observation="A message from Bo")])
    entry = replace(an_entry(window, digest="Bo asks about the release."), parsed_ok=False)

    text = render_situation(entry, window)

    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert headings == ["Digest", "Active Application", "App History", "Screen (OCR)", "Metadata"]
    assert "- [3s ago] [slack] A message from Bo\n" in text
    assert "- Parsed OK: false\n" in text
    # How Sinain's OpenClaw side reads the digest back from the file.
    read_back = re.search(r"## Digest\n([\s\S]*?)(?=\n##|$)", text)
    assert read_back is not None
    assert read_back.group(1).strip() == "Bo asks about the release."


def test_an_empty_window_names_no_app_and_no_events() -> None:
    window = a_window([], [])

    text = render_situation(an_entry(window), window)

    assert "## Active Application\n\nunknown\n" in text
    assert re.findall(r"^## (.+)$", text, re.MULTILINE) == [
        "Digest",
        "Active Application",
        "Metadata",
    ]


def test_errors_are_the_newest_screens_first_each_once_at_most_three() -> None:
    go = "panic: nil map\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/main.go:9 +0x1d"
    js = "TypeError: x is undefined\n    at render (/app/src/view.js:12:5)"
    java = 'Exception in thread "main" java.lang.Error: x\n\tat a.b.C.d(C.java:1)'
    window = a_window(
        [],
        [
            screen(1, go, "terminal", 50),
            screen(2, TRACE, "terminal", 40),
            screen(3, f"{js}\n--\n{TRACE}", "google chrome", 30),
            screen(4, java, "idea", 20),
        ],
    )

    text = render_situation(an_entry(window), window)

    errors = text.split("## Detected Errors\n\n", 1)[1].split("## Metadata", 1)[0]
    blocks = re.findall(r"```\n(.*?)\n```", errors, re.DOTALL)
    assert blocks == [java, js, TRACE]


def test_a_fence_is_longer_than_any_backtick_run_in_the_trace() -> None:
    trace = "Error: bad ```markdown```\n    at parse (/app/md.js:3:9)"
    window = a_window([], [screen(1, trace, "code", 5)])

    text = render_situation(an_entry(window), window)

    assert f"````\n{trace}\n````\n" in text


def test_long_ocr_and_transcripts_are_bounded_on_one_line() -> None:
    window = a_window(
        [heard(1, "[📝] " + "word " * 400, 2)],
        [screen(1, "line\n" * 400, "code", 2)],
    )

    text = render_situation(an_entry(window), window)

    screen_line = next(line for line in text.split("\n") if line.startswith("- [2s ago] [VS"))
    audio_line = next(line for line in text.split("\n") if line.startswith("- [2s ago] word"))
    assert len(screen_line) < 540
    assert len(audio_line) < 520
    assert screen_line.endswith("…") and audio_line.endswith("…")
