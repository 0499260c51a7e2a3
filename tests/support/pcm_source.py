"""Generated sound for the audio benches: speech-like sentences, room noise and silence as
16 kHz mono signed 16-bit little-endian PCM, the way a capture program writes it.

Run it as a capture program (``AUDIO_SOURCE=command:...``) from the repository root::

    python -m tests.support.pcm_source                    # forever, at real speed
    python -m tests.support.pcm_source --speed 20 --seconds 3600   # an hour of sound in 3 minutes
    python -m tests.support.pcm_source --wav speech.wav   # a recording, over and over

A sentence is 1-6 s of syllables (a voiced tone with harmonics under a sine envelope, made once
from the seed, then reused); a pause between two sentences is 1.5-4 s of faint room noise or,
one time in three, digital silence. It is not words: a recogniser hears nothing in it (with
``--wav``, a 16 kHz mono 16-bit recording is written instead, from its start again at its end,
for a recogniser that must hear words). The
sound is written in pieces every ``--write-ms`` (20) of wall time (``--speed`` times as much
sound each);
after ``--seconds`` of sound the program exits 0, and a closed pipe ends it quietly.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from array import array
from collections.abc import Iterator
from pathlib import Path

from actors.audio.core.utterance import BYTES_PER_MS, SAMPLE_RATE
from actors.audio.core.wav import read_wav

ROOM_LEVEL = 0.0005
"""RMS of the room noise, of full scale."""
SPEECH_LEVEL = 0.1
"""About the RMS of a syllable, of full scale."""
SENTENCE_MS = (1_000, 6_000)
PAUSE_MS = (1_500, 4_000)


def to_pcm(samples: list[float]) -> bytes:
    """Float samples in -1..1 as 16-bit PCM (clipped), in the machine's (little) byte order."""
    return array("h", (max(-32767, min(32767, round(s * 32767))) for s in samples)).tobytes()


class Voice:
    """Syllables made once (a voiced tone with harmonics under a sine envelope), and room
    noise, from which sound of any length is put together cheaply."""

    def __init__(self, rng: random.Random) -> None:
        self.syllables = [self._syllable(rng) for _ in range(16)]
        self.room = to_pcm([rng.gauss(0.0, ROOM_LEVEL) for _ in range(SAMPLE_RATE * 2)])

    @staticmethod
    def _syllable(rng: random.Random) -> bytes:
        n = int(SAMPLE_RATE * rng.uniform(0.15, 0.25))
        f0 = 140.0 * rng.uniform(0.8, 1.3)
        samples = []
        for i in range(n):
            t = i / SAMPLE_RATE
            voiced = sum(math.sin(2 * math.pi * f0 * k * t) / k for k in (1, 2, 3))
            envelope = math.sin(math.pi * i / n)
            samples.append(SPEECH_LEVEL * 1.6 * envelope * voiced + rng.gauss(0.0, ROOM_LEVEL))
        return to_pcm(samples)

    def quiet(self, rng: random.Random, ms: int) -> bytes:
        """``ms`` of room noise (a random stretch of the loop)."""
        size = ms * BYTES_PER_MS
        out = bytearray()
        while len(out) < size:
            start = rng.randrange(0, len(self.room) // 2) * 2
            out += self.room[start : start + size - len(out)]
        return bytes(out)

    def talk(self, rng: random.Random, ms: int) -> bytes:
        """About ``ms`` of syllables with gaps of 30-80 ms, cut to exactly ``ms``."""
        size = ms * BYTES_PER_MS
        out = bytearray()
        while len(out) < size:
            out += rng.choice(self.syllables)
            out += self.quiet(rng, rng.randint(30, 80))
        return bytes(out[:size])


def parts(seed: int = 1) -> Iterator[tuple[str, bytes]]:
    """Endless ``("speech" | "noise" | "silence", pcm)``: a pause, then sentence and pause in
    turn, reproducible from ``seed``."""
    rng = random.Random(seed)
    voice = Voice(rng)
    while True:
        ms = rng.randint(*PAUSE_MS)
        if rng.random() < 1 / 3:
            yield "silence", bytes(ms * BYTES_PER_MS)
        else:
            yield "noise", voice.quiet(rng, ms)
        yield "speech", voice.talk(rng, rng.randint(*SENTENCE_MS))


def sound(seconds: float, seed: int = 1) -> tuple[bytes, int]:
    """The first ``seconds`` of :func:`parts` and the sentences begun in them."""
    size, out, sentences = round(seconds * 1000) * BYTES_PER_MS, bytearray(), 0
    for kind, pcm in parts(seed):
        if len(out) >= size:
            break
        out += pcm
        sentences += kind == "speech"
    return bytes(out[:size]), sentences


def replayed(wav: Path) -> Iterator[tuple[str, bytes]]:
    """The samples of ``wav``, endlessly, in the shape of :func:`parts`."""
    pcm = read_wav(wav.read_bytes())
    if not pcm:
        raise SystemExit(f"{wav} holds no sound")
    while True:
        yield "recording", pcm


def pieces(seed: int, piece_bytes: int, wav: Path | None = None) -> Iterator[bytes]:
    """:func:`parts` (or the replayed ``wav``) cut into pieces of ``piece_bytes``."""
    pending = bytearray()
    for _, pcm in parts(seed) if wav is None else replayed(wav):
        pending += pcm
        while len(pending) >= piece_bytes:
            yield bytes(pending[:piece_bytes])
            del pending[:piece_bytes]


def write(
    seconds: float | None, speed: float, seed: int, every_ms: int = 20, wav: Path | None = None
) -> None:
    """Write the sound (``wav``'s, if given) to stdout at ``speed`` times real time, a piece
    every ``every_ms`` (``seconds``: then stop)."""
    out = sys.stdout.buffer
    piece = max(2, round(every_ms * speed) * BYTES_PER_MS)
    limit = math.inf if seconds is None else seconds * 1000 * BYTES_PER_MS
    began, written = time.monotonic(), 0
    for whole in pieces(seed, piece, wav):
        if written >= limit:
            break
        pcm = whole[: int(min(len(whole), limit - written))]
        out.write(pcm)
        out.flush()
        written += len(pcm)
        due = began + written / (BYTES_PER_MS * 1000) / speed
        time.sleep(max(due - time.monotonic(), 0.0))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--seconds", type=float, help="of sound, then exit")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--write-ms", type=int, default=20, help="wall ms per write")
    parser.add_argument("--wav", type=Path, help="replay this recording instead")
    args = parser.parse_args(argv)
    try:
        write(args.seconds, args.speed, args.seed, args.write_ms, args.wav)
    except BrokenPipeError:  # the reader is gone
        sys.stderr.close()  # nothing more to say, and no traceback at exit
    return 0


if __name__ == "__main__":
    sys.exit(main())
