"""A capture program for the tests: generated PCM (:mod:`tests.audio.signals`) on stdout,
16 kHz mono s16le as ffmpeg or ``sck-capture`` would write it, paced at ``--speed`` times real
time, with the ways a real capture program fails.

Run it as ``python -m tests.audio.pcm_program`` from the repository's top, or by its path::

    pcm_program.py --scene speech:800,silence:900 --speed 10 --then exit
    pcm_program.py --stderr "device busy" --exit-after 0.2 --code 3
    pcm_program.py --crash-after 0.1        # killed by SIGKILL, as by a crash
    pcm_program.py --hang --ignore-term     # no output, and SIGTERM is not enough

After the scene it goes on with silence (``--then silence``, the default) or exits 0
(``--then exit``). ``--exit-after`` and ``--crash-after`` count seconds of audio written.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

if __package__ in (None, ""):  # run by path: make ``tests`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.audio.signals import scene, silence

BYTES_PER_S = 32_000
CHUNK_MS = 20


def command(*args: str, speed: float = 20.0) -> str:
    """The ``command:`` source value that runs this program with ``args`` at ``speed`` times
    real time (run it from the repository's top, where ``-m tests.audio.pcm_program`` is
    found)."""
    argv = [sys.executable, "-m", "tests.audio.pcm_program", "--speed", str(speed), *args]
    return "command:" + shlex.join(argv)


def parse_scene(text: str) -> list[tuple[str, int]]:
    """``speech:800,silence:900`` as scene parts."""
    parts = []
    for item in text.split(","):
        kind, _, ms = item.partition(":")
        parts.append((kind.strip(), int(ms)))
    return parts


def chunks(args: argparse.Namespace) -> Iterator[bytes]:
    """The audio to write, in chunks of :data:`CHUNK_MS`."""
    size = BYTES_PER_S * CHUNK_MS // 1000
    audio = scene(*parse_scene(args.scene)) if args.scene else b""
    for _ in range(args.repeat):
        for start in range(0, len(audio), size):
            yield audio[start : start + size]
    if args.then == "exit":
        return
    quiet = silence(CHUNK_MS)
    while True:
        yield quiet


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", default="speech:1200,silence:1000")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--then", choices=("silence", "exit"), default="silence")
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--stderr", default="", help="a line written to stderr at start")
    parser.add_argument("--exit-after", type=float, help="seconds of audio, then exit")
    parser.add_argument("--code", type=int, default=0, help="the exit code of --exit-after")
    parser.add_argument("--crash-after", type=float, help="seconds of audio, then SIGKILL")
    parser.add_argument("--hang", action="store_true", help="write no audio, never exit")
    parser.add_argument("--ignore-term", action="store_true", help="ignore SIGTERM")
    args = parser.parse_args(argv)
    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.stderr:
        sys.stderr.write(args.stderr + "\n")
        sys.stderr.flush()
    if args.hang:
        while True:
            time.sleep(3600)
    out = sys.stdout.buffer
    began, written = time.monotonic(), 0
    try:
        for chunk in chunks(args):
            seconds = written / BYTES_PER_S
            if args.crash_after is not None and seconds >= args.crash_after:
                os.kill(os.getpid(), signal.SIGKILL)
            if args.exit_after is not None and seconds >= args.exit_after:
                out.flush()
                return int(args.code)
            out.write(chunk)
            out.flush()
            written += len(chunk)
            time.sleep(max(began + written / BYTES_PER_S / args.speed - time.monotonic(), 0.0))
    except BrokenPipeError:  # the reader is gone
        return 0
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
