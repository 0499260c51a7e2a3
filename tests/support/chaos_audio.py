"""The chaos soak's capture program (:mod:`tests.support.chaos`), and a count of capture processes.

It imports nothing but the standard library: the relay starts it again at each restart.

* ``python -m tests.support.chaos_audio --speed 20 --scene speech:1200,silence:1500 --tag T`` writes
  16 kHz mono s16le PCM on stdout, as ffmpeg would: a speech-like sound (a voiced tone under a
  syllable envelope, loud enough for voice detection; no words) and silence, looped, paced at
  ``--speed`` times real time. ``--tag`` does nothing but mark the command line, so a run's
  processes can be told from any other's (:func:`capture_processes`).
* :func:`capture_processes` lists the live processes whose command line holds a marker, of
  a given parent or any (Linux: ``/proc``).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shlex
import sys
import time
from array import array

RATE = 16_000
BYTES_PER_S = RATE * 2
CHUNK_MS = 20


def _speech(ms: int, seed: int) -> bytes:
    """A sentence-like sound: syllables of 150-250 ms with short gaps, a few harmonics."""
    rng = random.Random(seed)
    n = RATE * ms // 1000
    samples: list[float] = []
    while len(samples) < n:
        syllable = int(RATE * rng.uniform(0.15, 0.25))
        f0, start = 140.0 * rng.uniform(0.85, 1.15), len(samples)
        for i in range(syllable):
            t = (start + i) / RATE
            voiced = sum(math.sin(2 * math.pi * f0 * k * t) / k for k in (1, 2, 3))
            samples.append(0.16 * math.sin(math.pi * i / syllable) * voiced)
        samples.extend([0.0] * int(RATE * rng.uniform(0.03, 0.08)))
    return array("h", (round(max(-1.0, min(1.0, s)) * 32767) for s in samples[:n])).tobytes()


def scene_pcm(text: str) -> bytes:
    """``speech:1200,silence:1500`` as PCM."""
    out = bytearray()
    for n, part in enumerate(text.split(",")):
        kind, _, ms = part.partition(":")
        if kind.strip() == "speech":
            out += _speech(int(ms), n + 1)
        else:
            out += bytes(BYTES_PER_S * int(ms) // 1000)
    return bytes(out)


def command(scene: str, speed: float, tag: str) -> str:
    """The ``command:`` source value that runs this program (from the repository's top)."""
    argv = [sys.executable, "-m", "tests.support.chaos_audio", "--speed", str(speed)]
    return "command:" + shlex.join([*argv, "--scene", scene, "--tag", tag])


def capture_processes(parent: int | None, marker: str) -> list[int]:
    """The pids of the live processes (zombies excluded) whose parent is ``parent`` (any, if
    None) and whose command line holds ``marker``; ``[]`` where there is no ``/proc``."""
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                state, ppid = stat.read().rpartition(")")[2].split()[:2]
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                argv = cmdline.read()
        except OSError:  # gone meanwhile
            continue
        if state not in ("Z", "X") and parent in (None, int(ppid)) and marker.encode() in argv:
            found.append(int(entry))
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    """Write the scene, then loop it, until the reader goes away."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.chaos_audio", description=__doc__
    )
    parser.add_argument("--scene", default="speech:1200,silence:1500")
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--tag", default="", help="marks the command line; does nothing else")
    args = parser.parse_args(argv)
    audio, size = scene_pcm(args.scene), BYTES_PER_S * CHUNK_MS // 1000
    out, began, written = sys.stdout.buffer, time.monotonic(), 0
    try:
        while True:
            for start in range(0, len(audio), size):
                out.write(audio[start : start + size])
                out.flush()
                written += size
                time.sleep(max(began + written / BYTES_PER_S / args.speed - time.monotonic(), 0))
    except (BrokenPipeError, KeyboardInterrupt):  # the reader is gone
        return 0


if __name__ == "__main__":
    sys.exit(main())
