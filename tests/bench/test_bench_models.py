"""The model bench against the stand-in LLM: it negotiates, parses and counts as the relay."""

from __future__ import annotations

import pytest

from bench.bench_models import main, windows
from transport.demo.fake_llm import FakeLLM


def test_the_windows_are_the_corpus_and_the_demo_session() -> None:
    found = windows(session_step_s=20, limit=None)
    assert sum(w.at_s is None for w in found) >= 30
    assert [w.name for w in found if w.at_s is not None][:2] == ["demo@20s", "demo@40s"]
    assert len(windows(session_step_s=20, limit=3)) == 3


def test_against_a_server_that_refuses_json_schema_it_settles_on_json_object(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeLLM(mode="refuse_schema_500") as fake:
        assert main(["--base-url", fake.base_url, "--limit", "4"]) == 0
        kinds = [r.body.get("response_format", {}).get("type") for r in fake.requests]
    assert kinds == ["json_schema", "json_object", "json_object", "json_object", "json_object"]
    out = capsys.readouterr().out
    assert "json_object        4  4/4 (100 %)         4  none" in out
    assert "refused: json_schema 1; failed requests: 0" in out


def test_garbled_answers_are_counted_as_withheld(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeLLM(mode="echo") as fake:
        main(["--base-url", fake.base_url, "--limit", "3", "--show"])
    out = capsys.readouterr().out
    assert "json_schema        3  0/3 (0 %)           0  echo 3" in out
    assert "unparsed by level/finish_reason: json_schema/stop 3" in out
    assert out.count("withheld: echo") == 3
