"""Speech recognised on this machine (``python3 -m bench audio --targets local``): the relay's
own recogniser (:class:`~actors.audio.local_stt.LocalRecogniser`, its worker process held to
one core) against PocketSphinx on espeak-ng's sentences (word error rate, real-time factor,
CPU per hour of speech), then the worker over ``--speech`` minutes of speech: its resident
memory and CPU as the speech goes on. docs/benchmarks.md says how to read them."""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from actors.audio.core.stt import SttRequest
from actors.audio.core.utterance import BYTES_PER_MS
from actors.audio.local_stt import BUNDLED_MODEL, LocalRecogniser
from bench.audio_speech import SENTENCES, VERDICT, missing_tools, spoken, words
from bench.figures import Table
from bench.stats import median, slope_per_hour
from bench.stt_server import Recogniser
from config.audio.stt_choice import LOCAL_STT_INSTALL, local_stt_installed
from tests.support.meter import cpu_s, rss_mb

MORE_SENTENCES = (
    "Can you share your screen so I can see the error?",
    "The customer asked for a refund on Monday.",
    "Let us schedule a call with the design team next week.",
    "I pushed the fix and the pipeline is green again.",
    "Remember to update the documentation before Friday.",
)
WER_TARGET, RTF_TARGET = 0.20, 0.5
FLAT_MB = 5.0
"""The most the worker's memory may move after the warm-up and still be called flat."""
TIMEOUT_S = 60.0
GAP = bytes(300 * BYTES_PER_MS)


def word_errors(said: str, heard: str) -> int:
    """The words to substitute, insert or delete to make ``said`` of ``heard`` (a word-level
    edit distance, for the word error rate).

    >>> word_errors("The build failed.", "the wheel failed today")
    2
    >>> word_errors("open the file", ""), word_errors("", "uh")
    (3, 1)
    """
    want, got = words(said), words(heard)
    row = list(range(len(got) + 1))
    for i, w in enumerate(want, 1):
        prev, row[0] = row[0], i
        for j, g in enumerate(got, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (w != g))
    return row[-1]


@dataclass
class Score:
    """What one recogniser made of the sentences."""

    name: str
    errors: int = 0
    words: int = 0
    audio_s: float = 0.0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    rtf: list[float] = field(default_factory=list)

    def add(self, said: str, heard: str, audio_s: float, wall_s: float, cpu: float) -> None:
        self.errors += word_errors(said, heard)
        self.words += len(words(said))
        self.audio_s += audio_s
        self.wall_s += wall_s
        self.cpu_s += cpu
        self.rtf.append(wall_s / audio_s)

    @property
    def wer(self) -> float:
        return self.errors / self.words if self.words else math.nan


def seconds(pcm: bytes) -> float:
    return len(pcm) / BYTES_PER_MS / 1000


def score(name: str, hear: Callable[[bytes], str], cpu: Callable[[], float],
          sentences: Sequence[bytes]) -> tuple[Score, list[str]]:  # fmt: skip
    """``hear`` timed on each sentence (its wall time, and ``cpu``'s growth), and its texts."""
    made, heard = Score(name), []
    for said, pcm in zip((*SENTENCES, *MORE_SENTENCES), sentences, strict=True):
        began, used = time.perf_counter(), cpu()
        heard.append(hear(pcm))
        made.add(said, heard[-1], seconds(pcm), time.perf_counter() - began, cpu() - used)
    return made, heard


def worker(recogniser: LocalRecogniser, pcm: bytes) -> int:
    """The worker's pid, started (its model loaded) by decoding ``pcm``, every thread of it
    held to one core."""
    recogniser.send(SttRequest(url="", pcm=pcm), TIMEOUT_S).result(TIMEOUT_S * 4)
    if (pid := recogniser.stats().pid) is None:
        raise RuntimeError("the local recogniser's worker is not running")
    if not hasattr(os, "sched_setaffinity"):  # Linux only
        print("  (the worker is not held to one core here: it runs one decoding thread)")
        return pid
    for thread in os.listdir(f"/proc/{pid}/task"):
        os.sched_setaffinity(int(thread), {min(os.sched_getaffinity(0))})
    return pid


def run(args: argparse.Namespace) -> None:
    print(f"\n== local: {BUNDLED_MODEL} in the relay's worker (one core) against PocketSphinx")
    hints = missing_tools() + ([] if local_stt_installed() else [LOCAL_STT_INSTALL])
    if hints:
        print(f"  not run: {'; '.join(hints)}")
        return
    recogniser = LocalRecogniser(BUNDLED_MODEL, "en", name="bench-local")
    try:
        with tempfile.TemporaryDirectory(prefix="relay-bench-local-") as tmp:
            texts = (*SENTENCES, *MORE_SENTENCES)
            sentences = [spoken(text, Path(tmp), n) for n, text in enumerate(texts)]
        pid = worker(recogniser, sentences[0])

        def hear(pcm: bytes) -> str:
            return recogniser.send(SttRequest(url="", pcm=pcm), TIMEOUT_S).result(TIMEOUT_S * 2)

        local, heard = score(BUNDLED_MODEL, hear, lambda: cpu_s(pid), sentences)
        sphinx, plain = score("PocketSphinx", Recogniser().text, time.process_time, sentences)
        print_scores(texts, heard, plain, (local, sphinx))
        over_time(args, hear, pid, sentences)
    finally:
        recogniser.close()


def print_scores(texts: Sequence[str], heard: list[str], plain: list[str],
                 scores: Sequence[Score]) -> None:  # fmt: skip
    print(f"  {len(texts)} sentences, {scores[0].audio_s:.1f} s of speech; said / heard by each:")
    for said, one, other in zip(texts, heard, plain, strict=True):
        print(f"    {said!r}\n      {one!r}\n      {other!r}")
    table = Table(
        "recogniser <13|words >5|errors >6|WER % >6.1f|RTF median >10.3f|RTF all >7.3f|"
        "CPU s per hour of speech >24.0f",
        indent="  ",
    )
    table.head(blank=True)
    for s in scores:
        cpu_hour = s.cpu_s / s.audio_s * 3600
        table.row(
            s.name, s.words, s.errors, s.wer * 100, median(s.rtf), s.wall_s / s.audio_s, cpu_hour
        )
    local = scores[0]
    print(
        f"  {VERDICT[local.wer <= WER_TARGET]} {local.name} word error rate {local.wer:.1%} "
        f"(target <= {WER_TARGET:.0%})"
    )
    rtf = local.wall_s / local.audio_s
    print(
        f"  {VERDICT[rtf <= RTF_TARGET]} {local.name} real-time factor {rtf:.3f} on one core "
        f"(target <= {RTF_TARGET:g})"
    )


def over_time(args: argparse.Namespace, hear: Callable[[bytes], str], pid: int,
              sentences: Sequence[bytes]) -> None:  # fmt: skip
    """Two sentences an utterance, round and round, for ``--speech`` minutes of speech; the
    worker's RSS and CPU every ``--every`` minutes of it."""
    print(f"\n  the worker over {args.speech:g} minutes of speech (two sentences an utterance):")
    table = Table(
        "speech min >10.1f|wall s >7.0f|RSS MB >7.1f|CPU s >7.1f|CPU s per hour >14.0f|"
        "utterances >10",
        indent="  ",
    )
    table.head(blank=True)
    began, cpu, spoken_s, n = time.monotonic(), cpu_s(pid), 0.0, 0
    points: list[tuple[float, float]] = []
    while spoken_s < args.speech * 60:
        pcm = sentences[n % len(sentences)] + GAP + sentences[(n + 1) % len(sentences)]
        hear(pcm)
        spoken_s, n = spoken_s + seconds(pcm), n + 1
        if spoken_s >= (len(points) + 1) * args.every * 60 or spoken_s >= args.speech * 60:
            points.append((spoken_s / 60, rss_mb(pid)))
            used = cpu_s(pid) - cpu
            wall = time.monotonic() - began
            table.row(spoken_s / 60, wall, points[-1][1], used, used / spoken_s * 3600, n)
    kept = [p for p in points if p[0] >= args.warmup] or points[-1:]
    low, high = min(p[1] for p in kept), max(p[1] for p in kept)
    print(
        f"  {VERDICT[high - low <= FLAT_MB]} the worker's RSS after {args.warmup:g} minutes of "
        f"speech between {low:.1f} and {high:.1f} MB (flat: within {FLAT_MB:g} MB), slope "
        f"{slope_per_hour(kept):+.2f} MB per hour of speech ({len(kept)} readings)"
    )
