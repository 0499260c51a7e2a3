"""The shipped fake LLM, run as users run it: ``python -m transport.fake_llm``."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import httpx
import pytest

from tests.test_run import ROOT, free_port


def test_the_fake_llm_serves_completions_and_switches_modes_over_http() -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "transport.fake_llm", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                state = httpx.get(f"{base}/_mode", timeout=1).json()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("the fake LLM did not start")
                time.sleep(0.05)
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
