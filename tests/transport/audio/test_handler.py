"""``POST /audio``: an utterance from another device, through the transcriber and the
stand-in speech service into the feed; every malformed body a clear 4xx that changes nothing."""

from __future__ import annotations

import io
import wave
from collections.abc import Callable, Iterator
from dataclasses import replace

import httpx
import pytest

from actors.audio import subtree as audio_tree
from actors.audio.core.wav import wav_bytes
from actors.tree import Relay
from config.audio.settings import AudioConfig
from config.command_line import load_settings
from tests.audio.signals import speech
from tests.support.observe import wait_until
from tests.support.redaction_samples import assert_nowhere
from tests.support.relay import assert_error, client_for, relay_settings
from transport.demo.fake_stt import FakeStt

SAID = "the build is green again"
WAV = {"Content-Type": "audio/wav"}


def _wav(pcm: bytes, rate: int = 16_000, channels: int = 1, width: int = 2) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(pcm)
    return out.getvalue()


def _big_endian(pcm: bytes) -> bytes:
    return b"".join(pcm[i + 1 : i + 2] + pcm[i : i + 1] for i in range(0, len(pcm), 2))


@pytest.fixture
def fake_stt() -> Iterator[FakeStt]:
    with FakeStt() as stt:
        stt.text = SAID
        yield stt


@pytest.fixture
def client(make_relay: Callable[..., Relay], fake_stt: FakeStt) -> Iterator[httpx.Client]:
    audio = AudioConfig(stt_api="openai", stt_base_url=fake_stt.base_url, stt_api_key="placeholder")
    relay = make_relay(replace(relay_settings(), audio=audio))
    with client_for(relay, timeout=10) as client:
        yield client


def _feed(client: httpx.Client) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = client.get("/feed").json()["messages"]
    return messages


def test_a_posted_wav_is_transcribed_into_the_feed_and_answered_with_its_item(
    client: httpx.Client, fake_stt: FakeStt
) -> None:
    answer = client.post("/audio", content=wav_bytes(speech(1500)), headers=WAV)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body == {"ok": True, "id": body["id"], "text": f"[🎙] {SAID}"}
    stored = _feed(client)[-1]
    assert (stored["id"], stored["text"], stored["source"]) == (body["id"], body["text"], "audio")
    assert fake_stt.last is not None and fake_stt.last.wav_ok


def test_raw_l16_is_read_big_endian_and_the_source_names_the_mark(
    client: httpx.Client, fake_stt: FakeStt
) -> None:
    pcm = speech(1000)
    answer = client.post(
        "/audio?source=system",
        content=_big_endian(pcm),
        headers={"Content-Type": "audio/L16; channels=1; rate=16000"},
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["text"] == f"[🔊] {SAID}"
    assert fake_stt.last is not None and fake_stt.last.audio_ms == 1000


def test_nothing_said_is_an_empty_text_and_stores_nothing(
    client: httpx.Client, fake_stt: FakeStt
) -> None:
    fake_stt.mode = "empty"
    before = _feed(client)
    answer = client.post("/audio", content=wav_bytes(speech(500)), headers=WAV)
    assert answer.json() == {"ok": True, "id": None, "text": "", "dropped": "empty"}
    assert _feed(client) == before


@pytest.mark.parametrize(
    ("headers", "body", "status", "fragment"),
    [
        ({}, wav_bytes(speech(300)), 415, "audio/wav"),
        ({"Content-Type": "audio/mpeg"}, b"ID3\x04", 415, "'audio/mpeg'"),
        ({"Content-Type": "application/json"}, b'{"text": "hi"}', 415, "audio/L16"),
        (WAV, _wav(speech(300)[:4410], rate=44_100), 400, "44100"),
        (WAV, _wav(speech(300), channels=2), 400, "2 channels"),
        (WAV, _wav(bytes(3000), width=1), 400, "8-bit"),
        (WAV, b"RIFF\x00\x00\x00\x00WAVEjunk", 400, "WAV"),
        (WAV, b"not a wav at all", 400, "RIFF"),
        (WAV, wav_bytes(b""), 400, "no samples"),
        (WAV, wav_bytes(bytes(32_000 * 31)), 400, "at most 30 s"),
        (WAV, b"x" * (1024 * 1024 + 1), 413, "larger than"),
        ({"Content-Type": "audio/L16; rate=8000"}, bytes(1600), 400, "rate is 8000"),
        ({"Content-Type": "audio/L16; rate=16000; channels=2"}, bytes(1600), 400, "channels"),
        ({"Content-Type": "audio/L16"}, bytes(1600), 400, "rate=16000"),
        (WAV, b"", 400, "body is empty"),
    ],
    ids=lambda value: value if isinstance(value, (str, int)) and len(str(value)) < 30 else "-",
)
def test_malformed_audio_is_a_clear_4xx_and_changes_nothing(
    client: httpx.Client,
    fake_stt: FakeStt,
    headers: dict[str, str],
    body: bytes,
    status: int,
    fragment: str,
) -> None:
    before = _feed(client)
    assert_error(client.post("/audio", content=body, headers=headers), status, fragment)
    wav = wav_bytes(speech(300))
    assert_error(client.post("/audio?source=both", content=wav, headers=WAV), 400, "source")
    assert _feed(client) == before
    assert fake_stt.calls == 0
    assert client.get("/health").status_code == 200


def test_a_failing_service_is_a_502_then_the_breaker_a_503_with_retry_after(
    client: httpx.Client, fake_stt: FakeStt
) -> None:
    fake_stt.mode = "500"
    for _ in range(3):
        assert_error(
            client.post("/audio", content=wav_bytes(speech(300)), headers=WAV), 502, "speech"
        )
    refused = client.post("/audio", content=wav_bytes(speech(300)), headers=WAV)
    assert_error(refused, 503, "keeps failing")
    assert int(refused.headers["Retry-After"]) >= 1
    assert fake_stt.calls == 3


def test_without_a_key_nothing_is_sent_and_the_answer_says_what_to_set(
    make_relay: Callable[..., Relay], fake_stt: FakeStt
) -> None:
    audio = AudioConfig(stt_api="openai", stt_base_url=fake_stt.base_url)
    relay = make_relay(replace(relay_settings(), audio=audio))
    with client_for(relay) as client:
        answer = client.post("/audio", content=wav_bytes(speech(300)), headers=WAV)
        assert_error(answer, 503, "STT_API_KEY")
        assert "Retry-After" not in answer.headers
    assert fake_stt.calls == 0


LLM_KEY = "sk-or-v1-" + "9f3a" * 16


def _relay_from_environment(make_relay: Callable[..., Relay], **environ: str) -> Relay:
    """A test relay whose speech settings are read from ``environ`` as ``run.py`` reads them."""
    audio = load_settings([], environ, isatty=False).audio
    return make_relay(replace(relay_settings(), audio=audio))


def test_the_llm_key_never_reaches_a_speech_service_of_another_origin(
    make_relay: Callable[..., Relay], fake_stt: FakeStt
) -> None:
    relay = _relay_from_environment(
        make_relay, OPENROUTER_API_KEY=LLM_KEY, STT_API="openai", STT_BASE_URL=fake_stt.base_url
    )
    with client_for(relay) as client:
        answer = client.post("/audio", content=wav_bytes(speech(300)), headers=WAV)
        assert_error(answer, 503, "STT_API_KEY")
        health = client.get("/health").json()
    assert health["audio"]["transcriber"]["state"] == "no_key"
    assert fake_stt.calls == 0
    assert_nowhere(LLM_KEY, answer.text, str(health))


def test_a_speech_service_at_the_llms_origin_gets_the_llm_key(
    make_relay: Callable[..., Relay], fake_stt: FakeStt
) -> None:
    origin = fake_stt.base_url.removesuffix("/v1")
    relay = _relay_from_environment(
        make_relay,
        OPENROUTER_API_KEY=LLM_KEY,
        AGENT_BASE_URL=f"{origin}/llm/v1",
        STT_API="openai",
        STT_BASE_URL=fake_stt.base_url,
    )
    with client_for(relay) as client:
        answer = client.post("/audio", content=wav_bytes(speech(300)), headers=WAV)
        assert answer.status_code == 200, answer.text
    assert fake_stt.last.authorization == f"Bearer {LLM_KEY}"


def test_the_token_guards_it(make_relay: Callable[..., Relay], fake_stt: FakeStt) -> None:
    audio = AudioConfig(stt_api="openai", stt_base_url=fake_stt.base_url, stt_api_key="k")
    relay = make_relay(replace(relay_settings(), audio=audio, token="s3cret"))
    with client_for(relay) as client:
        answer = client.post("/audio", content=wav_bytes(speech(300)), headers=WAV)
        assert_error(answer, 401, "")
        authorized = {**WAV, "Authorization": "Bearer s3cret"}
        assert client.post("/audio", content=wav_bytes(speech(300)), headers=authorized).is_success
    assert fake_stt.calls == 1


@pytest.mark.slow
def test_a_transcript_the_feed_did_not_take_in_time_is_a_503_and_never_stored(
    make_relay: Callable[..., Relay], fake_stt: FakeStt, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A 503 means nothing was stored: a client that retries must not store it twice.
    monkeypatch.setattr(audio_tree, "FEED_TIMEOUT_S", 0.3)
    audio = AudioConfig(stt_api="openai", stt_base_url=fake_stt.base_url, stt_api_key="placeholder")
    relay = make_relay(replace(relay_settings(), faults=True, audio=audio))
    with client_for(relay, timeout=10) as client:
        stuck = {"actor": "feed", "kind": "hang", "seconds": 1.5}
        assert client.post("/debug/fault", json=stuck).json() == {"ok": True}
        answer = client.post("/audio", content=wav_bytes(speech(1500)), headers=WAV)
        assert_error(answer, 503, "the feed did not store the transcript")

        wait_until(lambda: client.post("/feed", json={"text": "back"}).status_code == 200, 10)
        assert [m["text"] for m in _feed(client)] == ["back"]
