"""The real-speech check of ``python3 -m bench audio --targets real``: espeak-ng's sentences,
resampled by sox, replayed by a relay into PocketSphinx served on a thread of the bench (so that
its answers can be read); a PASS or FAIL line per claim, which docs/benchmarks.md lists."""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import httpx
from aiohttp import web

from actors.audio.core.utterance import BYTES_PER_MS
from actors.audio.core.wav import read_wav, wav_bytes
from bench.stt_server import MAX_BODY, Recogniser, routes
from tests.support.audio_probe import FeedListener, stt_settings
from tests.support.harness import data_directory, log_file, relay_env, relay_process
from transport.demo.background import LoopbackServer

SENTENCES = (
    "The meeting moved to Thursday afternoon.",
    "Please send the report to the whole team.",
    "The build failed because a test timed out.",
    "We should review the budget before the release.",
    "Open the config file and change the server port.",
)
GAP_MS = 2_000
SETTLE_S = 4.0
"""How long after the sound's end (and the last transcript) the check waits for more."""
_WORD = re.compile(r"[a-z']+")
VERDICT = ("FAIL", "PASS")
"""A claim's verdict, by whether it held."""


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def missing_tools() -> list[str]:
    """What the check needs and this machine lacks, as install hints."""
    hints = [f"apt-get install -y {t}" for t in ("espeak-ng", "sox") if not shutil.which(t)]
    if importlib.util.find_spec("pocketsphinx") is None:  # a bench-only dependency
        hints.append("pip install pocketsphinx")
    return hints


def spoken(text: str, tmp: Path, n: int) -> bytes:
    """``text`` said by espeak-ng, as 16 kHz mono 16-bit samples (sox resamples)."""
    said, resampled = tmp / f"said-{n}.wav", tmp / f"sentence-{n}.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(said), text], check=True, timeout=60)
    sox = ["sox", str(said), "-r", "16000", "-c", "1", "-b", "16", str(resampled)]
    subprocess.run(sox, check=True, timeout=60)
    return read_wav(resampled.read_bytes())


def recording(tmp: Path) -> tuple[Path, list[bytes]]:
    """The WAV of every sentence with :data:`GAP_MS` of silence around each; the sentences."""
    sentences = [spoken(text, tmp, n) for n, text in enumerate(SENTENCES)]
    gap = bytes(GAP_MS * BYTES_PER_MS)
    path = tmp / "speech.wav"
    path.write_bytes(wav_bytes(gap + b"".join(s + gap for s in sentences)))
    return path, sentences


@dataclass
class Serving(LoopbackServer):
    """:mod:`bench.stt_server` on a loopback port, on a thread of the bench (its answers read)."""

    recogniser: Recogniser = field(default_factory=Recogniser)
    name: ClassVar[str] = "pocketsphinx"
    max_body: ClassVar[int] = MAX_BODY

    def routes(self, app: web.Application) -> None:
        routes(app, self.recogniser)


def run(_args: argparse.Namespace) -> None:
    print("\n== real speech: espeak-ng sentences, 2 s silences, PocketSphinx behind the relay")
    if hints := missing_tools():
        print(f"  not run: {'; '.join(hints)}")
        return
    with tempfile.TemporaryDirectory(prefix="relay-bench-speech-") as tmp:
        wav, sentences = recording(Path(tmp))
        seconds = (len(wav.read_bytes()) - 44) / BYTES_PER_MS / 1000
        direct = list(map(Recogniser().text, sentences))
        print(f"  {len(SENTENCES)} sentences, {seconds:.1f} s of sound; PocketSphinx alone heard:")
        for said, heard in zip(SENTENCES, direct, strict=True):
            print(f"    {said!r} -> {heard!r}")
        check(direct, *hear(wav, seconds))


def hear(wav: Path, seconds: float) -> tuple[list[str], list[str], list[str]]:
    """The relay replaying ``wav`` into PocketSphinx: what PocketSphinx answered, the
    transcripts on the relay's feed and the audio texts of its agent's context."""
    with (
        data_directory(None, "relay-bench-speech-") as path,
        log_file("audio-speech") as log,
        Serving() as stt,
    ):
        env = relay_env(AUDIO_SOURCE=f"file:{wav}", **stt_settings(stt.base_url, "unused"))
        with relay_process(path, log, env) as relay, FeedListener(relay.base_url) as listener:
            began = time.monotonic()
            last, quiet_since = 0, began
            while time.monotonic() < began + seconds + 30:
                count = len(listener.transcripts())
                if count != last:
                    last, quiet_since = count, time.monotonic()
                elif time.monotonic() > max(began + seconds, quiet_since) + SETTLE_S:
                    break
                time.sleep(0.1)
            feed = [text for _, text in listener.transcripts()]
            body = httpx.get(relay.base_url + "/agent/context", timeout=10).json()
            context = [str(a["text"]) for a in body["context"].get("audio", [])]
    return stt.recogniser.answers, feed, context


def found(wanted: Sequence[str], texts: Sequence[str]) -> tuple[int, list[str]]:
    """How many of ``wanted`` occur among the words of ``texts``, and the ones that do not."""
    have = {w for text in texts for w in words(text)}
    lost = [w for w in wanted if w not in have]
    return len(wanted) - len(lost), lost


def check(direct: list[str], answers: list[str], feed: list[str], context: list[str]) -> None:
    """Print a PASS or FAIL line per claim of the check: a word lost on the way fails it.

    >>> answers = ["the report is late", "open the file", "we ship friday", "ok then", "see you"]
    >>> check(answers, answers, [*answers[:2], "we ship", *answers[3:]], answers)
    ... # doctest: +ELLIPSIS
      PocketSphinx answered the relay (5), on the feed (5):
    ...
      PASS one utterance per sentence: ...
    ...
      FAIL words PocketSphinx answered found in GET /feed: 13 of 14 (missing: friday)
      PASS words PocketSphinx answered found in GET /agent/context audio: 14 of 14...
    """
    n, requests = len(SENTENCES), len(answers)
    print(f"  PocketSphinx answered the relay ({requests}), on the feed ({len(feed)}):")
    for said, shown in itertools.zip_longest(answers, feed, fillvalue="-"):
        print(f"    {said!r} -> {shown!r}")
    print(
        f"  {VERDICT[requests == n]} one utterance per sentence: {requests} sent to the speech "
        f"service, {len(feed)} transcripts on the feed, for {n} sentences"
    )
    heard = {w for d in direct for w in words(d)}
    stray = [t for t in answers if not set(words(t)) & heard]
    print(
        f"  {VERDICT[not stray and requests <= n]} nothing from the silences: {len(stray)} "
        f"answers share no word with what PocketSphinx heard in the sentences alone, "
        f"{max(requests - n, 0)} utterances beyond one per sentence"
    )
    wanted = [w for a in answers for w in words(a)]
    for name, texts in (("GET /feed", feed), ("GET /agent/context audio", context)):
        got, lost = found(wanted, texts)
        print(
            f"  {VERDICT[not lost and bool(wanted)]} words PocketSphinx answered found in {name}: "
            f"{got} of {len(wanted)}" + (f" (missing: {' '.join(lost)})" if lost else "")
        )
    alone = [w for d in direct for w in words(d)]
    got, _ = found(alone, feed)
    print(
        f"  (for comparison: {got} of {len(alone)} words PocketSphinx heard in the sentences "
        "alone are on the feed; it adapts from one utterance to the next)"
    )
