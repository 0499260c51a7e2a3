"""Voice detection: which stretches of generated sound become utterances, and when."""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from itertools import pairwise

import pytest

from actors.audio.core.utterance import BYTES_PER_MS, Utterance
from actors.audio.core.voice import FRAME_MS, VoiceDetector, frame_energy
from config.audio.settings import AudioConfig
from tests.audio.signals import noise, scene, silence, speech

T0 = 1_769_901_200_000
CONFIG = AudioConfig()
SENTENCE = scene(("silence", 1_000), ("speech", 4_000), ("silence", 2_000))


def run(
    pcm: bytes,
    *,
    chunk: int = 3_200,
    source: str = "system",
    config: AudioConfig = CONFIG,
    flush: bool = True,
) -> tuple[list[Utterance], VoiceDetector]:
    """``pcm`` fed in chunks of ``chunk`` bytes, each read at the clock's time of its last
    byte (real time from ``T0``); then the stream flushed."""
    detector = VoiceDetector(source, config)  # type: ignore[arg-type]
    found: list[Utterance] = []
    for offset in range(0, len(pcm), chunk):
        end = min(offset + chunk, len(pcm))
        found += detector.feed(pcm[offset:end], T0 + end // BYTES_PER_MS)
    if flush:
        last = detector.flush(T0 + len(pcm) // BYTES_PER_MS)
        found += [last] if last is not None else []
    return found, detector


def mixed(*parts: bytes) -> bytes:
    """Samples added together (clipped), as long as the first part."""
    total = array("h", parts[0])
    for part in parts[1:]:
        other = array("h", part)
        for i in range(min(len(total), len(other))):
            total[i] = max(-32767, min(32767, total[i] + other[i]))
    return total.tobytes()


def test_frame_energy_is_rms_of_full_scale() -> None:
    assert frame_energy(bytes(960)) == 0.0
    assert frame_energy(array("h", [16384, -16384] * 240).tobytes()) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "pcm",
    [silence(10_000), noise(10_000, level=0.0005)],
    ids=["digital-silence", "faint-noise"],
)
def test_silence_and_faint_noise_make_no_utterance(pcm: bytes) -> None:
    found, detector = run(pcm)
    assert found == []
    stats = detector.stats
    assert stats.speech_frames == 0
    assert stats.seconds == pytest.approx(10.0)
    assert stats.frames == 10_000 // FRAME_MS


def test_a_sentence_is_one_utterance_with_preroll_and_hangover() -> None:
    found, detector = run(SENTENCE)
    assert len(found) == 1
    (utterance,) = found
    assert utterance.source == "system"
    assert not utterance.quiet
    # Begins the pre-roll before the first speech frame (speech starts at 1000 ms, softly).
    assert T0 + 1_000 - CONFIG.preroll_ms - FRAME_MS <= utterance.started_ms
    assert utterance.started_ms <= T0 + 1_000 - CONFIG.preroll_ms + 3 * FRAME_MS
    # Ends the hangover after the last speech frame, which is at most a syllable's fade early.
    end_ms = utterance.started_ms - T0 + utterance.duration_ms
    assert 5_000 + CONFIG.hangover_ms - 4 * FRAME_MS <= end_ms <= 5_000 + CONFIG.hangover_ms + 30
    # The samples are the stream's own, from where it says it started.
    offset = (utterance.started_ms - T0) * BYTES_PER_MS
    assert utterance.pcm == SENTENCE[offset : offset + len(utterance.pcm)]
    assert detector.stats.utterances == 1
    assert 0.4 < detector.stats.speech_share < 0.6


def test_two_sentences_a_second_and_a_half_apart_are_two() -> None:
    pcm = scene(("silence", 500), ("speech", 3_000), ("silence", 1_500), ("speech", 2_500))
    found, _ = run(pcm + silence(1_000))
    assert len(found) == 2
    first, second = found
    assert first.started_ms + first.duration_ms <= second.started_ms
    assert second.started_ms - T0 == pytest.approx(5_000 - CONFIG.preroll_ms, abs=3 * FRAME_MS)


def test_a_shorter_pause_than_the_hangover_keeps_one_utterance() -> None:
    pcm = scene(("silence", 500), ("speech", 3_000), ("silence", 400), ("speech", 2_500))
    found, _ = run(pcm + silence(1_000))
    assert len(found) == 1


@pytest.mark.slow
def test_continuous_speech_is_cut_at_the_longest_length() -> None:
    pcm = scene(("silence", 1_000), ("speech", 40_000), ("silence", 2_000))
    found, detector = run(pcm)
    assert [u.duration_ms for u in found[:2]] == [18_000, 18_000]
    assert len(found) == 3
    assert found[2].duration_ms == pytest.approx(40_000 - 36_000 + 300 + 700, abs=4 * FRAME_MS)
    # Each piece follows the last with no gap and no overlap, and together they are the stream.
    for before, after in pairwise(found):
        assert after.started_ms == before.started_ms + before.duration_ms
    offset = (found[0].started_ms - T0) * BYTES_PER_MS
    joined = b"".join(u.pcm for u in found)
    assert joined == pcm[offset : offset + len(joined)]
    assert detector.stats.utterances == 3


def test_a_blip_is_dropped_and_counted() -> None:
    found, detector = run(scene(("silence", 1_000), ("speech", 150), ("silence", 2_000)))
    assert found == []
    assert detector.stats.too_short == 1
    assert detector.stats.utterances == 0


@pytest.mark.parametrize("chunk", [1, 333, 4_800])
def test_the_utterances_do_not_depend_on_the_chunk_size(chunk: int) -> None:
    pcm = scene(
        ("silence", 400),
        ("speech", 1_500),
        ("silence", 1_200),
        ("speech", 150),
        ("silence", 900),
        ("speech", 1_000),
        ("silence", 250),
    )
    reference, ref_detector = run(pcm, chunk=960)
    found, detector = run(pcm, chunk=chunk)
    assert len(reference) == 2
    assert found == reference  # samples, start times and quiet flags alike
    assert detector.stats == ref_detector.stats


def test_an_odd_chunk_keeps_its_half_sample() -> None:
    detector = VoiceDetector("system", CONFIG)
    assert detector.feed(b"\x01", T0) == []
    assert detector.feed(b"\x02" * 959, T0 + 30) == []
    assert detector.stats.frames == 1
    assert detector.stats.seconds == pytest.approx(0.03)


def test_flush_hands_on_the_utterance_in_progress() -> None:
    pcm = scene(("silence", 1_000), ("speech", 2_000)) + b"\x07\x00\x07"
    found, detector = run(pcm, flush=False)
    assert found == []
    last = detector.flush(T0 + len(pcm) // BYTES_PER_MS)
    assert last is not None
    assert last.pcm.endswith(b"\x07\x00")  # the whole sample of the partial frame, not the half
    offset = (last.started_ms - T0) * BYTES_PER_MS
    assert last.pcm == pcm[offset:-1]
    assert detector.flush(T0) is None  # started afresh


def _fan(seconds: int, start: float, end: float) -> bytes:
    """Noise whose level grows evenly (in ratio) from ``start`` to ``end`` over ``seconds``."""
    return b"".join(
        noise(1_000, level=start * (end / start) ** (n / seconds), seed=n) for n in range(seconds)
    )


@pytest.mark.slow
def test_a_loud_fan_spinning_up_slowly_is_not_speech() -> None:
    # Up to 10 times the threshold: every frame would pass a fixed threshold.
    fan = _fan(60, 0.002, 0.01)
    found, detector = run(fan)
    assert found == []
    assert detector.stats.speech_frames == 0
    assert frame_energy(fan[-960:]) > 5 * CONFIG.system_threshold


@pytest.mark.slow
def test_speech_over_the_fan_is_heard() -> None:
    fan = _fan(30, 0.002, 0.008)
    talk = silence(26_000) + speech(3_000)
    found, _ = run(mixed(fan, talk))
    assert len(found) == 1
    assert found[0].started_ms - T0 == pytest.approx(26_000 - 300, abs=3 * FRAME_MS)


def _levels(found: Iterable[Utterance]) -> list[bool]:
    return [u.quiet for u in found]


def test_faint_speech_is_quiet_and_clear_speech_is_not() -> None:
    faint = silence(1_000) + speech(3_000, level=0.0012) + silence(1_500)
    clear = silence(1_000) + speech(3_000, level=0.05) + silence(1_500)
    assert _levels(run(faint)[0]) == [True]
    assert _levels(run(clear)[0]) == [False]


def test_the_mic_needs_more_than_system_audio() -> None:
    soft = silence(1_000) + speech(3_000, level=0.004) + silence(1_500)
    assert len(run(soft, source="system")[0]) == 1
    assert run(soft, source="mic")[0] == []


def test_the_settings_are_the_configured_ones() -> None:
    config = AudioConfig(hangover_ms=300, preroll_ms=0, max_utterance_ms=60_000)
    pcm = scene(("silence", 500), ("speech", 2_000), ("silence", 600), ("speech", 2_000))
    found, _ = run(pcm + silence(1_000), config=config)
    assert len(found) == 2
    assert found[0].started_ms - T0 == pytest.approx(500, abs=3 * FRAME_MS)


def test_after_a_flush_the_next_stream_keeps_time() -> None:
    detector = VoiceDetector("system", CONFIG)
    first = scene(("silence", 500), ("speech", 1_000)) + b"\x01" * 501  # ends mid-frame
    assert detector.feed(first, T0 + len(first) // BYTES_PER_MS) == []
    assert detector.flush(T0 + 2_000) is not None
    # The next stream starts at T0 + 10 s on the relay's clock.
    later = T0 + 10_000
    again = scene(("silence", 1_000), ("speech", 2_000), ("silence", 1_000))
    (found,) = detector.feed(again, later + len(again) // BYTES_PER_MS)
    offset = (found.started_ms - later) * BYTES_PER_MS
    assert found.pcm == again[offset : offset + len(found.pcm)]
    assert found.started_ms - later == pytest.approx(1_000 - CONFIG.preroll_ms, abs=2 * FRAME_MS)


@pytest.mark.slow
def test_a_cut_in_the_hangover_leaves_nothing_behind() -> None:
    # Speech ends some 300 ms before the longest length is reached: the cut falls in the
    # hangover, and the rest of the hangover makes no second utterance.
    pcm = scene(("silence", 1_000), ("speech", 17_400), ("silence", 3_000))
    found, detector = run(pcm)
    assert [u.duration_ms for u in found] == [18_000]
    assert detector.stats.too_short == 0
