"""The prompt corpus's files (``tests/data/corpus/``) and their loader: every case has its
requests and every file a case, each in the form it is written in, and a bad line of
``cases.jsonl`` is named."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.prompt_corpus import CASES, WINDOWS, CorpusError, cases, parse_case, window_path
from transport.demo.replay import load_session


def _lines(text: str) -> list[dict[str, Any]]:
    lines = text.splitlines()
    for line in lines:  # one object a line, as json.dumps writes it: diffs stay a line a change
        assert json.dumps(json.loads(line), ensure_ascii=False) == line
    return [json.loads(line) for line in lines]


def test_every_case_has_its_requests_and_every_window_file_a_case() -> None:
    index = _lines(CASES.read_text(encoding="utf-8"))
    corpus = cases()
    assert [c.name for c in corpus] == [entry["name"] for entry in index]
    assert len({c.name for c in corpus}) == len(corpus)
    files = {path.stem for path in WINDOWS.iterdir()}
    assert files == {e["name"] for e in index if "demo_until_s" not in e}
    for case in corpus:
        if case.name in files:
            text = window_path(case.name).read_text(encoding="utf-8")
            assert len(_lines(text)) == len(case.events)
            assert case.events == load_session(window_path(case.name))


def test_a_demo_window_is_the_demo_session_up_to_its_second() -> None:
    demo = load_session()
    index = _lines(CASES.read_text(encoding="utf-8"))
    seconds = {e["name"]: e["demo_until_s"] for e in index if "demo_until_s" in e}
    assert seconds
    for case in cases():
        if case.name in seconds:
            n = len(case.events)
            assert case.busy
            assert case.events == demo[:n]
            assert case.events[-1].at <= seconds[case.name] < demo[n].at


def test_each_call_reads_the_corpus_anew() -> None:
    first, second = cases(), cases()
    assert first == second
    assert first[0].events[0].body is not second[0].events[0].body


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("{nope", "not JSON"),
        ("[]", r'needs \{"name"'),
        ('{"name": 3}', r'needs \{"name"'),
        ('{"name": "../x", "shape": "code", "busy": false, "expected": ["x"]}', "hyphens"),
        ('{"name": "x", "shape": "poem", "busy": false, "expected": ["x"]}', "shape must be"),
        ('{"name": "x", "shape": "code", "busy": "no", "expected": ["x"]}', "busy must be"),
        ('{"name": "x", "shape": "code", "busy": false, "expected": []}', "expected must be"),
        ('{"name": "x", "shape": "code", "busy": false, "expected": [" "]}', "expected must be"),
        ('{"name": "x", "shape": "code", "busy": false, "expected": "x"}', "expected must be"),
        (
            '{"name": "x", "shape": "code", "busy": true, "expected": ["x"], "demo_until_s": "9"}',
            "demo_until_s must be",
        ),
        ('{"name": "no-such", "shape": "code", "busy": false, "expected": ["x"]}', "no windows/"),
    ],
)
def test_a_bad_line_of_cases_jsonl_is_named(line: str, error: str) -> None:
    with pytest.raises(CorpusError, match=error) as raised:
        parse_case(line, "cases.jsonl:7")
    assert str(raised.value).startswith("cases.jsonl:7: ")
