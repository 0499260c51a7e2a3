"""``GET /metrics`` shows the audio path: each configured source's capture and the
transcriber, read back with prometheus-client's own parser, from a real relay with a real
capture process and the stand-in speech service over loopback."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from actors.audio.capture import Capture
from actors.audio.core.capture_records import CaptureStatus
from actors.audio.core.stt_outcome import NO_STATS, LocalStats
from actors.common.latency import LATENCY_BUCKETS_S
from actors.tree import Relay
from config.audio.settings import AudioConfig
from tests.audio.pcm_program import command as program
from tests.support.actor_calls import asked
from tests.support.harness import ROOT
from tests.support.observe import wait_until
from tests.support.relay import Samples, client_for, relay_settings, scrape, value
from tests.test_hearing import HEARD
from transport.audio.exposition import CAPTURE_STATES, STT_STATES, AudioFigures, audio_families
from transport.demo.fake_stt import FakeStt
from transport.handlers.exposition import RelayCollector, Scrape
from transport.shell.metrics import HttpStats
from transport.shell.profiling import ClientReports

SPEAKS = program("--scene", "speech:1200,silence:1500", "--repeat", "40")


@pytest.fixture
def fake_stt() -> Iterator[FakeStt]:
    with FakeStt() as stt:
        stt.text = HEARD
        yield stt


def _collected(figures: AudioFigures) -> Samples:
    hubs: Any = SimpleNamespace(clients=dict)
    snapshot = Scrape(
        http=HttpStats(),
        streams=hubs,
        actors={},
        excluded={},
        redactions={},
        clients=ClientReports(),
        features=tuple(audio_families(figures)),
    )
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RelayCollector(snapshot))
    samples: Samples = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for sample in family.samples:
            samples[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def test_a_heard_source_and_the_transcriber_are_in_the_metrics(
    make_relay: Callable[..., Relay], fake_stt: FakeStt, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # ``-m tests.audio.pcm_program`` is found from the top
    config = AudioConfig(
        source=SPEAKS, stt_api="openai", stt_base_url=fake_stt.base_url, stt_api_key="k"
    )
    relay = make_relay(replace(relay_settings(), audio=config))
    capture = relay.handles["capture_system"]
    with client_for(relay) as client:

        def counted() -> Samples | None:
            asked(capture, Capture.snapshot)  # any message publishes its status
            samples = scrape(client)
            utterances = value(samples, "relay_audio_utterances_total", source="system") or 0
            stored = value(samples, "relay_stt_outcomes_total", reason="stored") or 0
            return samples if utterances >= 1 and stored >= 1 else None

        samples = wait_until(counted, 15, "an utterance counted and its transcript stored")
    system = {"source": "system"}
    assert (value(samples, "relay_audio_captured_seconds_total", **system) or 0) > 0
    assert value(samples, "relay_audio_capture_restarts_total", **system) == 0
    assert 0 < (value(samples, "relay_audio_speech_share", **system) or 0) <= 1
    states = {
        s: value(samples, "relay_audio_capture_state", **system, state=s) for s in CAPTURE_STATES
    }
    assert states == {s: (1 if s == "running" else 0) for s in CAPTURE_STATES}
    assert value(samples, "relay_audio_utterances_total", source="mic") is None  # not configured
    assert value(samples, "relay_audio_capture_state", source="mic", state="running") is None
    breaker = {s: value(samples, "relay_stt_breaker_state", state=s) for s in STT_STATES}
    assert breaker == {s: (1 if s == "ok" else 0) for s in STT_STATES}
    in_flight = value(samples, "relay_stt_requests_in_flight")
    assert in_flight is not None and 0 <= in_flight <= 5
    answered = value(samples, "relay_stt_latency_seconds_count") or 0
    assert answered >= (value(samples, "relay_stt_outcomes_total", reason="stored") or 0)
    assert value(samples, "relay_stt_latency_seconds_bucket", le="+Inf") == answered


def test_without_a_source_the_metrics_show_a_transcriber_without_a_key(
    make_relay: Callable[..., Relay],
) -> None:
    with client_for(make_relay()) as client:
        samples = scrape(client)
    assert not [name for name, _ in samples if name.startswith("relay_audio_")]
    assert value(samples, "relay_stt_breaker_state", state="no_key") == 1
    assert value(samples, "relay_stt_breaker_state", state="ok") == 0
    assert value(samples, "relay_stt_requests_in_flight") == 0
    assert value(samples, "relay_stt_latency_seconds_count") == 0


def test_the_collector_renders_each_state_outcome_and_latency_bucket() -> None:
    mic = CaptureStatus(
        source="mic",
        kind="pulse",
        state="backoff",
        pid=None,
        restarts=3,
        last_exit=1,
        last_stderr="private",
        captured_s=12.5,
        speech_share=0.25,
        utterances=7,
    )
    buckets = [0] * (len(LATENCY_BUCKETS_S) + 1)
    buckets[0], buckets[4], buckets[-1] = 2, 1, 1  # two fast, one of 2 s, one past the last
    stt = replace(
        NO_STATS,
        in_flight=2,
        max_in_flight=5,
        outcomes={"stored": 3, "timeout": 1},
        breaker="degraded",
        has_key=True,
        latency_buckets=tuple(buckets),
        latency_sum_s=99.3,
    )

    samples = _collected(AudioFigures(captures={"mic": mic}, stt=stt))

    mic_labels = {"source": "mic"}
    assert value(samples, "relay_audio_captured_seconds_total", **mic_labels) == 12.5
    assert value(samples, "relay_audio_utterances_total", **mic_labels) == 7
    assert value(samples, "relay_audio_capture_restarts_total", **mic_labels) == 3
    assert value(samples, "relay_audio_speech_share", **mic_labels) == 0.25
    assert value(samples, "relay_audio_capture_state", **mic_labels, state="backoff") == 1
    assert value(samples, "relay_audio_capture_state", **mic_labels, state="running") == 0
    assert value(samples, "relay_stt_requests_in_flight") == 2
    assert value(samples, "relay_stt_outcomes_total", reason="stored") == 3
    assert value(samples, "relay_stt_outcomes_total", reason="timeout") == 1
    assert value(samples, "relay_stt_breaker_state", state="degraded") == 1
    assert value(samples, "relay_stt_breaker_state", state="no_key") == 0
    cumulative = [
        value(samples, "relay_stt_latency_seconds_bucket", le=le)
        for le in [repr(b) for b in LATENCY_BUCKETS_S] + ["+Inf"]
    ]
    assert cumulative == [2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 4]
    assert value(samples, "relay_stt_latency_seconds_count") == 4
    assert value(samples, "relay_stt_latency_seconds_sum") == 99.3


def test_the_local_recogniser_s_worker_is_in_the_metrics_when_speech_is_recognised_here() -> None:
    worker = LocalStats(
        state="decoding",
        model="tiny.en",
        pid=4321,
        rss_mb=182.5,
        real_time_factor=0.14,
        restarts=1,
        decoded=30,
    )
    samples = _collected(AudioFigures(captures={}, stt=replace(NO_STATS, local=worker)))
    assert value(samples, "relay_stt_local_worker_state", state="decoding") == 1
    assert value(samples, "relay_stt_local_worker_state", state="ready") == 0
    assert value(samples, "relay_stt_local_worker_resident_bytes") == 182.5 * 1024 * 1024
    assert value(samples, "relay_stt_local_real_time_factor") == 0.14
    idle = replace(worker, state="idle", pid=None, rss_mb=None, real_time_factor=None)
    before = _collected(AudioFigures(captures={}, stt=replace(NO_STATS, local=idle)))
    assert value(before, "relay_stt_local_worker_state", state="idle") == 1
    assert value(before, "relay_stt_local_worker_resident_bytes") is None  # no worker yet
    assert value(before, "relay_stt_local_real_time_factor") is None
    service = _collected(AudioFigures(captures={}, stt=NO_STATS))  # a speech service
    assert not [name for name, _ in service if name.startswith("relay_stt_local_")]
