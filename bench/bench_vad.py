"""Voice detection's CPU for one 16 kHz stream (``actors/audio/core/voice.py``), fed in chunks as
a capture pipe delivers them, and the utterances it finds in a generated scene or a ``--wav``
recording. docs/benchmarks.md describes the scene."""

from __future__ import annotations

import argparse
from pathlib import Path

from actors.audio.core.utterance import Utterance
from actors.audio.core.voice import FRAME_MS, VoiceStats
from actors.audio.core.wav import read_wav
from bench.figures import Table, at_least
from bench.runner import arg
from bench.stats import median
from tests.support.voice_scene import T0, detect, overlaps, scene


def cost(pcm: bytes, chunk: int, runs: int, source: str) -> tuple[list[Utterance], VoiceStats]:
    """Print the CPU figures of ``runs`` runs over ``pcm``; the last run's utterances, counts."""
    done = [detect(pcm, chunk, source) for _ in range(runs)]
    (found, stats, _), cpus = done[-1], [cpu for _, _, cpu in done]
    seconds, cpu = stats.seconds, median(cpus)
    frames = max(stats.frames, 1)
    print(f"audio: {seconds:.0f} s, {stats.frames} frames of {FRAME_MS} ms, chunks of {chunk} B")
    print(f"CPU: {cpu * 1000:.1f} ms (median of {runs}; runs {min(cpus) * 1000:.1f} to ", end="")
    print(f"{max(cpus) * 1000:.1f} ms), {cpu / frames * 1e6:.1f} us a frame")
    print(f"share of one core: {cpu / seconds * 100:.3f} %, {seconds / cpu:.0f} x real time")
    return found, stats


def on_scene(minutes: float, chunk: int, runs: int, source: str) -> None:
    made = scene(minutes)
    found, stats = cost(made.pcm, chunk, runs, source)
    heard = sum(any(overlaps(u, *s) for u in found) for s in made.sentences)
    stray = sum(not any(overlaps(u, *s) for s in made.sentences) for u in found)
    print(f"speech frames: {stats.speech_share * 100:.1f} %")
    table = Table("what <34|found >6|expected >9")
    table.head(blank=True)
    table.row("utterances", len(found), made.expected)
    table.row("sentences heard", heard, len(made.sentences))
    table.row("utterances over no speech", stray, 0)
    table.row("blips dropped as too short", stats.too_short, made.blips)
    table.row("quiet utterances", sum(u.quiet for u in found), 0)


def on_wav(path: Path, chunk: int, runs: int, source: str) -> None:
    found, stats = cost(read_wav(path.read_bytes()), chunk, runs, source)
    print(f"speech frames: {stats.speech_share * 100:.1f} %, dropped as too short: ", end="")
    print(stats.too_short)
    table = Table("utterance >9|start s >8.2f|end s >8.2f|length s >8.2f|quiet >5")
    table.head(blank=True)
    for n, u in enumerate(found, 1):
        start = (u.started_ms - T0) / 1000
        table.row(n, start, start + u.duration_ms / 1000, u.duration_ms / 1000, str(u.quiet))


OPTIONS = [
    arg("--quick", action="store_true", help="2 minutes of sound, 3 runs"),
    arg("--minutes", type=at_least(0.5, float), default=10.0),
    arg("--runs", type=at_least(1), default=5),
    arg("--chunk", type=at_least(1), default=3_200, help="bytes per feed"),
    arg("--source", choices=("system", "mic"), default="system"),
    arg("--wav", type=Path, help="a 16 kHz mono 16-bit WAV recording"),
]


def run(args: argparse.Namespace) -> None:
    runs = 3 if args.quick else args.runs
    if args.wav is not None:
        on_wav(args.wav, args.chunk, runs, args.source)
    else:
        on_scene(2.0 if args.quick else args.minutes, args.chunk, runs, args.source)
