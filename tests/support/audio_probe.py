"""What the audio benches watch a relay with: a stand-in speech service that notes when it sent
each answer, a listener that notes when each feed item arrived, and the capture programs.

:class:`TimedStt` is the stand-in speech service (:class:`transport.demo.fake_stt.FakeStt`, a
real HTTP server on a thread) answering each request with a different sentence of common
words, so that the relay's transcript filter keeps them all (it drops a transcript too like
one of the last few), and noting the :func:`time.monotonic` at which it hands each answer
to aiohttp to send. :class:`FeedListener` reads ``GET /feed/stream`` (Server-Sent Events) on
a thread and notes the :func:`time.monotonic` at which each item arrived: both clocks are this
process's, so their difference is the time from answer to feed, socket hops included.
"""

from __future__ import annotations

import random
import shlex
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson

from transport.demo.fake_stt import FakeStt, HeardRequest

WORDS = (
    "the", "relay", "keeps", "what", "user", "hears", "and", "sees", "so", "agent", "can",
    "answer", "with", "a", "short", "line", "about", "meeting", "budget", "plan", "deadline",
    "config", "file", "server", "build", "test", "review", "release", "team", "customer",
    "report", "slide", "chart", "number", "price", "order", "ticket", "branch", "commit",
    "deploy", "window", "screen", "editor", "question", "morning", "afternoon", "tomorrow",
    "yesterday", "quickly", "slowly", "again", "maybe", "really", "always", "never", "almost",
    "every", "other", "first", "second", "third", "last", "next", "open", "close", "start",
    "stop",
)  # fmt: skip
SENTENCE_WORDS = 9
PREFIXES = {"system": "[🔊] ", "mic": "[🎤] "}
"""How a transcript's feed text begins, by source."""


def sentence(n: int) -> str:
    """The ``n``-th answer: :data:`SENTENCE_WORDS` words drawn from :data:`WORDS` by ``n``."""
    rng = random.Random(n)
    return " ".join(rng.choice(WORDS) for _ in range(SENTENCE_WORDS)).capitalize() + "."


def transcript(item: dict[str, Any]) -> str | None:
    """The transcript of a feed item from the audio (its text without the source's mark)."""
    if item.get("source") != "audio":
        return None
    text = str(item.get("text", ""))
    for prefix in PREFIXES.values():
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text


@dataclass
class TimedStt(FakeStt):
    """The stand-in speech service, a different sentence per answer, each answer's send time in
    :attr:`sent` (by text)."""

    sent: dict[str, float] = field(default_factory=dict)

    async def _answer(self, heard: HeardRequest, shape: Any) -> Any:
        self.text = sentence(self.calls)
        text = self.text
        response = await super()._answer(heard, shape)
        self.sent[text] = time.monotonic()  # aiohttp writes it as the handler returns
        return response


@dataclass
class FeedListener:
    """``GET /feed/stream`` read on a thread: each item and the monotonic time it arrived."""

    base_url: str
    items: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    opened: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    error: str = ""

    def __enter__(self) -> FeedListener:
        self._thread = threading.Thread(target=self._run, name="feed-listener", daemon=True)
        self._thread.start()
        if not self.opened.wait(10):
            msg = f"/feed/stream did not open: {self.error or 'no answer'}"
            raise RuntimeError(msg)
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()  # seen at the next line: an item, a keepalive, or the stream's end
        if self._thread is not None:
            self._thread.join(timeout=0.5)  # a daemon: it ends with the relay's stream

    def _run(self) -> None:
        timeout = httpx.Timeout(10.0, read=30.0)
        try:
            with (
                httpx.Client(timeout=timeout) as client,
                client.stream("GET", self.base_url + "/feed/stream") as resp,
            ):
                self.opened.set()
                for line in resp.iter_lines():
                    if self._stop.is_set():
                        return
                    if line.startswith("data:"):
                        item = orjson.loads(line[5:])
                        self.items.append((time.monotonic(), item))
        except (httpx.HTTPError, orjson.JSONDecodeError) as exc:
            self.error = repr(exc)
            self.opened.set()

    def transcripts(self) -> list[tuple[float, str]]:
        """The audio items so far: arrival time and transcript."""
        return [(at, text) for at, item in self.items if (text := transcript(item)) is not None]

    def wait_for(self, check: Callable[[], bool], timeout_s: float) -> bool:
        """Poll ``check`` every 50 ms until it holds or ``timeout_s`` goes by."""
        deadline = time.monotonic() + timeout_s
        while not (done := check()) and time.monotonic() < deadline:
            time.sleep(0.05)
        return done


def pcm_command(
    speed: float,
    seed: int = 1,
    seconds: float | None = None,
    write_ms: int = 20,
    wav: Path | None = None,
) -> str:
    """A ``command:`` source value running :mod:`tests.support.pcm_source` (from the top;
    ``wav``: replaying that recording)."""
    argv = [
        sys.executable,
        "-m",
        "tests.support.pcm_source",
        "--speed",
        f"{speed:g}",
        "--seed",
        str(seed),
    ]
    argv += ["--write-ms", str(write_ms)]
    if seconds is not None:
        argv += ["--seconds", f"{seconds:g}"]
    if wav is not None:
        argv += ["--wav", str(wav)]
    return "command:" + shlex.join(argv)


def stt_settings(base_url: str, key: str = "bench-key") -> dict[str, str]:
    """A relay's speech settings for the OpenAI-shaped service at ``base_url`` (``.../v1``)."""
    return {"STT_API": "openai", "STT_BASE_URL": base_url, "STT_API_KEY": key}
