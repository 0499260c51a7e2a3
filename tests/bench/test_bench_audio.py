"""The audio bench: its capture program writes what it says, its stand-in's answers all pass
the transcript filter, its figures are computed right, and a short latency run on a real
relay matches every answer to its feed item."""

from __future__ import annotations

import subprocess
import sys
from array import array

import pytest

from actors.audio.core.transcript_filter import Filters
from actors.audio.core.utterance import BYTES_PER_MS
from bench import audio_speech
from bench.audio_probe import sentence, transcript
from bench.bench_audio import main, slope_per_hour
from bench.bench_vad import detect
from bench.harness import ROOT
from bench.pcm_source import sound

FRAME = 20 * BYTES_PER_MS


def rms(pcm: bytes) -> float:
    samples = array("h", pcm)
    return float((sum(s * s for s in samples) / max(len(samples), 1)) ** 0.5 / 32767)


def program(*args: str) -> bytes:
    command = [sys.executable, "-m", "bench.pcm_source", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, check=True, timeout=30).stdout


def test_the_capture_program_writes_the_seconds_asked_of_its_seeded_sound() -> None:
    out = program("--speed", "200", "--seconds", "8", "--seed", "3")
    assert len(out) == 8_000 * BYTES_PER_MS
    assert out == sound(8, seed=3)[0]
    assert out != sound(8, seed=4)[0]
    levels = [rms(out[i : i + FRAME]) for i in range(0, len(out), FRAME)]
    assert max(levels) > 0.05  # syllables
    assert min(levels) == 0.0  # digital silence
    assert any(0 < level < 0.002 for level in levels)  # room noise


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


def test_the_slope_is_in_mb_per_hour() -> None:
    assert slope_per_hour([(0, 60.0), (30, 61.0), (60, 62.0)]) == pytest.approx(2.0)
    assert slope_per_hour([(10, 60.0)]) != slope_per_hour([(10, 60.0)])  # NaN


def test_the_real_speech_check_fails_a_lost_word(capsys: pytest.CaptureFixture[str]) -> None:
    answers = ["the report is late", "open the file", "we ship friday", "ok then", "see you"]
    feed = [*answers[:2], "we ship", *answers[3:]]
    audio_speech.check(answers, answers, feed, answers)
    out = capsys.readouterr().out
    assert "PASS one utterance per sentence" in out
    assert "FAIL words PocketSphinx answered found in GET /feed: 13 of 14 (missing: friday)" in out
    assert "PASS words PocketSphinx answered found in GET /agent/context audio: 14 of 14" in out


def test_a_short_latency_run_matches_every_answer_to_its_feed_item(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the capture program runs as ``-m bench.pcm_source``
    assert main(["--targets", "latency", "--utterances", "2", "--latency-speed", "20"]) == 0
    out = capsys.readouterr().out
    assert "transcripts read 2, matched 2" in out
    assert "over 2 utterances" in out
