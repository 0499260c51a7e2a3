"""The transcript filters: each reason to drop a transcript, and what must be kept."""

from __future__ import annotations

import pytest

from actors.audio.core.transcript_filter import (
    BLEED_WINDOW_MS,
    DROP_REASONS,
    DUPLICATE_HISTORY,
    Filters,
    normalise,
    similarity,
)

T0 = 1_769_901_200_000
SENTENCE = "The deploy failed because the database refused the connection."


def test_normalise_folds_case_punctuation_and_spaces() -> None:
    assert normalise("  Don't   STOP —  now!! ") == "dont stop now"
    assert normalise("Thanks for watching!") == "thanks for watching"


def test_similarity_is_the_dice_coefficient_of_bigrams() -> None:
    assert similarity("night", "nacht") == pytest.approx(2 * 1 / 8)  # "ht" of 4 + 4 bigrams
    assert similarity("abc", "abc") == 1.0
    assert similarity("ab", "cd") == 0.0
    assert similarity("a", "b") == 0.0


@pytest.mark.parametrize("text", ["", "   ", "ok", " a. ", "...", "♪ ♪ ♪"])
def test_short_or_wordless_text_is_dropped(text: str) -> None:
    assert Filters().check("system", text, False, T0) == "short"


@pytest.mark.parametrize(
    "text",
    [
        "the the the the the the",
        "no no no no yes no no",
        "Okay. Okay. Okay. Okay. Okay. Okay. Okay.",
    ],
)
def test_one_word_over_sixty_percent_is_repetitive(text: str) -> None:
    assert Filters().check("system", text, False, T0) == "repetitive"


@pytest.mark.parametrize(
    "text",
    [
        "no no no yes yes",  # under six words
        "no no no yes yes maybe",  # half of them
        "I think I said I would, I promise",  # 3 of 8
    ],
)
def test_repetition_within_the_bounds_is_kept(text: str) -> None:
    assert Filters().check("system", text, False, T0) is None


@pytest.mark.parametrize(
    "text",
    [
        "Thank you.",
        "thank you",
        "Thanks for watching!",
        "you",
        " You. ",
        "Subtitles by the Amara.org community",
        "Please subscribe.",
        "[Music]",
        "Продолжение следует...",
    ],
)
def test_invented_phrases_are_dropped_when_quiet(text: str) -> None:
    assert Filters().check("system", text, True, T0) == "invented"


@pytest.mark.parametrize("text", ["Thank you.", "Thanks for watching!", "you", "Please subscribe."])
def test_the_same_phrases_said_clearly_are_kept(text: str) -> None:
    assert Filters().check("mic", text, False, T0) is None


def test_a_quiet_sentence_is_kept() -> None:
    assert Filters().check("mic", "Thank you for the review, I will fix it.", True, T0) is None


def test_a_near_repeat_of_a_recent_transcript_is_a_duplicate() -> None:
    filters = Filters()
    assert filters.check("system", SENTENCE, False, T0) is None
    again = "the deploy failed because the database refused the connection"
    assert filters.check("system", again, False, T0 + 5_000) == "duplicate"
    close = "The deploy failed, because the database refused a connection."
    assert filters.check("system", close, False, T0 + 6_000) == "duplicate"


def test_a_different_sentence_is_kept() -> None:
    filters = Filters()
    assert filters.check("system", SENTENCE, False, T0) is None
    other = "Let's roll back to yesterday's build and look at the logs."
    assert filters.check("system", other, False, T0 + 1_000) is None


def test_the_same_sentence_after_the_history_is_kept() -> None:
    filters = Filters()
    assert filters.check("system", SENTENCE, False, T0) is None
    others = ["Who owns the billing service?", "It is on call this week.", "Ask in the channel."]
    assert len(others) == DUPLICATE_HISTORY
    for n, text in enumerate(others):
        assert filters.check("system", text, False, T0 + n) is None
    assert filters.check("system", SENTENCE, False, T0 + 10) is None


def test_duplicates_are_per_source() -> None:
    filters = Filters()
    assert filters.check("mic", SENTENCE, False, T0) is None
    assert filters.check("mic", SENTENCE, False, T0 + BLEED_WINDOW_MS * 10) == "duplicate"
    assert filters.check("system", SENTENCE, False, T0) is None


def test_a_dropped_transcript_is_not_remembered() -> None:
    filters = Filters()
    assert filters.check("system", "Thanks for watching!", True, T0) == "invented"
    assert filters.check("system", "Thanks for watching!", False, T0 + 1) is None


def test_the_microphone_hearing_the_speakers_is_bleed() -> None:
    filters = Filters()
    assert filters.check("system", SENTENCE, False, T0) is None
    heard = "the deploy failed because the database refused connection"
    assert filters.check("mic", heard, False, T0 + BLEED_WINDOW_MS) == "bleed"


def test_the_microphone_after_the_bleed_window_is_kept() -> None:
    filters = Filters()
    assert filters.check("system", SENTENCE, False, T0) is None
    assert filters.check("mic", SENTENCE, False, T0 + BLEED_WINDOW_MS + 1) is None


def test_a_system_transcript_like_a_mic_one_is_not_bleed() -> None:
    filters = Filters()
    assert filters.check("mic", SENTENCE, False, T0) is None
    assert filters.check("system", SENTENCE, False, T0 + 1_000) is None


def test_the_microphone_saying_something_else_is_kept() -> None:
    filters = Filters()
    assert filters.check("system", SENTENCE, False, T0) is None
    reply = "Can you check whether the database is up?"
    assert filters.check("mic", reply, False, T0 + 2_000) is None


def test_drops_are_counted_by_reason() -> None:
    filters = Filters()
    filters.check("system", "", False, T0)
    filters.check("system", "you", True, T0)
    filters.check("system", SENTENCE, False, T0)
    filters.check("system", SENTENCE, False, T0)
    assert filters.dropped == {
        "short": 1,
        "repetitive": 0,
        "invented": 1,
        "duplicate": 1,
        "bleed": 0,
    }
    assert tuple(filters.dropped) == DROP_REASONS
