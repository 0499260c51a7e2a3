"""A generated audio scene and what voice detection finds in it: seeded sentences, pauses,
blips and one monologue (:func:`scene`), read by the detector in chunks as a capture pipe
delivers them (:func:`detect`). The audio tests check the detector against it;
``python -m bench vad`` measures its cost on it.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from actors.audio.core.utterance import BYTES_PER_MS, Utterance
from actors.audio.core.voice import VoiceDetector, VoiceStats
from config.audio.settings import AudioConfig
from tests.support.pcm_source import Voice

SCENE_SEED = 7
MONOLOGUE_MS = 25_000
T0 = 1_769_901_200_000


@dataclass(frozen=True, slots=True)
class Scene:
    """Generated PCM and where its speech is (ms from its start)."""

    pcm: bytes
    sentences: tuple[tuple[int, int], ...]
    """Each sentence's start and end."""
    expected: int
    """Utterances a detector should make (the monologue is cut once)."""
    blips: int


def scene(minutes: float, seed: int = SCENE_SEED) -> Scene:
    """A seeded scene of about ``minutes``: sentences, pauses, blips and one monologue."""
    rng = random.Random(seed)
    voice = Voice(rng)
    out = bytearray(voice.quiet(rng, 2_000))
    sentences: list[tuple[int, int]] = []
    expected = blips = 0
    total_ms = int(minutes * 60_000)
    monologue_at: int | None = total_ms // 2
    while len(out) < total_ms * BYTES_PER_MS:
        at = len(out) // BYTES_PER_MS
        if monologue_at is not None and at >= monologue_at:
            ms, monologue_at, pieces = MONOLOGUE_MS, None, 2
        elif rng.random() < 0.1:
            ms, pieces = rng.randint(100, 200), 0
        else:
            ms, pieces = rng.randint(1_000, 12_000), 1
        out += voice.talk(rng, ms)
        if pieces:
            sentences.append((at, at + ms))
            expected += pieces
        else:
            blips += 1
        out += voice.quiet(rng, rng.randint(1_500, 6_000))
    return Scene(bytes(out), tuple(sentences), expected, blips)


def detect(
    pcm: bytes, chunk: int, source: str = "system"
) -> tuple[list[Utterance], VoiceStats, float]:
    """The utterances, the detector's counts and its CPU seconds for ``pcm`` in chunks."""
    starts = range(0, len(pcm), chunk)
    chunks = [pcm[i : i + chunk] for i in starts]
    clock = [T0 + min(i + chunk, len(pcm)) // BYTES_PER_MS for i in starts]
    detector = VoiceDetector(source, AudioConfig())  # type: ignore[arg-type]
    found: list[Utterance] = []
    began = time.process_time()
    for piece, now_ms in zip(chunks, clock, strict=True):
        found += detector.feed(piece, now_ms)
    last = detector.flush(clock[-1] if clock else T0)
    cpu = time.process_time() - began
    return [*found, *([last] if last else [])], detector.stats, cpu


def overlaps(utterance: Utterance, start: int, end: int) -> bool:
    """Whether ``utterance`` (on the scene's clock) overlaps ``start``..``end`` ms."""
    begin = utterance.started_ms - T0
    return begin < end and start < begin + utterance.duration_ms
