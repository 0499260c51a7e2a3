"""The Transcriber against the stand-in speech service over loopback HTTP, storing into a real
FeedBuffer: marks, drops by reason, timeouts on the injected clock, the in-flight bound, the
breaker, a slow feed, and the key kept out of every log line and error text."""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from actors.audio.core.stt_outcome import NO_STATS, Outcome, TranscriberStats
from actors.audio.core.utterance import Utterance
from actors.audio.transcriber import Deliver, Transcriber
from actors.common.breaker import COOL_OFF_JITTER, COOL_OFF_MIN_S
from actors.common.forgetting import Span
from actors.common.latency import LATENCY_BUCKETS_S
from actors.core.records import FeedPost, FeedRecord
from actors.core.shapes import MARKS, AudioSource
from actors.ingest.feed_buffer import FeedBuffer
from actors.kernel.base import ChildHandle, RelayActor
from actors.kernel.clock import FakeClock
from actors.kernel.published import Published
from actors.kernel.storage import StorageInfo
from config.audio.settings import AudioConfig, SttApi
from tests.audio.signals import speech
from tests.support.observe import LogSink, wait_until
from tests.support.redaction_samples import assert_nowhere
from transport.demo.fake_stt import INVENTED, FakeStt

KEY = "stt-placeholder-key-4711"
"""A local server's kind of key: no vendor's pattern finds it."""
TIMEOUT_S = 10.0
"""STT_TIMEOUT_MS of these tests: reached only by advancing the fake clock."""
COOL_OFF_S = COOL_OFF_MIN_S * (1 + COOL_OFF_JITTER) + 1
"""Long enough for the breaker's first cooling-off, whatever its jitter."""


class _Drops:
    """A transcript filter that drops the texts it was given, with their reasons, and notes
    what it was asked."""

    def __init__(self, drops: dict[str, str] | None = None) -> None:
        self.drops = drops or {}
        self.seen: list[tuple[AudioSource, str, bool, int]] = []

    def check(self, source: AudioSource, text: str, quiet: bool, now_ms: int) -> str | None:
        self.seen.append((source, text, quiet, now_ms))
        return self.drops.get(text)

    def forget(self, span: Span) -> int:
        return 0


@pytest.fixture
def fake_stt() -> Iterator[FakeStt]:
    with FakeStt() as stt:
        yield stt


@pytest.fixture
def feed(clock: FakeClock, storage: StorageInfo) -> ChildHandle[FeedBuffer]:
    handle: ChildHandle[FeedBuffer] = ChildHandle("feed")
    handle.bind(FeedBuffer.start(clock=clock, store=storage.stores["feed"]))
    return handle


def _into(feed: ChildHandle[FeedBuffer]) -> Deliver:
    def deliver(record: FeedPost) -> FeedRecord:
        return feed.ask(FeedBuffer.append_many, (record,)).result(timeout=5)[0]

    return deliver


def _start(
    clock: FakeClock,
    fake: FakeStt,
    deliver: Deliver,
    transcript_filter: _Drops | None = None,
    published: Published[TranscriberStats] | None = None,
    **config: Any,
) -> ChildHandle[Transcriber]:
    settings = AudioConfig(
        stt_api="openai",
        stt_base_url=fake.base_url,
        stt_model="whisper-1",
        stt_api_key=KEY,
        stt_timeout_ms=round(TIMEOUT_S * 1000),
        stt_max_in_flight=2,
    )
    handle: ChildHandle[Transcriber] = ChildHandle("stt")
    handle.bind(
        Transcriber.start(
            clock=clock,
            config=replace(settings, **config),
            transcript_filter=transcript_filter or _Drops(),
            deliver=deliver,
            published=published,
        )
    )
    return handle


def _utterance(source: AudioSource = "system", ms: int = 400, quiet: bool = False) -> Utterance:
    return Utterance(source, speech(ms), started_ms=1, quiet=quiet)


def _outcome(stt: ChildHandle[Transcriber], utterance: Utterance) -> Outcome:
    future = stt.ask(Transcriber.transcribe, utterance).result(timeout=5)
    return future.result(timeout=5)


def _stats(stt: ChildHandle[Transcriber]) -> TranscriberStats:
    return stt.ask(Transcriber.stats).result(timeout=5)


def _submitted(stt: ChildHandle[Transcriber], utterance: Utterance) -> bool:
    return stt.ask(Transcriber.submit, utterance).result(timeout=5)


@pytest.mark.parametrize("api", ["openai", "chat"])
@pytest.mark.parametrize("source", ["system", "mic"])
def test_a_transcript_is_stored_with_its_sources_mark(
    api: SttApi,
    source: AudioSource,
    clock: FakeClock,
    fake_stt: FakeStt,
    feed: ChildHandle[FeedBuffer],
    logs: LogSink,
) -> None:
    fake_stt.text = "Deploy at 5 pm, says Ana."
    drops = _Drops()
    stt = _start(clock, fake_stt, _into(feed), drops, stt_api=api, language="de")
    outcome = _outcome(stt, _utterance(source, quiet=True))
    assert outcome.reason == "stored"
    assert outcome.item is not None
    assert outcome.item.text == MARKS[source] + "Deploy at 5 pm, says Ana."
    (stored,) = feed.ask(FeedBuffer.items_after, 0).result(timeout=5)
    assert stored == outcome.item
    assert (stored.priority, stored.source, stored.channel) == ("normal", "audio", "stream")
    assert drops.seen == [(source, "Deploy at 5 pm, says Ana.", True, clock.now_ms())]
    heard = fake_stt.last
    assert heard.api == api
    assert heard.wav_ok
    assert heard.audio_ms == 400
    assert heard.authorization == f"Bearer {KEY}"
    if api == "openai":
        assert heard.fields == {"model": "whisper-1", "language": "de", "response_format": "json"}
    else:
        assert heard.fields["model"] == "whisper-1"
    (line,) = logs.named("audio.transcript")
    assert line["level"] == "info"
    assert (line["source"], line["duration_ms"], line["chars"]) == (source, 400, 25)
    assert line["outcome"] == "stored"
    assert line["id"] == stored.id
    assert "text" not in line
    (text_line,) = logs.named("audio.transcript_text")
    assert text_line["level"] == "debug"
    assert _stats(stt).outcomes == {"stored": 1}


def test_empty_and_invented_transcripts_are_dropped_and_counted_by_reason(
    clock: FakeClock, fake_stt: FakeStt, feed: ChildHandle[FeedBuffer]
) -> None:
    drops = _Drops({INVENTED: "invented"})
    stt = _start(clock, fake_stt, _into(feed), drops)
    fake_stt.mode = "empty"
    assert _outcome(stt, _utterance()).reason == "empty"
    fake_stt.mode = "invented"
    assert _outcome(stt, _utterance(quiet=True)).reason == "invented"
    assert feed.ask(FeedBuffer.items_after, 0).result(timeout=5) == ()
    assert [text for _, text, _, _ in drops.seen] == [INVENTED]  # the empty text never gets there
    stats = _stats(stt)
    assert stats.outcomes == {"empty": 1, "invented": 1}
    assert stats.breaker == "ok"


def test_a_slow_answer_times_out_on_the_clock_and_the_actor_still_answers(
    clock: FakeClock, fake_stt: FakeStt, feed: ChildHandle[FeedBuffer]
) -> None:
    fake_stt.mode, fake_stt.delay_s = "slow", 30.0
    stt = _start(clock, fake_stt, _into(feed))
    future = stt.ask(Transcriber.transcribe, _utterance()).result(timeout=5)
    wait_until(lambda: fake_stt.calls == 1, what="the request")
    assert stt.ask(RelayActor.ping).result(timeout=5) == "pong"
    assert not future.done()
    clock.advance(TIMEOUT_S)
    outcome = future.result(timeout=5)
    assert outcome.reason == "timeout"
    assert outcome.error == "no answer within 10000 ms"
    stats = _stats(stt)
    assert (stats.in_flight, stats.outcomes, stats.latency_p50_ms) == (0, {"timeout": 1}, 10_000)
    assert stats.last_error is not None
    assert stats.last_error.startswith("no answer within 10000 ms; raise STT_TIMEOUT_MS")
    assert stats.breaker == "degraded"


def test_a_hanging_call_does_not_hold_back_the_next_utterance(
    clock: FakeClock, fake_stt: FakeStt, feed: ChildHandle[FeedBuffer]
) -> None:
    fake_stt.mode = "hang"
    stt = _start(clock, fake_stt, _into(feed))
    assert _submitted(stt, _utterance(ms=300))
    wait_until(lambda: fake_stt.calls == 1, what="the hanging request")
    fake_stt.mode = "ok"
    outcome = _outcome(stt, _utterance(ms=500))
    assert outcome.item is not None
    assert outcome.item.text == "[🔊] Heard 500 ms of audio."
    assert _stats(stt).in_flight == 1


def test_more_than_max_in_flight_are_refused_as_busy_and_never_queued(
    clock: FakeClock, fake_stt: FakeStt, feed: ChildHandle[FeedBuffer]
) -> None:
    fake_stt.mode = "hang"
    stt = _start(clock, fake_stt, _into(feed), stt_max_in_flight=2)
    assert _submitted(stt, _utterance())
    assert _submitted(stt, _utterance())
    wait_until(lambda: fake_stt.calls == 2, what="two requests out")
    assert not _submitted(stt, _utterance())
    refused = _outcome(stt, _utterance())
    assert (refused.reason, refused.refused, refused.retry_after_s) == ("busy", True, 1.0)
    stats = _stats(stt)
    assert (stats.in_flight, stats.outcomes) == (2, {"busy": 2})
    clock.advance(TIMEOUT_S)
    wait_until(lambda: _stats(stt).in_flight == 0, what="both timed out")
    fake_stt.mode = "ok"
    assert _outcome(stt, _utterance(ms=600)).reason == "stored"
    assert fake_stt.calls == 3  # the refused ones were never sent
    assert fake_stt.last.audio_ms == 600


@pytest.mark.parametrize("mode", ["500", "429"])
def test_a_run_of_failures_opens_the_breaker_until_it_half_opens(
    mode: str, clock: FakeClock, fake_stt: FakeStt, feed: ChildHandle[FeedBuffer], logs: LogSink
) -> None:
    fake_stt.mode = mode
    stt = _start(clock, fake_stt, _into(feed))
    for _ in range(3):
        failed = _outcome(stt, _utterance())
        assert failed.reason == "error"
        assert failed.error is not None
        assert failed.error.startswith(f"HTTP {mode}")
    assert logs.named("audio.breaker_open")
    refused = _outcome(stt, _utterance())
    assert refused.reason == "breaker"
    assert refused.retry_after_s is not None
    assert COOL_OFF_MIN_S <= refused.retry_after_s <= COOL_OFF_S
    assert not _submitted(stt, _utterance())
    assert fake_stt.calls == 3
    assert _stats(stt).breaker == "open"

    clock.advance(COOL_OFF_S)  # half-open: one probe at a time
    fake_stt.mode = "hang"
    assert _submitted(stt, _utterance())
    wait_until(lambda: fake_stt.calls == 4, what="the probe")
    assert _outcome(stt, _utterance()).reason == "breaker"
    assert _stats(stt).breaker == "probing"
    clock.advance(TIMEOUT_S)  # the probe fails: open again, for longer
    wait_until(lambda: _stats(stt).breaker == "open", what="the breaker open again")

    clock.advance(2 * COOL_OFF_S)
    fake_stt.mode = "ok"
    assert _outcome(stt, _utterance()).reason == "stored"
    stats = _stats(stt)
    assert (stats.breaker, stats.consecutive_failures) == ("ok", 0)
    assert stats.outcomes == {"error": 3, "breaker": 3, "timeout": 1, "stored": 1}
    assert logs.named("audio.breaker_closed")


def test_a_slow_feed_holds_neither_the_mailbox_nor_the_next_request(
    clock: FakeClock, fake_stt: FakeStt, feed: ChildHandle[FeedBuffer]
) -> None:
    release = threading.Event()
    store = _into(feed)

    def slow_deliver(record: FeedPost) -> FeedRecord:
        if not release.wait(5):
            raise TimeoutError
        return store(record)

    stt = _start(clock, fake_stt, slow_deliver)
    first = stt.ask(Transcriber.transcribe, _utterance(ms=300)).result(timeout=5)
    wait_until(lambda: fake_stt.calls == 1, what="the first request")
    second = stt.ask(Transcriber.transcribe, _utterance(ms=500)).result(timeout=5)
    wait_until(lambda: fake_stt.calls == 2, what="the second request, while the feed waits")
    # both answers come back to the mailbox while the first delivery still waits
    wait_until(lambda: _stats(stt).in_flight == 0, what="both answers heard")
    assert not first.done()
    release.set()
    items = [first.result(timeout=5).item, second.result(timeout=5).item]
    assert [item.text for item in items if item is not None] == [
        "[🔊] Heard 300 ms of audio.",
        "[🔊] Heard 500 ms of audio.",
    ]


def test_a_feed_that_refuses_is_counted_as_undelivered(clock: FakeClock, fake_stt: FakeStt) -> None:
    def refuse(_record: FeedPost) -> FeedRecord:
        msg = "actor feed is not running"
        raise RuntimeError(msg)

    stt = _start(clock, fake_stt, refuse)
    outcome = _outcome(stt, _utterance())
    assert outcome.reason == "undelivered"
    assert outcome.error == "RuntimeError: actor feed is not running"
    stats = _stats(stt)
    assert (stats.outcomes, stats.breaker) == ({"undelivered": 1}, "ok")


def test_stopping_answers_the_calls_in_flight(
    clock: FakeClock, fake_stt: FakeStt, feed: ChildHandle[FeedBuffer]
) -> None:
    fake_stt.mode = "hang"
    stt = _start(clock, fake_stt, _into(feed))
    future: concurrent.futures.Future[Outcome] = stt.ask(
        Transcriber.transcribe, _utterance()
    ).result(timeout=5)
    wait_until(lambda: fake_stt.calls == 1, what="the request")
    assert stt.ref is not None
    stt.ref.stop(timeout=5)
    outcome = future.result(timeout=5)
    assert (outcome.reason, outcome.error) == ("error", "the transcriber stopped before the answer")


@pytest.mark.parametrize("mode", ["401", "nonjson"])
def test_the_key_is_in_no_log_line_and_no_error_text(
    mode: str,
    clock: FakeClock,
    fake_stt: FakeStt,
    feed: ChildHandle[FeedBuffer],
    rendered_logs: Any,
) -> None:
    stt = _start(clock, fake_stt, _into(feed))
    assert _outcome(stt, _utterance()).reason == "stored"
    fake_stt.mode = mode
    failed = _outcome(stt, _utterance())
    assert failed.reason == "error"
    assert failed.error is not None
    assert ("HTTP 401" if mode == "401" else "not JSON") in failed.error
    stats = _stats(stt)
    assert stats.last_error is not None
    assert stats.last_error.startswith(failed.error)
    assert fake_stt.last.authorization == f"Bearer {KEY}"  # it was sent, and echoed back
    lines = rendered_logs.getvalue()
    assert '"audio.transcript_text"' in lines  # logged at debug, and read here
    assert_nowhere(KEY, lines, failed.error, repr(stats))


def test_the_counters_are_published_and_a_restarted_transcriber_counts_on(
    clock: FakeClock, fake_stt: FakeStt, feed: ChildHandle[FeedBuffer]
) -> None:
    cell: Published[TranscriberStats] = Published(NO_STATS)
    stt = _start(clock, fake_stt, _into(feed), published=cell)
    assert _outcome(stt, _utterance()).reason == "stored"
    wait_until(lambda: cell.value.outcomes.get("stored") == 1)
    assert cell.value.in_flight == 0
    assert cell.value.max_in_flight == 2
    assert stt.ref is not None
    stt.ref.stop(timeout=5)
    again = _start(clock, fake_stt, _into(feed), published=cell)
    fake_stt.mode = "empty"
    assert _outcome(again, _utterance()).reason == "empty"
    wait_until(lambda: cell.value.outcomes == {"stored": 1, "empty": 1})


def test_without_a_key_nothing_is_sent_and_each_utterance_says_why(
    clock: FakeClock, fake_stt: FakeStt, feed: ChildHandle[FeedBuffer]
) -> None:
    stt = _start(clock, fake_stt, _into(feed), stt_api_key="")
    outcome = _outcome(stt, _utterance())
    assert (outcome.reason, outcome.refused) == ("no_key", False)
    assert outcome.error is not None and "STT_API_KEY" in outcome.error
    assert not _submitted(stt, _utterance())
    assert fake_stt.calls == 0
    stats = _stats(stt)
    assert stats.outcomes == {"no_key": 2}
    assert not stats.has_key


def test_latencies_fill_the_llms_buckets_and_a_restarted_transcriber_counts_on(
    clock: FakeClock, fake_stt: FakeStt, feed: ChildHandle[FeedBuffer]
) -> None:
    cell: Published[TranscriberStats] = Published(NO_STATS)
    stt = _start(clock, fake_stt, _into(feed), published=cell)
    fake_stt.mode, fake_stt.delay_s = "slow", 0.5
    reply = stt.ask(Transcriber.transcribe, _utterance()).result(timeout=5)
    wait_until(lambda: fake_stt.calls == 1, what="the request at the service")
    clock.advance(1.5)  # while the service takes its time: the latency on the injected clock
    assert reply.result(timeout=5).reason == "stored"
    two_s = LATENCY_BUCKETS_S.index(2.0)
    wait_until(lambda: cell.value.outcomes.get("stored") == 1)
    assert cell.value.latency_buckets[two_s] == sum(cell.value.latency_buckets) == 1
    assert cell.value.latency_sum_s == 1.5
    assert stt.ref is not None
    stt.ref.stop(timeout=5)
    again = _start(clock, fake_stt, _into(feed), published=cell)
    fake_stt.mode = "ok"
    assert _outcome(again, _utterance()).reason == "stored"
    wait_until(lambda: cell.value.outcomes.get("stored") == 2)
    buckets = cell.value.latency_buckets
    assert (buckets[0], buckets[two_s], sum(buckets)) == (1, 1, 2)
    assert cell.value.latency_sum_s == 1.5


def test_the_counters_are_published_before_the_caller_hears_the_outcome(
    clock: FakeClock, fake_stt: FakeStt, feed: ChildHandle[FeedBuffer]
) -> None:
    # a client that reads /health after POST /audio answered sees that utterance counted
    fake_stt.mode, fake_stt.delay_s = "slow", 0.2  # the callback is set before the answer
    cell: Published[TranscriberStats] = Published(NO_STATS)
    stt = _start(clock, fake_stt, _into(feed), published=cell)
    counted: list[dict[str, int]] = []
    reply = stt.ask(Transcriber.transcribe, _utterance()).result(timeout=5)
    reply.add_done_callback(lambda _: counted.append(dict(cell.value.outcomes)))
    assert reply.result(timeout=5).reason == "stored"
    assert counted == [{"stored": 1}]


@pytest.mark.parametrize(
    ("mode", "setting"), [("401", "STT_API_KEY"), ("500", "STT_BASE_URL"), ("nonjson", "STT_API")]
)
def test_a_failed_transcription_names_the_setting_to_look_at(
    mode: str,
    setting: str,
    clock: FakeClock,
    fake_stt: FakeStt,
    feed: ChildHandle[FeedBuffer],
    logs: LogSink,
) -> None:
    fake_stt.mode = mode
    stt = _start(clock, fake_stt, _into(feed))
    assert _outcome(stt, _utterance()).reason == "error"
    line = logs.named("audio.transcript")[-1]
    assert line["setting"] == setting
    assert setting in line["fix"]
    assert setting in (_stats(stt).last_error or "")


def test_an_unreachable_speech_service_names_stt_base_url(
    clock: FakeClock, feed: ChildHandle[FeedBuffer], logs: LogSink
) -> None:
    with FakeStt() as gone:
        closed = gone.base_url
    stt = _start(clock, gone, _into(feed), stt_base_url=closed)
    assert _outcome(stt, _utterance()).reason == "error"
    assert logs.named("audio.transcript")[-1]["setting"] == "STT_BASE_URL"
