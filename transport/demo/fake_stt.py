"""A stand-in speech service, with fault modes: for tests, drills and a first run without a key.

It serves both APIs the transcriber speaks, on loopback::

    python3 -m transport.demo.fake_stt --port 18910
    STT_API=openai STT_BASE_URL=http://127.0.0.1:18910/v1 ...   # multipart transcriptions
    STT_API=chat   STT_BASE_URL=http://127.0.0.1:18910/v1 ...   # input_audio chat completions
    curl -X POST localhost:18910/_mode -d '{"mode": "hang"}'

It is a real HTTP server (aiohttp on its own thread), so the transcriber runs exactly as in
production: sockets, multipart or JSON bodies, timeouts, status codes. It recognises nothing:
its transcript is :attr:`FakeStt.text`, or, when that is empty, a sentence that says how
much audio arrived. Modes:

``ok``        a transcript (``{"text": ...}`` or a chat completion, as asked)
``empty``     an empty transcript, as over silence
``invented``  ``Thank you.``, what speech models invent over silence
``slow``      waits ``delay_s`` seconds, then answers like ``ok``
``hang``      never answers (until the server stops)
``500``       HTTP 500 with an error body
``429``       HTTP 429 with ``Retry-After`` (``retry_after``, 1 s by default)
``401``       HTTP 401 whose message quotes the key it refused, as some servers do
``nonjson``   HTTP 200 with a body that is not JSON

Every request is counted (:attr:`FakeStt.calls`) and the last one's fields are kept
(:attr:`FakeStt.last`): the API, model, language, content type, the WAV that arrived and its
length, so tests can check what was sent. Switch modes from a test with
``fake.mode = "hang"`` or over HTTP with ``POST /_mode {"mode": "hang", "delay_s": 2}``;
``GET /_mode`` shows the mode and the number of requests so far.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import sys
from dataclasses import dataclass, field
from typing import Any, ClassVar

import orjson
from aiohttp import web

from config.logs import configure_logging
from transport.demo.background import ModeServer

__all__ = ["INVENTED", "MODES", "FakeStt", "HeardRequest", "main"]


MODES = ("ok", "empty", "invented", "slow", "hang", "500", "429", "401", "nonjson")
INVENTED = "Thank you."
"""The transcript of mode ``invented``."""
WAV_HEADER_BYTES = 44
PCM_BYTES_PER_MS = 32
"""16 kHz mono 16-bit PCM: the format the relay sends its speech service."""
MAX_BODY_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class HeardRequest:
    """What one request carried."""

    api: str
    """``openai`` (multipart transcriptions) or ``chat`` (chat completions)."""
    content_type: str
    authorization: str
    fields: dict[str, Any]
    """The form fields (``openai``) or the JSON body without the audio (``chat``)."""
    wav: bytes
    """The audio file as it arrived (decoded from base64 for ``chat``); empty if none."""
    wav_type: str = ""
    """The file part's content type (``openai``) or the ``input_audio`` format (``chat``)."""
    wav_filename: str = ""

    @property
    def wav_ok(self) -> bool:
        """The audio is a RIFF/WAVE file with a 44-byte header."""
        wav = self.wav
        return len(wav) >= WAV_HEADER_BYTES and wav[:4] == b"RIFF" and wav[8:12] == b"WAVE"

    @property
    def audio_ms(self) -> int:
        """The length of the audio after the header, in milliseconds of 16 kHz mono PCM."""
        return max(len(self.wav) - WAV_HEADER_BYTES, 0) // PCM_BYTES_PER_MS


@dataclass
class FakeStt(ModeServer):
    """Start with ``with FakeStt() as stt:``; point the transcriber at ``stt.base_url``."""

    text: str = ""
    """The transcript of ``ok``; empty: ``Heard N ms of audio.``"""
    retry_after: str = "1"
    requests: list[HeardRequest] = field(default_factory=list)
    name: ClassVar[str] = "fake-stt"
    modes: ClassVar[tuple[str, ...]] = MODES
    max_body: ClassVar[int] = MAX_BODY_BYTES

    @property
    def calls(self) -> int:
        """Requests received so far, of either API."""
        return len(self.requests)

    @property
    def last(self) -> HeardRequest:
        """The latest request (a test asserts on it)."""
        return self.requests[-1]

    async def _transcriptions(self, request: web.Request) -> web.StreamResponse:
        form = await request.post()
        upload = form.get("file")
        wav, wav_type, filename = b"", "", ""
        if isinstance(upload, web.FileField):
            wav, wav_type, filename = upload.file.read(), upload.content_type, upload.filename
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        heard = HeardRequest(
            "openai", request.content_type, request.headers.get("Authorization", ""), fields,
            wav, wav_type, filename,
        )  # fmt: skip
        return await self._answer(heard, lambda text: {"text": text})

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = {}
        wav, wav_type = _audio_part(body)
        heard = HeardRequest(
            "chat", request.content_type, request.headers.get("Authorization", ""),
            _without_audio(body), wav, wav_type,
        )  # fmt: skip
        return await self._answer(heard, _completion)

    async def _answer(self, heard: HeardRequest, shape: Any) -> web.StreamResponse:
        self.requests.append(heard)
        mode = self.mode
        if mode == "hang":
            assert self._stopping is not None
            await self._stopping.wait()
            return web.Response(status=503)
        if mode == "slow":
            await asyncio.sleep(self.delay_s)
        if mode == "500":
            return web.json_response({"error": {"message": "model crashed"}}, status=500)
        if mode == "429":
            return web.json_response(
                {"error": {"message": "rate limited"}},
                status=429,
                headers={"Retry-After": self.retry_after},
            )
        if mode == "401":
            refused = heard.authorization.removeprefix("Bearer ")
            message = f"Incorrect API key provided: {refused}"
            return web.json_response({"error": {"message": message}}, status=401)
        if mode == "nonjson":
            return web.Response(text="<html>Bad gateway</html>", content_type="text/html")
        text = self.text or f"Heard {heard.audio_ms} ms of audio."
        if mode == "empty":
            text = ""
        elif mode == "invented":
            text = INVENTED
        return web.json_response(shape(text))

    def routes(self, app: web.Application) -> None:
        """Both APIs, and the mode switch."""
        app.router.add_post("/v1/audio/transcriptions", self._transcriptions)
        app.router.add_post("/v1/chat/completions", self._completions)
        self.mode_routes(app)


def _audio_part(body: Any) -> tuple[bytes, str]:
    """The decoded ``input_audio`` of a chat body's first message, and its format."""
    try:
        parts = body["messages"][0]["content"]
        audio = next(p["input_audio"] for p in parts if p.get("type") == "input_audio")
        return base64.b64decode(audio["data"], validate=True), str(audio.get("format", ""))
    except (KeyError, IndexError, TypeError, AttributeError, StopIteration, binascii.Error):
        return b"", ""


def _without_audio(body: Any) -> dict[str, Any]:
    """A chat body with the base64 audio replaced by its length (for assertions and logs)."""
    if not isinstance(body, dict):
        return {}
    copy = orjson.loads(orjson.dumps(body))
    for message in copy.get("messages") or []:
        for part in message.get("content") or [] if isinstance(message, dict) else []:
            if isinstance(part, dict) and isinstance(part.get("input_audio"), dict):
                data = part["input_audio"].get("data")
                part["input_audio"]["data"] = f"<{len(data) if isinstance(data, str) else 0} chars>"
    return copy  # type: ignore[no-any-return]


def _completion(text: str) -> dict[str, Any]:
    return {
        "id": "fake-stt",
        "object": "chat.completion",
        "model": "fake/stt",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
    }


def main(argv: list[str] | None = None) -> int:
    """Serve until SIGINT or SIGTERM."""
    parser = argparse.ArgumentParser(
        prog="python3 -m transport.demo.fake_stt",
        description="A stand-in speech service with fault modes (both the multipart "
        "transcriptions API and input_audio chat completions). Point the relay at it with "
        "STT_BASE_URL=http://HOST:PORT/v1.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=18910)
    parser.add_argument("--mode", choices=MODES, default="ok")
    parser.add_argument("--text", default="", help="the transcript of mode ok")
    parser.add_argument("--delay-s", type=float, default=1.0, help="the delay of mode slow")
    args = parser.parse_args(argv)
    configure_logging("console" if sys.stderr.isatty() else "json", "info")
    fake = FakeStt(
        mode=args.mode, text=args.text, delay_s=args.delay_s, port=args.port, host=args.host
    )
    return fake.serve_until_signalled("fake_stt.listening", mode=fake.mode, modes=list(MODES))


if __name__ == "__main__":
    sys.exit(main())
