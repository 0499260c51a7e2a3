"""Whether a window changed meaningfully since the last call: flicker and chrome are not news."""

from __future__ import annotations

import pytest

from actors.agent.core.change import (
    SPEECH_WORDS,
    Change,
    Gist,
    gist,
    judge,
    line_key,
    settling_until,
)
from actors.core.records import FeedRecord, SenseRecord
from actors.core.window import TickWindow, build_context_window

NOW = 1_769_901_200_000

CODE = """\
File  Edit  Selection  View  Go  Run  Terminal  Help
EXPLORER    idle.py    test_idle.py
12  def classify(last_input_ms: int, now_ms: int) -> str:
13      if now_ms - last_input_ms > IDLE_AFTER_MS:
14          return "idle"
15      return "active"
Ln 14, Col 9   Spaces: 4   UTF-8   Python   10:41"""


class Session:
    """Screen events and transcripts, one a second, and windows of them."""

    def __init__(self) -> None:
        self.feed: list[FeedRecord] = []
        self.sense: list[SenseRecord] = []
        self.at = NOW - 100_000

    def show(self, ocr: str, app: str = "Code", title: str = "idle.py", kind: str = "text") -> None:
        self.at += 1_000
        payload = {
            "type": kind,
            "ts": self.at,
            "ocr": ocr,
            "meta": {"app": app, "windowTitle": title},
        }
        n = len(self.sense) + 1
        self.sense.append(
            SenseRecord(
                id=n,
                received_at=self.at,
                type=kind,
                ts=self.at,
                ocr=ocr,
                app=app,
                ssim=0.9,
                payload=payload,
            )
        )

    def say(self, text: str, source: str | None = "audio") -> None:
        self.at += 1_000
        n = len(self.feed) + 1
        self.feed.append(FeedRecord(id=n, text=text, priority="normal", ts=self.at, source=source))

    def window(self) -> TickWindow:
        return build_context_window(self.feed, self.sense, now_ms=self.at + 500, max_age_ms=120_000)

    def called(self) -> Gist:
        """The gist of the window as it is now: what the last call saw."""
        return gist(self.window())

    def change(self, since: Gist | None) -> Change:
        window = self.window()
        return judge(since, window, gist(window))


@pytest.fixture
def session() -> Session:
    s = Session()
    s.show(CODE)
    return s


def test_the_first_window_is_always_news(session: Session) -> None:
    assert session.change(None) == Change("first", strong=True)


@pytest.mark.parametrize(
    "flicker",
    [
        CODE.replace("10:41", "10:42"),  # the clock in the status bar
        CODE.replace("Ln 14, Col 9", "Ln 15, Col 1"),  # the cursor moved
        CODE + " |",  # a blinking cursor
        CODE.replace("12  def", "13  def"),  # the gutter's line numbers
        CODE + "\n⠋",  # a spinner
        CODE,  # the same frame again
    ],
)
def test_flicker_is_nothing(session: Session, flicker: str) -> None:
    before = session.called()
    session.show(flicker)
    assert session.change(before).reason == "nothing"
    assert not session.change(before).strong


def test_a_scroll_by_a_line_is_minor_and_a_new_screen_is_news(session: Session) -> None:
    before = session.called()
    session.show(CODE + "\n16  def busy(now_ms: int) -> bool:")
    assert session.change(before) == Change("minor", strong=False, detail="1 new lines, 0 words")
    session.show(
        CODE
        + "\n16  def busy(now_ms: int) -> bool:\n17      media = current_media()"
        + "\n18      return media is MediaState.PLAYING\n19  # a comment on playing media"
    )
    change = session.change(before)
    assert (change.reason, change.strong) == ("screen", True)


def test_many_new_lines_are_news_on_a_big_screen_whatever_their_share(session: Session) -> None:
    big = "\n".join(f"unchanging line {chr(97 + n % 26)} {chr(97 + n // 26)}" for n in range(200))
    session.show(big)
    before = session.called()
    session.show(big + "\n" + "\n".join(f"brand new words {chr(97 + n)}" for n in range(15)))
    assert session.change(before).reason == "screen"


def test_chrome_seen_at_the_last_call_is_not_new(session: Session) -> None:
    before = session.called()
    session.show(
        "File  Edit  Selection  View  Go  Run  Terminal  Help\nEXPLORER    idle.py    test_idle.py"
    )
    assert session.change(before).reason == "nothing"


def test_another_app_or_window_is_news(session: Session) -> None:
    before = session.called()
    session.show("Search results", app="Chrome", title="idle detection - Google Search")
    assert session.change(before) == Change("app", strong=True, detail="Chrome")
    session.show(CODE)
    assert not session.change(before).strong  # back where the last call saw it
    session.show(CODE, title="notes.md")
    assert session.change(before) == Change("window", strong=True, detail="notes md")


@pytest.mark.parametrize(
    "error",
    [
        "Traceback (most recent call last):",
        "FAILED tests/test_idle.py::test_classify - AssertionError",
        "src/main.rs:12:5: error: mismatched types",
        "error[E0308]: mismatched types",
        "TypeError: Cannot read properties of undefined (reading 'map')",
        "panic: runtime error: index out of range",
        "fatal: not a git repository",
        "npm ERR! code ELIFECYCLE",
        'Exception in thread "main" java.lang.NullPointerException',
    ],
)
def test_a_new_error_line_is_news(session: Session, error: str) -> None:
    before = session.called()
    session.show(CODE + "\n" + error)
    change = session.change(before)
    assert (change.reason, change.strong) == ("error", True)
    assert change.detail == error[:80]


@pytest.mark.parametrize(
    "near_miss",
    ["error_count = 0", "def handle_errors(self):", "# the error budget", "terror", "failed_jobs"],
)
def test_words_like_error_in_code_are_not_errors(session: Session, near_miss: str) -> None:
    before = session.called()
    session.show(CODE + "\n" + near_miss)
    assert session.change(before).reason == "minor"


def test_an_error_that_goes_away_is_news(session: Session) -> None:
    failing = (
        "$ pytest -q\nFAILED tests/test_idle.py::test_classify - AssertionError\n1 failed in 0.2s"
    )
    session.show(failing, app="Terminal", title="zsh")
    before = session.called()
    session.show(failing.replace("0.2s", "0.3s"), app="Terminal", title="zsh")
    assert session.change(before).reason == "nothing"  # the same error, still there
    session.show("$ pytest -q\n..........\n10 passed in 0.31s", app="Terminal", title="zsh")
    assert session.change(before) == Change("fixed", strong=True, detail="the errors are gone")


def test_a_question_is_news_fillers_are_not_and_content_adds_up(session: Session) -> None:
    before = session.called()
    for filler in ("mm-hm", "yeah, okay", "right right", "uh-huh, sure"):
        session.say(filler)
    assert session.change(before).reason == "nothing"
    session.say("we could ship it on friday")
    assert session.change(before) == Change("minor", strong=False, detail="0 new lines, 3 words")
    session.say("but the idle detection still breaks when media plays in the background")
    change = session.change(before)
    assert (change.reason, change.strong) == ("speech", True)
    assert int(change.detail.split()[0]) >= SPEECH_WORDS
    session.say("can you check the media state?")
    assert session.change(before).reason == "question"


@pytest.mark.parametrize("source", ["audio", None])
@pytest.mark.parametrize("mark", ["[🔊] ", "[🎙] "])
def test_a_transcript_marked_with_its_source_asks_and_speaks_as_any_other(
    session: Session, mark: str, source: str | None
) -> None:
    before = session.called()
    session.say(mark + "where is the config file?", source)
    assert session.change(before) == Change(
        "question", strong=True, detail="where is the config file?"
    )
    before = session.called()
    session.say(mark + "the idle detection still breaks when media plays in the background")
    session.say(mark + "and the overlay keeps showing the stale status line", source)
    change = session.change(before)
    assert (change.reason, change.strong) == ("speech", True)
    assert int(change.detail.split()[0]) >= SPEECH_WORDS


def test_speech_heard_at_the_last_call_is_not_new(session: Session) -> None:
    session.say("so what do we need to fix in the idle detection?")
    before = session.called()
    session.show(CODE)
    assert session.change(before).reason == "nothing"


def test_line_keys_keep_letters_of_every_script() -> None:
    assert line_key("  Привет, мир! 12:30 ") == "привет мир"
    assert line_key("日本語のテキスト 42") == "日本語のテキスト"
    assert line_key("Ünïcödé_ßtraße") == "ünïcödé sstrasse"
    assert line_key("12:30 — 42 %") == ""


def test_a_burst_of_switching_settles_before_it_is_acted_on(session: Session) -> None:
    assert settling_until(session.window(), session.at, 3_000) is None
    session.show("Inbox", app="Mail", title="Inbox")
    assert settling_until(session.window(), session.at, 3_000) is None  # one switch: at once
    session.show("General", app="Slack", title="general")
    last = session.at
    assert settling_until(session.window(), session.at, 3_000) == last + 3_000
    session.show("General", app="Slack", title="general")  # the same screen: still settling
    assert settling_until(session.window(), session.at, 3_000) == last + 3_000
    assert settling_until(session.window(), last + 3_000, 3_000) is None


@pytest.mark.parametrize(
    "outcome",
    ["21 passed in 0.42s", "All checks have passed", "Build succeeded", "Success: no issues found"],
)
def test_a_command_that_passes_is_news_even_without_an_error_before(
    session: Session, outcome: str
) -> None:
    before = session.called()
    session.show(CODE + "\n" + outcome)
    change = session.change(before)
    assert (change.reason, change.strong) == ("passed", True)


@pytest.mark.parametrize("filler_question", ["again?", "anything else?", "right?", "yeah?"])
def test_a_question_of_fillers_is_not_news(session: Session, filler_question: str) -> None:
    before = session.called()
    session.say(filler_question)
    assert not session.change(before).strong


def test_a_switch_without_text_yet_waits_for_its_text(session: Session) -> None:
    session.show("", app="Slack", title="general", kind="context")
    switched = session.at
    assert settling_until(session.window(), session.at, 3_000) == switched + 3_000
    session.show("Priya: can you review my PR?", app="Slack", title="general")
    assert settling_until(session.window(), session.at, 3_000) is None
