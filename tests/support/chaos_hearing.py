"""The audio path in the chaos drills (:mod:`tests.support.chaos`): the relay captures two
sources (each a :mod:`tests.support.chaos_audio` program) and transcribes them with the
stand-in speech service, while
the drills crash and hang the transcriber and the captures too.

:class:`Hearing` sets it up and says what happened: per audio actor the faults injected and
the restarts, the transcripts stored per source (in all, and in the quiet end after the last
fault: the audio must flow again), the transcriber's outcomes as its log lines count them, and
the capture processes: sampled through the run (never two for one source), exactly one per
source at the end, and none left once the relay has exited.
"""

from __future__ import annotations

import logging
import os
import random
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from actors.core.shapes import AUDIO_SOURCES, MARKS, AudioSource
from tests.support.chaos_audio import capture_processes, command
from transport.demo.fake_stt import FakeStt, HeardRequest

AUDIO_ACTORS = ("stt", "capture_system", "capture_mic", "audio")
"""The audio actors as ``/health.actors`` names them (``audio``: their supervisor)."""
SCENE = "speech:1200,silence:1500"
SAMPLE_S = 0.25
"""How often the capture processes are counted during the run."""
WORDS = (
    "deploy", "staging", "config", "branch", "review", "merge", "budget", "ticket", "meeting",
    "lunch", "cache", "index", "schema", "query", "latency", "release", "rollback", "invoice",
    "customer", "roadmap", "sprint", "metric", "alert", "dashboard", "backup", "migration",
    "token", "session", "kernel", "widget", "parser", "compiler",
)  # fmt: skip


@dataclass
class VariedStt(FakeStt):
    """The stand-in speech service whose every ``ok`` answer is a sentence of its own (six
    words of :data:`WORDS`), so the relay's duplicate filter keeps each transcript."""

    seed: int = 0
    _sentences: Iterator[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # a request the relay drops (its transcriber crashed) is expected here: no traceback
        logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
        rng = random.Random(self.seed)
        self._sentences = (f"{n} " + " ".join(rng.sample(WORDS, 6)) for n in range(1 << 62))

    async def _answer(self, heard: HeardRequest, shape: Any) -> Any:
        self.text = next(self._sentences)
        return await super()._answer(heard, shape)


class Hearing:
    """The chaos relay's audio: its settings, a sampler of its capture processes, the figures."""

    def __init__(self, stt: VariedStt, speed: float) -> None:
        self.stt, self.speed = stt, speed
        self.tags = {s: f"chaos-audio-{os.getpid()}-{s}" for s in AUDIO_SOURCES}
        """The mark on each source's command line."""
        self.most: Counter[AudioSource] = Counter()
        """The most processes seen at once per source."""
        self.none: Counter[AudioSource] = Counter()
        """Samples with no process for the source (a capture restarting)."""
        self.samples = 0
        self._stop = threading.Event()
        self._sampler: threading.Thread | None = None

    def env(self) -> dict[str, str]:
        """The relay's audio settings: both sources, the stand-in speech service."""
        return {
            "AUDIO_SOURCE": command(SCENE, self.speed, self.tags["system"]),
            "MIC_SOURCE": command(SCENE, self.speed, self.tags["mic"]),
            "STT_BASE_URL": self.stt.base_url,
            "STT_API_KEY": "placeholder",
        }

    def processes(self, parent: int | None) -> dict[AudioSource, list[int]]:
        """Each source's capture processes (children of ``parent``; any parent if None)."""
        return {s: capture_processes(parent, tag) for s, tag in self.tags.items()}

    def start_sampling(self, relay_pid: int) -> None:
        def sample() -> None:
            while not self._stop.wait(SAMPLE_S):
                for source, pids in self.processes(relay_pid).items():
                    self.most[source] = max(self.most[source], len(pids))
                    self.none[source] += not pids
                self.samples += 1

        self._sampler = threading.Thread(target=sample, name="capture-sampler", daemon=True)
        self._sampler.start()

    def stop_sampling(self) -> None:
        self._stop.set()
        if self._sampler is not None:
            self._sampler.join(timeout=5)


def stored(labels: Sequence[str]) -> Counter[AudioSource]:
    """Transcripts among feed texts (each cut to a label), by source (their marks)."""
    found: Counter[AudioSource] = Counter()
    for label in labels:
        for source, mark in MARKS.items():
            found[source] += label.startswith(mark)
    return found


def outcomes(log_lines: Sequence[str]) -> Counter[str]:
    """The transcriber's outcomes (``stored``, ``duplicate``, ``busy``, ``error``, ...) as its
    ``audio.transcript`` and ``audio.refused`` log lines count them."""
    found: Counter[str] = Counter()
    for line in log_lines:
        if '"audio.' not in line:
            continue
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if event.get("event") == "audio.transcript":
            found[str(event.get("outcome"))] += 1
        elif event.get("event") == "audio.refused":
            found[str(event.get("reason"))] += 1
    return found
