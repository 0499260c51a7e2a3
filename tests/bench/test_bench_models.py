"""The model bench (``python -m bench models``) against the stand-in LLM: it negotiates,
parses and counts as the relay."""

from __future__ import annotations

import base64

import pytest

from tests.support.day_session import screens
from tests.support.harness import bench_case
from tests.support.model_windows import windows
from tests.support.prompt_corpus import cases
from transport.agent.fake_llm import FakeLLM


@pytest.mark.slow
def test_against_a_server_that_refuses_json_schema_it_settles_on_json_object() -> None:
    with FakeLLM(mode="refuse_schema_500") as fake:
        out = models("--base-url", fake.base_url, "--limit", "4")
        kinds = [r.body.get("response_format", {}).get("type") for r in fake.requests]
    assert kinds == ["json_schema", "json_object", "json_object", "json_object", "json_object"]
    assert "json_object        4  4/4 (100 %)         1  none" in out  # the same hud 4 times
    assert "refused: json_schema 1; failed requests: 0" in out
    assert "pushed 1/4 (25 %), readable 1/4 (25 %)" in out  # the repeats are no news


@pytest.mark.slow
def test_garbled_answers_are_counted_as_withheld() -> None:
    with FakeLLM(mode="echo") as fake:
        out = models("--base-url", fake.base_url, "--limit", "3", "--show")
    assert "json_schema        3  0/3 (0 %)           0  echo 3" in out
    assert "unparsed by level/finish_reason: json_schema/stop 3" in out
    assert out.count("withheld: echo") == 3


@pytest.mark.slow
def test_with_images_each_request_carries_its_windows_newest_thumbnail_to_the_vision_model() -> (
    None
):
    with FakeLLM(mode="summarise") as fake:
        argv = ["--base-url", fake.base_url, "--limit", "3", "--images", "1"]
        out = models(*argv, "--vision-model", "v/m")
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
    assert "images: 3 asked with, in 3 windows' requests" in out


@pytest.mark.slow
def test_with_images_a_server_without_vision_fails_every_window_and_says_how() -> None:
    with FakeLLM(mode="no_vision") as fake:
        out = models("--base-url", fake.base_url, "--limit", "2", "--images", "1")
        out += models("--base-url", fake.base_url, "--limit", "2")
    assert "failed requests: 2" in out
    assert '2 x (the first code-idle-classify) HTTP 400: {"error": {"message": "this model' in out
    assert "json_schema        2  2/2 (100 %)" in out  # the same windows without images


def test_the_windows_are_the_corpus_then_the_demo_session_every_step() -> None:
    found = windows(session_step_s=20, limit=None)
    assert [w.name for w in found[: len(cases())]] == [c.name for c in cases()]
    assert [w.name for w in found if w.at_s][:2] == ["demo@20s", "demo@40s"]
    assert len(windows(session_step_s=20, limit=3)) == 3
    sample = windows(session_step_s=20, limit=None, sample=5)
    assert [sample[0], sample[-1]] == [found[0], found[-1]]


def models(*args: str) -> str:
    """``python -m bench models <args>``'s output; the run must succeed."""
    done = bench_case("models", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_with_local_it_asks_the_relays_own_worker_and_reads_its_cpu_time() -> None:
    out = models("--local", "smollm2-135m-instruct", "--limit", "2")
    assert "model smollm2-135m-instruct at http://agent-local/v1" in out
    assert "json_schema        2  " in out  # the worker takes the top level
    assert "failed requests: 0" in out
    assert "model process CPU " in out  # the worker's, once it runs


def test_without_a_server_or_a_local_model_it_says_what_to_give() -> None:
    done = bench_case("models", "--limit", "1")
    assert done.returncode == 2
    assert "--base-url" in done.stderr
    assert "--local" in done.stderr
