"""The benchmark cases, run as ``python3 -m bench <case>`` (tests never import ``bench``): the
runner lists every case and each answers ``--help``, the pure parts' examples hold (their
docstrings' doctests), and short runs print their figures."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from actors.audio.core.wav import wav_bytes
from tests.audio.signals import scene as signal_scene
from tests.support.harness import ROOT, bench_case, python_at_top
from tests.support.house_limits import past_the_house_limits

DOCTESTS = (
    "stats",
    "figures",
    "bench_freshness",
    "audio_speech",
    "audio_local",
)
"""The case modules whose docstrings hold examples of their pure parts."""


EVERY_HELP = """
import contextlib, io, json, sys
from bench.runner import main
answered = {}
for case in sys.argv[1:]:
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        try:
            code = main([case, "--help"])
        except SystemExit as exc:
            code = exc.code
    answered[case] = (code, shown.getvalue())
sys.stdout.write(json.dumps(answered))
"""
"""Each case named in its arguments asked for ``--help`` in one process, so that the imports
the cases share are paid once."""

BENCH_LINES = 5_400
"""All of bench/ at most: a runner and its cases, not a second product."""


def test_the_benchmarks_stay_a_runner_and_cases() -> None:
    lines = sum(
        len(p.read_text(encoding="utf-8").splitlines()) for p in (ROOT / "bench").glob("*.py")
    )
    assert lines <= BENCH_LINES, f"bench/ has {lines} lines of Python"


def test_no_case_module_passes_the_house_limits() -> None:
    found = past_the_house_limits(sorted((ROOT / "bench").glob("*.py")))
    assert not found, "\n".join(found)


@pytest.mark.slow
def test_the_runner_lists_every_case_with_a_line_and_each_case_answers_help() -> None:
    listed = bench_case("--help")
    assert listed.returncode == 0
    cases = re.findall(r"^    ([a-z][a-z-]+)(?: {2,}\S|$)", listed.stdout, re.MULTILINE)
    assert len(cases) >= 20
    assert bench_case().returncode == 2  # no case: the list, and a usage error
    unknown = bench_case("no-such-case")
    assert unknown.returncode == 2
    assert "invalid choice: 'no-such-case'" in unknown.stderr
    one = bench_case(cases[0], "--help")
    assert one.returncode == 0 and f"usage: python3 -m bench {cases[0]}" in one.stdout
    # the others in one process: the runner's main as ``python -m bench`` calls it, a case each
    helps = python_at_top("-c", EVERY_HELP, *cases)
    assert helps.returncode == 0, helps.stderr
    answered = json.loads(helps.stdout)
    for case in cases:
        code, shown = answered[case]
        assert code == 0 and f"usage: python3 -m bench {case}" in shown, (case, shown)


@pytest.mark.slow
def test_the_examples_in_the_cases_docstrings_hold() -> None:
    paths = [str(ROOT / "bench" / f"{name}.py") for name in DOCTESTS]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "doctest", *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_recording_is_listed_by_utterance(tmp_path: Path) -> None:
    path = tmp_path / "two.wav"
    pcm = signal_scene(("silence", 500), ("speech", 2_000), ("silence", 2_000), ("speech", 1_000))
    path.write_bytes(wav_bytes(pcm))
    done = bench_case("vad", "--wav", str(path), "--runs", "1")
    assert done.returncode == 0, done.stderr
    assert "share of one core" in done.stdout
    rows = [line.split() for line in done.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert [row[0] for row in rows] == ["1", "2"]
    assert float(rows[0][1]) == pytest.approx(0.2, abs=0.1)


@pytest.mark.slow
def test_a_session_that_cannot_be_read_stops_the_bench_before_it_starts(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"at": 0, "path": "/feed", "body": {"text": "x"}}\n')
    bad.with_name("bad.labels.json").write_text('{"moments": [{"at": 4, "reason": "x"}]}')
    for session, error in ((tmp_path / "none.jsonl", "No such file"), (bad, "no request at 4")):
        done = bench_case("freshness", "--session", str(session))
        assert done.returncode == 2
        assert error in done.stderr


@pytest.mark.slow
def test_a_short_latency_run_matches_every_answer_to_its_feed_item() -> None:
    done = bench_case("audio", "--targets", "latency", "--utterances", "2", "--latency-speed", "20")
    assert done.returncode == 0, done.stderr
    assert "transcripts read 2, matched 2" in done.stdout
    assert "over 2 utterances" in done.stdout
