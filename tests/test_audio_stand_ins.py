"""The audio stand-ins: the capture program writes what it says, each sentence of its sound is
one utterance, the stand-in speech service's answers all pass the transcript filter, and the
generated scene is seeded and heard as it says."""

from __future__ import annotations

import subprocess
import sys
from array import array
from pathlib import Path

import pytest

from actors.audio.core.transcript_filter import Filters
from actors.audio.core.utterance import BYTES_PER_MS
from actors.audio.core.wav import wav_bytes
from tests.support.audio_probe import sentence, transcript
from tests.support.harness import ROOT
from tests.support.pcm_source import sound
from tests.support.voice_scene import detect, overlaps, scene

FRAME = 20 * BYTES_PER_MS


def rms(pcm: bytes) -> float:
    samples = array("h", pcm)
    return float((sum(s * s for s in samples) / max(len(samples), 1)) ** 0.5 / 32767)


def program(*args: str) -> bytes:
    command = [sys.executable, "-m", "tests.support.pcm_source", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, check=True, timeout=30).stdout


@pytest.mark.slow
def test_the_capture_program_writes_the_seconds_asked_of_its_seeded_sound() -> None:
    out = program("--speed", "200", "--seconds", "8", "--seed", "3")
    assert len(out) == 8_000 * BYTES_PER_MS
    assert out == sound(8, seed=3)[0]
    assert out != sound(8, seed=4)[0]
    levels = [rms(out[i : i + FRAME]) for i in range(0, len(out), FRAME)]
    assert max(levels) > 0.05  # syllables
    assert min(levels) == 0.0  # digital silence
    assert any(0 < level < 0.002 for level in levels)  # room noise


def test_the_capture_program_replays_a_recording_from_its_start_again(tmp_path: Path) -> None:
    recording = bytes(range(256)) * 50  # 0.4 s
    wav = tmp_path / "said.wav"
    wav.write_bytes(wav_bytes(recording))
    out = program("--speed", "200", "--seconds", "1", "--wav", str(wav))
    assert out == (recording * 3)[: 1_000 * BYTES_PER_MS]
    empty = tmp_path / "empty.wav"
    empty.write_bytes(wav_bytes(b""))
    command = [sys.executable, "-m", "tests.support.pcm_source", "--wav", str(empty)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=30, check=False)
    assert done.returncode != 0
    assert b"holds no sound" in done.stderr


def test_each_sentence_of_the_sound_is_one_utterance() -> None:
    pcm, sentences = sound(60, seed=1)
    found, _, _ = detect(pcm, 3_200)
    assert sentences >= 8
    assert len(found) == sentences


def test_the_stand_ins_answers_all_pass_the_transcript_filter() -> None:
    filters = Filters()
    answers = [sentence(n) for n in range(200)]
    assert len(set(answers)) == len(answers)
    dropped = [a for n, a in enumerate(answers) if filters.check("system", a, False, n * 1_000)]
    assert dropped == []
    assert transcript({"source": "audio", "text": f"[🎤] {answers[0]}"}) == answers[0]
    assert transcript({"source": "overlay", "text": answers[0]}) is None


def test_the_scene_is_seeded_and_the_detector_finds_what_it_expects() -> None:
    made = scene(1.0)
    assert made.pcm == scene(1.0).pcm
    assert made.expected == len(made.sentences) + 1  # the monologue is cut once
    found, stats, cpu = detect(made.pcm, 3_200)
    assert len(found) == made.expected
    assert all(any(overlaps(u, *s) for u in found) for s in made.sentences)
    assert stats.too_short == made.blips
    assert cpu > 0
