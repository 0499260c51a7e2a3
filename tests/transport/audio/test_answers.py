"""``/health.audio``: each configured source's capture and the transcriber, as they last
published themselves, in a real relay with a real capture process and the stand-in speech
service over loopback. What may say private things is hidden from callers without the token,
and a capture that failed leaves ``/health`` a 200: the relay still serves."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

from actors.audio.capture import Capture
from actors.core.shapes import AUDIO_SOURCES
from actors.kernel.clock import FakeClock
from actors.tree import Relay
from config.audio.settings import AudioConfig
from tests.audio.pcm_program import command as program
from tests.support.actor_calls import asked
from tests.support.harness import ROOT
from tests.support.observe import wait_until
from tests.support.relay import client_for, relay_settings
from tests.test_hearing import HEARD
from tests.transport.openapi_contract import Contract
from transport.audio.answers import AudioSources
from transport.demo.fake_stt import FakeStt
from transport.openapi import openapi_document

TOKEN = "s3cret-token"
AUTHORIZED = {"Authorization": f"Bearer {TOKEN}"}
SPEAKS = program("--scene", "speech:1200,silence:1500", "--repeat", "40")
FAILS = program("--stderr", "no device 'Studio Mic (Alice)'", "--exit-after", "0", "--code", "3")
"""A capture program that says why on stderr and exits 3 before any audio."""


@pytest.fixture
def fake_stt() -> Iterator[FakeStt]:
    with FakeStt() as stt:
        stt.text = HEARD
        yield stt


@pytest.fixture
def hears(
    make_relay: Callable[..., Relay], fake_stt: FakeStt, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Relay]:
    """Start a relay whose audio settings are ``audio`` over the stand-in speech service."""
    monkeypatch.chdir(ROOT)  # ``-m tests.audio.pcm_program`` is found from the top

    def start(token: str = "", **audio: Any) -> Relay:
        config = AudioConfig(
            stt_api="openai",
            stt_base_url=fake_stt.base_url,
            stt_model="whisper-1",
            stt_api_key="placeholder",
        )
        settings = replace(relay_settings(), token=token, audio=replace(config, **audio))
        return make_relay(settings)

    return start


@pytest.fixture(scope="module")
def contract() -> Contract:
    return Contract(openapi_document())


def audio(client: httpx.Client, contract: Contract, **kwargs: Any) -> dict[str, Any]:
    """``/health.audio``, the whole answer checked against the API document first."""
    response = client.get("/health", **kwargs)
    assert response.status_code == 200, response.text
    assert not contract.check("GET", "/health", 200, response.headers, response.content)
    body: dict[str, Any] = response.json()["audio"]
    return body


def test_health_shows_a_running_source_its_utterances_and_the_transcribers_outcomes(
    hears: Callable[..., Relay], contract: Contract
) -> None:
    relay = hears(source=SPEAKS)
    capture = relay.handles["capture_system"]
    with client_for(relay) as client:

        def heard() -> dict[str, Any] | None:
            asked(capture, Capture.snapshot)  # any message publishes its status
            body = audio(client, contract)
            system = body["sources"].get("system") or {}
            stored = body["transcriber"]["outcomes"].get("stored", 0)
            return body if system.get("utterances", 0) >= 1 and stored >= 1 else None

        body = wait_until(heard, 15, "an utterance counted and its transcript stored")
    assert set(body["sources"]) == {"system"}  # the microphone is not configured
    system = body["sources"]["system"]
    assert system["state"] == "running"
    assert system["kind"] == "command"
    assert (system["restarts"], system["lastExit"], system["alt"]) == (0, None, False)
    assert system["capturedS"] > 0
    assert 0 < system["speechShare"] <= 1
    assert system["lastStderr"] == ""
    transcriber = body["transcriber"]
    assert transcriber["state"] == "ok"
    assert (transcriber["api"], transcriber["model"]) == ("openai", "whisper-1")
    assert transcriber["maxInFlight"] == 5
    assert 0 <= transcriber["inFlight"] <= 5
    assert isinstance(transcriber["latencyP50Ms"], int)
    assert transcriber["lastError"] is None
    assert transcriber["consecutiveFailures"] == 0


def test_health_without_a_source_shows_none_and_a_transcriber_without_a_key(
    make_relay: Callable[..., Relay], contract: Contract
) -> None:
    relay = make_relay()
    with client_for(relay) as client:
        body = audio(client, contract)
    assert body["sources"] == {}
    transcriber = body["transcriber"]
    assert transcriber["state"] == "no_key"
    assert transcriber["outcomes"] == {}
    assert (transcriber["inFlight"], transcriber["latencyP50Ms"]) == (0, None)


def test_health_without_the_token_hides_the_captures_stderr_and_the_services_error(
    hears: Callable[..., Relay], fake_stt: FakeStt, contract: Contract
) -> None:
    fake_stt.mode = "500"
    relay = hears(token=TOKEN, source=SPEAKS, mic_source=FAILS)
    with client_for(relay) as client:

        def failed() -> dict[str, Any] | None:
            body = audio(client, contract, headers=AUTHORIZED)
            mic = body["sources"].get("mic") or {}
            told = mic.get("lastStderr") and body["transcriber"]["lastError"]
            return body if told else None

        private = wait_until(failed, 15, "the mic's stderr and the service's error")
        public = audio(client, contract)
    assert private["sources"]["mic"]["lastStderr"] == "no device 'Studio Mic (Alice)'"
    assert private["sources"]["mic"]["lastExit"] == 3
    assert "HTTP 500" in private["transcriber"]["lastError"]
    assert public["sources"]["mic"]["lastStderr"] is None
    assert public["sources"]["system"]["lastStderr"] is None
    assert public["transcriber"]["lastError"] is None
    assert public["sources"]["mic"]["lastExit"] == 3  # the figures stay
    assert public["transcriber"]["outcomes"].get("error", 0) >= 1


def test_a_failed_capture_is_shown_and_health_still_answers_200(
    hears: Callable[..., Relay], clock: FakeClock
) -> None:
    relay = hears(mic_source=FAILS)
    with client_for(relay) as client:

        def failed() -> httpx.Response | None:
            clock.advance(5)  # past each restart's backoff
            response = client.get("/health")
            mic = response.json()["audio"]["sources"]["mic"]
            return response if mic["state"] == "failed" else None

        response = wait_until(failed, 15, "the microphone's capture failed")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    assert body["audio"]["sources"]["mic"]["restarts"] >= 4
    assert body["actors"]["capture_mic"]["alive"] is True


def test_the_answer_names_every_source_the_relay_captures() -> None:
    assert tuple(AudioSources.__struct_fields__) == AUDIO_SOURCES
