"""The screen section's budget: which OCR lines the prompt shows, newest first."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.agent.core.prompt import AS_ABOVE, CUT_MANY, CUT_ONE, SCREEN_BUDGET
from actors.core.screen_budget import (
    LINE_CHARS,
    READ_CHARS,
    Cut,
    Fitted,
    fit_screen,
    is_error,
    is_question,
    ocr_lines,
)
from tests.support.harness import ROOT


def cost(fitted: Fitted) -> int:
    """What the kept lines of one text spend: each line and one separator."""
    return sum(len(p) + 1 for p in fitted.pieces if isinstance(p, str))


# -- lines -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ocr", "lines"),
    [
        ("", []),
        ("\n \n\t\n", []),
        ("one\ntwo", ["one", "two"]),
        ("one\r\ntwo\rthree", ["one", "two", "three"]),
        ("    if x:\n        return  1  ", ["if x:", "return 1"]),
        ("a\tb   c", ["a b c"]),
        ("=" * 30 + " test session starts " + "=" * 30, ["=== test session starts ==="]),
        ("........F.. [ 61%]", ["...F.. [ 61%]"]),
        ("~~~~~~~~~~~~", ["~~~"]),
        ("───────────", ["───"]),
        ("_" * 24 + " test_paused " + "_" * 24, ["___ test_paused ___"]),
        ("aaaaaaaa 1111111 ___ __init__", ["aaaaaaaa 1111111 ___ __init__"]),  # as they are
        ("Привет  мир\n日本語の  テキスト", ["Привет мир", "日本語の テキスト"]),
    ],
)
def test_ocr_lines_are_stripped_spaced_once_and_rules_shortened(ocr, lines):
    assert ocr_lines(ocr) == lines


def test_a_line_longer_than_the_limit_is_split_at_spaces():
    words = " ".join(f"word{n:03d}" for n in range(200))  # 1,599 characters
    lines = ocr_lines(words)
    assert len(lines) > 1
    assert all(len(line) <= LINE_CHARS for line in lines)
    assert " ".join(lines) == words


def test_a_line_without_spaces_is_split_at_the_limit():
    text = "日" * (LINE_CHARS * 2 + 5)
    assert ocr_lines(text) == ["日" * LINE_CHARS, "日" * LINE_CHARS, "日" * 5]


# -- errors and questions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "Traceback (most recent call last):",
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
        "E       AssertionError: assert 'idle' == 'watching'",
        "Error: ENOENT: no such file or directory, open 'config.json'",
        "Uncaught Error: Rendered more hooks than during the previous render.",
        'Exception in thread "main" java.lang.NullPointerException',
        "FAILED tests/test_idle.py::test_paused_video_is_not_idle - AssertionError",
        "--- FAIL: TestRetryBackoff (0.00s)",
        "FAIL src/auth.test.ts",
        "src/agent/analyzer.ts:88:15 - error TS2304: Cannot find name 'retryAfterMs'.",
        "error[E0373]: async block may outlive the current function",
        "main.c:3:5: error: expected ';' before 'return'",
        "npm ERR! code ELIFECYCLE",
        "ERROR: for web  Container exited with code 137",
        "thread 'main' panicked at src/parser.rs:127:14:",
        "panic: runtime error: index out of range [5] with length 3",
        "Segmentation fault (core dumped)",
        "fatal: not a git repository (or any of the parent directories): .git",
        "CONFLICT (content): Merge conflict in src/config.ts",
        "Automatic merge failed; fix conflicts and then commit the result.",
        "1 failed, 5 passed in 0.21s",
        "FATAL: password authentication failed for user 'app'",
    ],
)
def test_error_lines(line):
    assert is_error(line)


@pytest.mark.parametrize(
    "line",
    [
        "errors = []",
        "def handle_error(self, exc):",
        "img.onError = retry",
        "<ErrorBoundary fallback={<Oops />}>",
        "Errors and Exceptions — Python 3.12 documentation",
        "0 errors, 2 warnings",
        "6 passed, 0 failed in 0.30s",
        "Don't panic, it's only staging",
        "the terror of Mondays",
        "FAILURES",
        "",
    ],
)
def test_near_misses_are_not_error_lines(line):
    assert not is_error(line)


@pytest.mark.parametrize(
    "line",
    [
        "can you check why the relay's digest is stale?",
        "Does asyncio.timeout cancel the task?",
        "Ты посмотрел логи за вчера? Там то же самое?",
        "キャンセルされたタスクの後片付けはどこで行うべきですか？",
        "¿Qué pasó?",
    ],
)
def test_question_lines_end_in_a_question_mark(line):
    assert is_question(line)


@pytest.mark.parametrize(
    "line",
    [
        "google.com/search?q=python+asyncio+timeout",
        "const name = user?.name ?? 'anon';",
        "?",
        "?? ??",
        "aws  Services  ▣  🔔  ?  ⚙  Frankfurt",
        "Why? Because the probe timed out.",
        "",
    ],
)
def test_near_misses_are_not_question_lines(line):
    assert not is_question(line)


# -- the budget --------------------------------------------------------------------------------


def test_an_empty_window_and_empty_texts_keep_nothing():
    assert fit_screen([], 100) == ()
    assert fit_screen(["", "  \n"], 100) == (Fitted((), 0), Fitted((), 0))


def test_everything_fits_a_large_budget():
    assert fit_screen(["new one\nnew two", "old"], 1_000) == (
        Fitted(("new one", "new two"), 0),
        Fitted(("old",), 0),
    )


def test_the_budget_is_spent_newest_first():
    newest = "\n".join(f"newest line {n}" for n in range(5))  # 13 characters a line
    older = "\n".join(f"older line {n}" for n in range(5))  # 12
    fitted = fit_screen([newest, older], 5 * 14 + 2 * 13)
    assert fitted[0] == Fitted(tuple(f"newest line {n}" for n in range(5)), 0)
    assert fitted[1] == Fitted(("older line 0", "older line 1", Cut(3)), 0)


def test_once_a_line_does_not_fit_no_older_line_is_kept():
    fitted = fit_screen(["a" * 50 + "\n" + "b" * 50, "c"], 60)
    assert fitted == (Fitted(("a" * 50, Cut(1)), 0), Fitted((Cut(1),), 0))


def test_a_budget_of_nothing_cuts_every_line():
    assert fit_screen(["one\ntwo", "three"], 0) == (Fitted((Cut(2),), 0), Fitted((Cut(1),), 0))


def test_the_kept_lines_never_spend_more_than_the_budget():
    texts = ["\n".join(f"{t}-{n} " + "x" * (n % 17) for n in range(40)) for t in "abcd"]
    for budget in (0, 1, 17, 100, 333, 1_000, 5_000):
        assert sum(cost(f) for f in fit_screen(texts, budget)) <= budget


def test_a_line_repeated_in_an_older_text_is_dropped_there():
    chrome = "Bookmarks  Gmail  GitHub\n←  →  C  docs.python.org"
    fitted = fit_screen([f"{chrome}\nnew page", f"{chrome}\nold page"], 1_000)
    assert fitted == (
        Fitted(("Bookmarks Gmail GitHub", "← → C docs.python.org", "new page"), 0),
        Fitted(("old page",), 2),
    )


def test_repeats_are_recognised_after_spacing_and_not_within_one_text():
    fitted = fit_screen(["}\nreturn x\n}", "  return   x\n}\nolder"], 1_000)
    assert fitted == (Fitted(("}", "return x", "}"), 0), Fitted(("older",), 2))


def test_a_text_whose_every_line_is_newer_keeps_nothing_and_counts_them():
    fitted = fit_screen(["same\ntext", "same\ntext"], 1_000)
    assert fitted[1] == Fitted((), 2)


def test_repeated_lines_spend_nothing():
    chrome = "x" * 40
    fitted = fit_screen([f"{chrome}\nnew", f"{chrome}\nold"], 41 + 4 + 4)
    assert fitted[1] == Fitted(("old",), 1)


def test_error_and_question_lines_are_kept_whole_before_any_other_line():
    newest = "\n".join(["lorem ipsum dolor sit amet"] * 4)
    older = "$ pytest -q\n" + "collected 6 items\n" * 3 + "E   AssertionError: assert 1 == 2"
    chat = "Anna 10:44\nthe HUD is stuck\ncan you check the digest?"
    error, question = "E AssertionError: assert 1 == 2", "can you check the digest?"
    fitted = fit_screen([newest, older, chat], len(error) + 1 + len(question) + 1 + 2 * 27)
    assert fitted == (
        Fitted(("lorem ipsum dolor sit amet", "lorem ipsum dolor sit amet", Cut(2)), 0),
        Fitted((Cut(4), error), 0),
        Fitted((Cut(2), question), 0),
    )


def test_errors_are_spent_newest_first_and_cut_too_when_they_alone_exceed_the_budget():
    errors = "\n".join(f"npm ERR! line {n}" for n in range(10))  # 15 characters a line
    fitted = fit_screen([errors], 3 * 16)
    assert fitted == (Fitted(("npm ERR! line 0", "npm ERR! line 1", "npm ERR! line 2", Cut(7)), 0),)


def test_each_run_of_cut_lines_gets_one_mark_where_it_was():
    text = "head\n" + "middle\n" * 3 + "Traceback (most recent call last):\n" + "tail\n" * 2
    (fitted,) = fit_screen([text], 5 + 35)
    assert fitted == Fitted(("head", Cut(3), "Traceback (most recent call last):", Cut(2)), 0)


def test_a_repeated_line_inside_a_cut_run_is_left_out_of_the_count():
    (_, older) = fit_screen(["chrome", "one\nchrome\ntwo\nthree"], 7 + 4)
    assert older == Fitted(("one", Cut(2)), 1)


def test_multibyte_text_is_spent_by_characters():
    newest = "日本語のテキスト\nПривет мир"  # 8 and 10 characters
    (fitted,) = fit_screen([newest], 9 + 11)
    assert fitted == Fitted(("日本語のテキスト", "Привет мир"), 0)
    (short,) = fit_screen([newest], 9 + 10)
    assert short == Fitted(("日本語のテキスト", Cut(1)), 0)


def test_only_the_head_of_a_huge_text_is_read_and_the_rest_is_counted_as_cut():
    line = "x" * 99
    count = READ_CHARS // 100 * 3
    huge = "\n".join([line] * count + ["KeyError: 'user_id'"])
    (fitted,) = fit_screen([huge], 250)
    assert fitted.pieces[:2] == (line, line)
    assert isinstance(fitted.pieces[2], Cut)
    assert fitted.pieces[2].lines == count + 1 - 2
    assert fitted.repeated == 0


def test_the_same_texts_fit_the_same_way_every_time():
    texts = ["new\nchrome", "chrome\nold\nError: boom"]
    first = fit_screen(texts, 12)
    assert fit_screen(list(texts), 12) == first == fit_screen([t + "" for t in texts], 12)
    assert fit_screen(texts, 1_000) != first


def test_a_huge_text_without_line_breaks_is_read_to_the_bound():
    text = "word " * (READ_CHARS // 5 * 2)
    head = ocr_lines(text[:READ_CHARS])
    (fitted,) = fit_screen([text], LINE_CHARS + 1)
    assert fitted.pieces == (head[0], Cut(len(head) - 1 + 1))  # the rest of the line: one more


def test_the_agent_loop_page_states_the_budget_as_the_code_has_it():
    page = (ROOT / "docs" / "agent-loop.md").read_text(encoding="utf-8")
    section = " ".join(page[page.index("### The screen budget") :].split())
    assert f"one budget of {SCREEN_BUDGET:,} characters" in section
    assert f"lines longer than {LINE_CHARS} characters split at a space" in section
    assert f"(of a huge text, its first {READ_CHARS // 1024} KiB)" in section
    for label in (CUT_ONE, CUT_MANY.format(count=12), AS_ABOVE):
        assert label in section


_LINE = st.sampled_from(
    ["chrome bar", "Error: boom", "why?", "  x  ", "", "日本語", "=" * 9, "FAILED t", "a" * 30]
)
_TEXT = st.one_of(st.lists(_LINE, max_size=12).map("\n".join), st.text(max_size=300))


@pytest.mark.slow
@settings(max_examples=150, deadline=None, derandomize=True)
@given(texts=st.lists(_TEXT, max_size=5), budget=st.integers(0, 400))
def test_any_texts_fit_within_the_budget_and_every_line_is_accounted_for(texts, budget):
    fitted = fit_screen(texts, budget)
    assert len(fitted) == len(texts)
    assert sum(cost(f) for f in fitted) <= budget
    newer: set[str] = set()
    for text, f in zip(texts, fitted, strict=True):
        lines = ocr_lines(text)
        kept = [p for p in f.pieces if isinstance(p, str)]
        cuts = [p.lines for p in f.pieces if isinstance(p, Cut)]
        assert all(line in lines and line not in newer for line in kept)
        assert len(kept) + sum(cuts) + f.repeated == len(lines)
        assert f.repeated == sum(line in newer for line in lines)
        assert all(n > 0 for n in cuts)
        assert not any(
            isinstance(a, Cut) and isinstance(b, Cut)
            for a, b in zip(f.pieces, f.pieces[1:], strict=False)
        )
        newer.update(lines)
