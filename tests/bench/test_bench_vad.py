"""The voice-detection bench: its scene is what it says, and it reads a recording."""

from __future__ import annotations

from pathlib import Path

import pytest

from actors.audio.core.wav import wav_bytes
from bench.bench_vad import detect, main, overlaps, scene
from tests.audio.signals import scene as signal_scene


def test_the_scene_is_seeded_and_the_detector_finds_what_it_expects() -> None:
    made = scene(1.0)
    assert made.pcm == scene(1.0).pcm
    assert made.expected == len(made.sentences) + 1  # the monologue is cut once
    found, stats, cpu = detect(made.pcm, 3_200)
    assert len(found) == made.expected
    assert all(any(overlaps(u, *s) for u in found) for s in made.sentences)
    assert stats.too_short == made.blips
    assert cpu > 0


def test_a_recording_is_listed_by_utterance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "two.wav"
    pcm = signal_scene(("silence", 500), ("speech", 2_000), ("silence", 2_000), ("speech", 1_000))
    path.write_bytes(wav_bytes(pcm))
    main(["--wav", str(path), "--runs", "1"])
    out = capsys.readouterr().out
    assert "share of one core" in out
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert [row[0] for row in rows] == ["1", "2"]
    assert float(rows[0][1]) == pytest.approx(0.2, abs=0.1)
