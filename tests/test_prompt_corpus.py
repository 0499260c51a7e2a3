"""The prompt corpus and its measures (``tests/support/prompt_corpus.py``):
the corpus is what it claims to be, and the bench counts what it says it counts."""

from __future__ import annotations

import re

import pytest

from actors.agent.core.prompt import build_prompt
from tests.support.prompt_corpus import (
    SHAPES,
    case_window,
    cases,
    cut_prompt,
    input_texts,
    measure,
    records,
    tick_ms,
    window_part,
    words,
)

CORPUS = cases()
_ERROR_OR_QUESTION = re.compile(r"Error|Exception|FAILED|FAIL\b|error[:\[]|panicked|\?\s*$", re.M)


def test_the_corpus_has_enough_cases_of_every_shape():
    assert len(CORPUS) >= 25
    assert len({c.name for c in CORPUS}) == len(CORPUS)
    for shape in SHAPES:
        assert sum(c.shape == shape for c in CORPUS) >= 4, shape
    busy = [c for c in CORPUS if c.busy]
    assert len(busy) >= 4
    assert all(len(case_window(c).screen) >= 5 for c in busy)


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.name)
def test_each_case_is_a_valid_capture_session_whose_expected_words_are_in_its_window(case):
    _feed, sense = records(case)  # validated as POST /feed and POST /sense bodies
    assert sense
    assert all(e.payload["meta"]["app"] and "observation" in e.payload for e in sense)
    window = case_window(case)
    given = "\n".join(input_texts(window)).casefold()
    for word in case.expected:
        assert word.casefold() in given, word


def test_several_cases_put_an_error_or_question_past_the_200th_character_of_an_ocr_text():
    late = []
    for case in CORPUS:
        for event in case_window(case).screen:
            flat = event.ocr.replace("\n", " ")
            if (
                any(m.start() >= 200 for m in _ERROR_OR_QUESTION.finditer(event.ocr))
                and len(flat) > 200
            ):
                late.append(case.name)
                break
    assert len(late) >= 8, late


def test_words_are_four_letters_or_more_case_folded_in_any_script():
    assert words(["Error: JSONDecodeError in app.py", "Привет мир 日本語のテキスト ab1cd"]) == {
        "error",
        "jsondecodeerror",
        "привет",
        "日本語のテキスト",
    }


def test_the_window_part_leaves_out_the_instructions():
    case = CORPUS[0]
    prompt = build_prompt(case_window(case), now_ms=tick_ms(case))
    part = window_part(prompt)
    assert part.startswith("\nScreen now (OCR text):\n[")  # its app: the screen line's
    assert "Respond with" not in part
    assert "Mention errors" not in part


def test_the_cut_prompt_cuts_each_ocr_text_at_200_characters():
    case = next(c for c in CORPUS if c.name == "term-python-json-traceback")
    window = case_window(case)
    cut = measure(case, window, cut_prompt(window, now_ms=tick_ms(case)))
    assert "JSONDecodeError" in cut.expected_lost
    assert cut.words_kept < cut.words_in
