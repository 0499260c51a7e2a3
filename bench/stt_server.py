"""PocketSphinx behind the OpenAI transcription API, recognising plainly: a real offline speech
service for the audio benchmarks (docs/benchmarks.md says how to point a relay at it)."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
import threading
from typing import Any

from aiohttp import web

from actors.audio.core.wav import read_wav
from bench.runner import flags
from tests.support.harness import HOST, serve_forever

RATE = 16_000
MAX_BODY = 8 * 1024 * 1024


class Recogniser:
    """One PocketSphinx decoder per thread (a decoder is not shared between threads); the
    requests it served and, in order, what it answered to sound (the real-speech check reads
    them). Digital silence, which ``sinain-relay doctor`` sends, is answered ``""``
    without a note: PocketSphinx would hear a word in it."""

    def __init__(self) -> None:
        try:  # a bench-only dependency, named when missing
            self._module: Any = importlib.import_module("pocketsphinx")
        except ImportError:
            sys.exit("bench.stt_server needs PocketSphinx: pip install pocketsphinx")
        self._local = threading.local()
        self.requests = 0
        self.answers: list[str] = []

    def text(self, pcm: bytes) -> str:
        if not pcm.strip(b"\x00"):
            return ""
        decoder = getattr(self._local, "decoder", None)
        if decoder is None:
            decoder = self._local.decoder = self._module.Decoder(samprate=RATE, loglevel="FATAL")
        decoder.start_utt()
        decoder.process_raw(pcm, full_utt=True)
        decoder.end_utt()
        self.answers.append(str(hyp.hypstr) if (hyp := decoder.hyp()) is not None else "")
        return self.answers[-1]


def routes(made: web.Application, recogniser: Recogniser) -> web.Application:
    """``made`` serving ``recogniser``: ``POST /v1/audio/transcriptions`` and ``GET /health``."""

    async def transcribe(request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        if not isinstance(upload, web.FileField):
            return web.json_response({"error": {"message": "no file part"}}, status=400)
        try:
            pcm = read_wav(upload.file.read())  # 16 kHz mono 16-bit only
        except ValueError as exc:
            return web.json_response({"error": {"message": str(exc)}}, status=400)
        recogniser.requests += 1
        text = await asyncio.get_running_loop().run_in_executor(None, recogniser.text, pcm)
        return web.json_response({"text": text})

    async def health(_request: web.Request) -> web.Response:
        return web.json_response({"ok": True, "requests": recogniser.requests})

    made.router.add_post("/v1/audio/transcriptions", transcribe)
    made.router.add_get("/health", health)
    return made


OPTIONS = flags(port=(int, 8910, "port to listen on"))


def run(args: argparse.Namespace) -> int:
    made = routes(web.Application(client_max_size=MAX_BODY), Recogniser())
    banner = f"PocketSphinx speech service on http://{HOST}:{args.port}/v1"
    return serve_forever(made, asyncio.new_event_loop(), args.port, banner)
