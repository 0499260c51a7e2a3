"""Generated PCM for the audio tests: speech-like sound, silence and noise, as the relay reads
it (16 kHz mono signed 16-bit little-endian), reproducible from a seed.

"Speech" here is a voiced tone with a few harmonics under a syllable envelope (about four
syllables a second, short gaps between them, as in a spoken sentence): enough energy over the
noise floor for voice detection, with the dips a real sentence has. It is not words: a
recogniser hears nothing in it; real speech is for the benchmarks.
"""

from __future__ import annotations

import math
import random
from array import array

from actors.audio.core.utterance import SAMPLE_RATE

FULL_SCALE = 32767


def _pcm(samples: list[float]) -> bytes:
    """Float samples in -1..1 as 16-bit little-endian PCM (clipped)."""
    out = array("h", (max(-FULL_SCALE, min(FULL_SCALE, round(s * FULL_SCALE))) for s in samples))
    return out.tobytes()  # little-endian on every machine these tests run on


def silence(ms: int) -> bytes:
    """Digital silence."""
    return bytes(SAMPLE_RATE * 2 * ms // 1000)


def noise(ms: int, level: float = 0.0005, seed: int = 1) -> bytes:
    """White noise of RMS ``level`` (of full scale): a quiet room, a fan."""
    rng = random.Random(seed)
    n = SAMPLE_RATE * ms // 1000
    return _pcm([rng.gauss(0.0, level) for _ in range(n)])


def speech(ms: int, level: float = 0.1, pitch_hz: float = 140.0, seed: int = 1) -> bytes:
    """A sentence-like sound of ``ms``: syllables of 150-250 ms with gaps of 30-80 ms,
    a voiced tone of RMS about ``level`` with a little noise under it."""
    rng = random.Random(seed)
    n = SAMPLE_RATE * ms // 1000
    samples: list[float] = []
    while len(samples) < n:
        syllable = int(SAMPLE_RATE * rng.uniform(0.15, 0.25))
        gap = int(SAMPLE_RATE * rng.uniform(0.03, 0.08))
        f0 = pitch_hz * rng.uniform(0.85, 1.15)
        start = len(samples)
        for i in range(syllable):
            t = (start + i) / SAMPLE_RATE
            envelope = math.sin(math.pi * i / syllable)
            voiced = sum(math.sin(2 * math.pi * f0 * k * t) / k for k in (1, 2, 3))
            samples.append(level * 1.6 * envelope * voiced + rng.gauss(0.0, level * 0.02))
        samples.extend(rng.gauss(0.0, level * 0.01) for _ in range(gap))
    return _pcm(samples[:n])


def scene(*parts: tuple[str, int]) -> bytes:
    """Parts in order, each ``("speech" | "silence" | "noise", ms)``, seeded by position."""
    out = bytearray()
    for n, (kind, ms) in enumerate(parts):
        if kind == "speech":
            out += speech(ms, seed=n + 1)
        elif kind == "noise":
            out += noise(ms, seed=n + 1)
        else:
            out += silence(ms)
    return bytes(out)
