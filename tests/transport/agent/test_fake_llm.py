"""The shipped fake LLM: run as users run it (``python -m transport.agent.fake_llm``), and its
``summarise`` mode, the stand-in of ``python run.py --demo``."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import Any

import httpx
import pytest

from actors.agent.core.completion import parse_analysis, parse_chat_completion
from tests.support.harness import ROOT, free_port
from tests.support.prompt_corpus import session_prompt
from tests.support.run_relay import wait_answering
from transport.agent.fake_llm import STAND_IN_MODEL, FakeLLM
from transport.agent.stand_in import summarise


@pytest.mark.slow
def test_the_fake_llm_serves_completions_and_switches_modes_over_http() -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "transport.agent.fake_llm", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_answering(f"{base}/_mode", proc, "the fake LLM")
        state = httpx.get(f"{base}/_mode", timeout=1).json()
        assert state["mode"] == "ok"
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        ok = httpx.post(f"{base}/v1/chat/completions", json=body, timeout=5).json()
        assert '"hud"' in ok["choices"][0]["message"]["content"]

        assert httpx.post(f"{base}/_mode", json={"mode": "http500"}, timeout=5).json()["ok"]
        assert httpx.post(f"{base}/v1/chat/completions", json=body, timeout=5).status_code == 500
        one = httpx.post(f"{base}/_mode", json={"mode": "ok", "model": "m"}, timeout=5).json()
        assert one["modelModes"] == {"m": "ok"} and one["mode"] == "http500"
        assert httpx.post(f"{base}/v1/chat/completions", json=body, timeout=5).status_code == 200
        bad = httpx.post(f"{base}/_mode", json={"mode": "melt"}, timeout=5)
        assert bad.status_code == 400 and "hang" in bad.json()["error"]
        assert httpx.get(f"{base}/_mode", timeout=5).json()["requests"] == 3
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=15)
    assert proc.returncode == 0


def test_mode_summarise_answers_over_http_labelled_as_a_stand_in() -> None:
    prompt = session_prompt(44.0)
    with FakeLLM(mode="summarise", latency_s=0.2) as llm:
        body = {"model": "x/y", "messages": [{"role": "user", "content": prompt}]}
        started = time.monotonic()
        answer = httpx.post(f"{llm.base_url}/chat/completions", json=body, timeout=5)
        assert time.monotonic() - started >= 0.2, "latency_s delays the answer"
        assert answer.status_code == 200
        data = answer.json()
        assert data["model"] == STAND_IN_MODEL
        completion = parse_chat_completion(answer.content)
        assert completion.tokens_in == len(prompt) // 4 and completion.tokens_out > 0
        analysis = parse_analysis(completion.content)
        assert analysis.parsed_ok
        assert (analysis.hud, analysis.digest) == summarise(prompt)
        # a body without messages still gets an answer, an idle one
        idle = httpx.post(f"{llm.base_url}/chat/completions", json={}, timeout=5).json()
        assert parse_analysis(idle["choices"][0]["message"]["content"]).hud == "Idle"
        state = httpx.get(f"http://127.0.0.1:{llm.port}/_mode", timeout=5).json()
        assert state["mode"] == "summarise" and state["latencyS"] == 0.2
        assert llm.calls == 2
        # the other modes are as they were
        llm.mode, llm.latency_s = "ok", 0.0
        ok = httpx.post(f"{llm.base_url}/chat/completions", json=body, timeout=5).json()
        assert ok["model"] == "x/y"
        assert parse_analysis(ok["choices"][0]["message"]["content"]).hud == llm.hud


def test_the_fake_llm_reads_content_parts_and_counts_image_tokens() -> None:
    picture = "data:image/png;base64,iVBORw0KGgo="
    content = [
        {"type": "text", "text": "first"},
        {"type": "image_url", "image_url": {"url": picture, "detail": "low"}},
        {"type": "text", "text": "second"},
    ]
    body = {"model": "m", "messages": [{"role": "user", "content": content}]}
    with FakeLLM() as llm:
        answer = httpx.post(f"{llm.base_url}/chat/completions", json=body, timeout=5).json()
        assert answer["usage"]["prompt_tokens"] == llm.tokens_in + llm.image_tokens
        (seen,) = llm.requests
        assert (seen.prompt, seen.images) == ("first\nsecond", [picture])
        llm.mode = "no_vision"
        refused = httpx.post(f"{llm.base_url}/chat/completions", json=body, timeout=5)
        assert refused.status_code == 400
        assert "image input" in refused.json()["error"]["message"]
        text_only = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        assert httpx.post(f"{llm.base_url}/chat/completions", json=text_only, timeout=5).is_success


def test_a_models_mode_can_last_a_number_of_requests() -> None:
    with FakeLLM() as llm:
        mode = f"http://127.0.0.1:{llm.port}/_mode"
        set_ = {"mode": "http500", "model": "m", "times": 2}
        assert httpx.post(mode, json=set_, timeout=5).json()["modelTimes"] == {"m": 2}
        body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        other = {**body, "model": "other"}

        def status(sent: dict[str, Any]) -> int:
            return httpx.post(f"{llm.base_url}/chat/completions", json=sent, timeout=5).status_code

        assert [status(body), status(other), status(body), status(body)] == [500, 200, 500, 200]
        assert httpx.get(mode, timeout=5).json()["modelModes"] == {}
        # without times, the model's mode lasts
        httpx.post(mode, json={"mode": "http500", "model": "m"}, timeout=5).raise_for_status()
        assert [status(body), status(body)] == [500, 500]
