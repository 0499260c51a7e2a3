"""The model bench against the stand-in LLM: it negotiates, parses and counts as the relay."""

from __future__ import annotations

import base64

import pytest

from bench.bench_models import main, windows
from bench.day_session import screens
from bench.prompt_corpus import cases
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


def test_with_images_each_request_carries_its_windows_newest_thumbnail_to_the_vision_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeLLM(mode="summarise") as fake:
        argv = ["--base-url", fake.base_url, "--limit", "3", "--images", "1"]
        assert main([*argv, "--vision-model", "v/m"]) == 0
        requests = list(fake.requests)
    assert [r.body["model"] for r in requests] == ["v/m"] * 3
    for request, case in zip(requests, cases()[:3], strict=True):
        (url,) = request.images
        assert url.startswith("data:image/jpeg;base64,")
        parts = request.body["messages"][0]["content"]
        assert parts[1]["image_url"]["detail"] == "low"
        newest = [e for e in case.events if e.path == "/sense"][-1]
        thumbnail = screens()[newest.body["meta"]["app"]]
        assert len(base64.b64decode(url[23:])) == len(thumbnail) + 36
    assert "images: 3 asked with, in 3 windows' requests" in capsys.readouterr().out


def test_with_images_a_server_without_vision_fails_every_window_and_says_how(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeLLM(mode="no_vision") as fake:
        assert main(["--base-url", fake.base_url, "--limit", "2", "--images", "1"]) == 0
        assert main(["--base-url", fake.base_url, "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert "failed requests: 2" in out
    assert '2 x (the first code-idle-classify) HTTP 400: {"error": {"message": "this model' in out
    assert "json_schema        2  2/2 (100 %)" in out  # the same windows without images
