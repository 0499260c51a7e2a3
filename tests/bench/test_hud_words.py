"""The judges of a model's words (tests/support/hud_words.py), a rule a test."""

from __future__ import annotations

from actors.core.shapes import NO_OUTPUT
from actors.core.window import AudioEvent, ScreenEvent, TickWindow
from tests.support.hud_words import (
    MAX_WORDS,
    Judged,
    Now,
    content_words,
    copied,
    grounded,
    now_of,
    readable,
)


def window(
    *screens: tuple[str, str], audio: tuple[str, ...] = (), app: str = "", title: str = ""
) -> TickWindow:
    """A window of screen events ``(app, ocr)``, oldest first, and transcripts, oldest first."""
    screen = tuple(
        ScreenEvent(ts=n, type="text", app=a, ocr=ocr, ssim=None, window_title=title)
        for n, (a, ocr) in enumerate(screens)
    )
    chunks = tuple(AudioEvent(ts=n, text=text) for n, text in enumerate(audio))
    current = app or (screens[-1][0] if screens else "")
    return TickWindow(current, (), chunks, screen, len(chunks), len(screen), 120_000)


def now(*words: str, app: str = "") -> Now:
    return Now(frozenset(content_words(app)), frozenset(words))


# -- content words --------------------------------------------------------------------------------


def test_a_content_word_has_four_letters_or_more() -> None:
    assert content_words("npm ran a git fix; deploy failed") == {"deploy", "failed"}


def test_stop_words_and_words_any_hud_has_are_no_content_words() -> None:
    assert content_words("The user is currently working on something with this screen") == set()


def test_content_words_fold_case_split_identifiers_and_drop_a_plural_s() -> None:
    words = content_words("TestRetryBackoff hud_relay2mjs TESTS")
    assert words == {"test", "retry", "backoff", "relay"}


def test_content_words_of_other_scripts_count() -> None:
    assert content_words("Ошибка сборки") == {"ошибка", "сборки"}


# -- now ------------------------------------------------------------------------------------------


def test_now_is_the_newest_screen_and_the_newest_transcript_not_the_older_ones() -> None:
    found = now_of(
        window(
            ("Slack", "lunch plans"),
            ("IntelliJ IDEA", "RetryPolicy backoff"),
            audio=("quarterly budget", "deploy tonight"),
        )
    )
    assert found.words == {"retry", "policy", "backoff", "deploy", "tonight"}
    assert grounded("Coding in IntelliJ", found)


def test_now_has_the_newest_screens_window_title() -> None:
    found = now_of(window(("Google Chrome", "sign in"), title="Pricing - Stripe"))
    assert {"pricing", "stripe", "sign"} <= found.words


def test_now_of_an_empty_window_is_empty() -> None:
    assert now_of(window()) == Now(frozenset(), frozenset())


# -- grounded -------------------------------------------------------------------------------------


def test_a_text_naming_nows_app_is_grounded() -> None:
    assert grounded("Chatting in slack", now("budget", app="Slack"))


def test_a_text_with_a_word_of_now_is_grounded_case_aside() -> None:
    assert grounded("Fixing the BACKOFF in tests", now("backoff", app="Terminal"))


def test_a_text_about_an_earlier_moment_is_not_grounded() -> None:
    older_and_newer = window(("Slack", "lunch plans"), ("Terminal", "docker compose up"))
    assert not grounded("Making lunch plans", now_of(older_and_newer))


def test_a_text_of_stop_words_only_is_not_grounded() -> None:
    assert not grounded("User is currently working on the screen", now("working", "screen"))


# -- readable -------------------------------------------------------------------------------------


def test_a_hud_of_two_to_fifteen_words_is_readable() -> None:
    assert readable("Debugging backoff") is None
    assert readable(" ".join(["word"] * MAX_WORDS)) is None


def test_a_one_word_hud_is_not_readable() -> None:
    assert readable("Idle") == "short"


def test_a_hud_of_more_than_fifteen_words_is_not_readable() -> None:
    assert readable(" ".join(["word"] * (MAX_WORDS + 1))) == "long"


def test_markup_placeholders_echoes_and_nothing_are_not_readable_for_the_gates_reason() -> None:
    assert readable("<b>Editing</b> the file") == "markup"
    assert readable("<max 15 words: what user is doing NOW. Terse. No filler.>") == "placeholder"
    assert readable("You are an AI monitoring a user's screen") == "echo"
    assert readable(NO_OUTPUT) == "empty"


def test_the_previous_hud_again_is_not_readable_when_the_moment_moved() -> None:
    assert readable("Reading the docs", previous="reading the docs", moved=True) == "repeated"


def test_the_previous_hud_again_is_readable_when_the_moment_did_not_move() -> None:
    assert readable("Reading the docs", previous="Reading the docs", moved=False) is None


# -- pushed, copied, and the counts ---------------------------------------------------------------


def test_a_hud_is_pushed_unless_withheld_idle_or_the_last_one_pushed() -> None:
    judged = Judged()
    here = now("backoff")
    pushed = [
        judged.add(hud, "digest", withheld, here)["pushed"]
        for hud, withheld in [
            ("Fixing backoff", False),
            ("Fixing backoff", False),
            ("Idle", False),
            ("Fixing backoff", False),
            ("Reading logs now", True),
            ("Reading logs now", False),
        ]
    ]
    assert pushed == [True, False, False, False, False, True]


def test_a_digest_grounded_in_now_counts_and_one_about_before_does_not() -> None:
    judged = Judged()
    judged.add("Fixing backoff", "The user fixes the retry backoff.", False, now("backoff"))
    judged.add("Fixing backoff", "The user had lunch.", False, now("backoff"))
    assert (judged.digests_grounded, judged.asked) == (1, 2)


def test_a_digest_nearly_the_previous_one_is_copied() -> None:
    before = "The user edits retry.py in IDEA. A test fails with a timeout."
    assert copied(before, before)
    assert copied(before.replace("edits", "is editing"), before)
    assert not copied("The user reads the pricing page in Chrome.", before)
    assert not copied(before, None)


def test_a_window_without_an_answer_counts_against_every_share() -> None:
    judged = Judged()
    judged.add("Fixing backoff", "Fixing the backoff.", False, now("backoff"))
    judged.missed()
    assert judged.shares().startswith("pushed 1/2 (50 %), readable 1/2 (50 %)")
