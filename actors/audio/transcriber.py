"""Transcriber: the only actor that talks to the speech service.

Every source hands it :class:`~actors.audio.core.utterance.Utterance`\\ s: capture with
:meth:`Transcriber.submit` (told; a refused one is counted and dropped), ``POST /audio`` with
:meth:`Transcriber.transcribe` (asked; the answer is a future of the :class:`Outcome`, so the
handler awaits the transcript without holding this actor). Neither ever waits here:

* at most ``STT_MAX_IN_FLIGHT`` requests are out at once; one more utterance is refused at
  once as ``busy``: there is no queue to grow while the service is slow;
* the requests run on the event loop of a :class:`~actors.audio.speech_client.SpeechClient`, on a
  thread of its own; their answers come back to the mailbox as messages, so the mailbox
  keeps moving (its supervisor's pings included) whatever the service does;
* each request is bounded by ``STT_TIMEOUT_MS`` on the injected clock (a timer cancels it),
  and by httpx's own timeouts as well;
* a run of failures opens a :class:`~actors.common.breaker.Breaker`: utterances are refused as
  ``breaker`` until it half-opens, when one probe goes out;
* a transcript passes the injected :class:`~actors.audio.core.utterance.TranscriptFilter`, and then
  the injected ``deliver`` stores it in the feed with its source's mark. ``deliver`` may wait
  for the feed's actor, so it runs on a worker thread, never on this actor's thread nor on
  its event loop.

The key is sent in the ``Authorization`` header only; every error text is made safe by
:func:`~actors.core.error_text.safe_text` and has the key taken out besides, so neither a log
line nor ``/health`` ever shows it. Audio is never logged; a transcript's text only at debug.
"""

from __future__ import annotations

import concurrent.futures
import functools
import itertools
import statistics
from collections import Counter, deque
from collections.abc import Callable
from typing import Any, Final

import pykka

from actors.audio.core.stt import (
    SttBadAnswer,
    SttError,
    SttTimeout,
    request_for,
    stt_remedy,
)
from actors.audio.core.stt_outcome import Outcome, TranscriberStats, refusal
from actors.audio.core.utterance import TranscriptFilter, Utterance
from actors.audio.local_stt import LocalRecogniser
from actors.audio.speech_client import SpeechClient
from actors.audio.stt_jobs import Delivered, Expired, Heard, Job, Warmed, resolve, tell
from actors.common.breaker import Breaker
from actors.common.forgetting import Forgotten, Span
from actors.common.http_library import httpx
from actors.common.latency import empty_latency_buckets, latency_bucket
from actors.common.remedy import Remedy
from actors.core.error_text import safe_error_text, safe_text
from actors.core.records import FeedPost, FeedRecord
from actors.core.shapes import MARKS, STREAM, TRANSCRIPT_SOURCE
from actors.kernel.base import RelayActor, Reporter
from actors.kernel.clock import Clock
from actors.kernel.published import Published
from config.audio.settings import AudioConfig

LATENCY_WINDOW: Final = 64
"""How many recent calls the latency median is taken over."""
STOPPED: Final = "the transcriber stopped before the answer"

Deliver = Callable[[FeedPost], FeedRecord]
"""Stores a transcript in the feed and returns the stored item; it may block (an ask of the
feed's actor with a timeout) and raises when the feed does not take it."""


class Transcriber(RelayActor):
    """Turns utterances into feed items through the speech service; see the module."""

    name = "stt"

    def __init__(
        self,
        *,
        clock: Clock,
        config: AudioConfig,
        transcript_filter: TranscriptFilter,
        deliver: Deliver,
        transport: httpx.AsyncBaseTransport | None = None,
        published: Published[TranscriberStats] | None = None,
        report: Reporter | None = None,
    ) -> None:
        super().__init__(report=report)
        self._published = published
        """Where :meth:`stats` is published after each change, for ``/health`` and
        ``/metrics``; a restarted transcriber counts on from what it holds."""
        self._clock = clock
        self._config = config
        self._filter = transcript_filter
        self._store = deliver
        self._transport = transport
        self._breaker = Breaker()
        self._jobs: dict[int, Job] = {}
        self._ids = itertools.count(1)
        self._outcomes: Counter[str] = Counter(published.value.outcomes if published else {})
        self._latencies: deque[int] = deque(maxlen=LATENCY_WINDOW)
        carried = published.value if published else None
        self._buckets = list(carried.latency_buckets if carried else empty_latency_buckets())
        self._latency_sum_s = carried.latency_sum_s if carried else 0.0
        self._last_error: str | None = None
        self._client: SpeechClient | LocalRecogniser | None = None
        self._delivery: concurrent.futures.ThreadPoolExecutor | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def started(self) -> None:
        """Start the speech client (its event loop on a thread) and the delivery thread, and
        publish the counters (in flight: none)."""
        config = self._config
        self._log = self._log.bind(api=config.stt_api, model=config.stt_model)
        if config.local:
            self._client = LocalRecogniser(config.stt_model, config.language, name=self.name)
            if config.capturing:  # an utterance will come: it need not wait for the load
                ref = self.actor_ref
                self._client.warm().add_done_callback(lambda f: tell(ref, Warmed(f.exception())))
        else:
            self._client = SpeechClient(
                config.stt_api,
                config.stt_api_key,
                connections=config.stt_max_in_flight,
                name=f"{self.name}-loop",
                transport=self._transport,
            )
        self._delivery = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=f"{self.name}-deliver"
        )
        self._publish()

    def stopped(self) -> None:
        """Cancel the requests out (their callers get ``error``) and close the client.
        Deliveries already handed to the feed finish on their thread."""
        for job_id in list(self._jobs):
            job = self._jobs.pop(job_id)
            self._cancel(job)
            self._finish(job.utterance, Outcome("error", error=STOPPED), job.reply)
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._delivery is not None:
            self._delivery.shutdown(wait=False)

    def abandoned(self) -> None:
        """Hung, and given up on by the supervisor: cancel the requests out (a caller waiting
        hears that it stopped) and close the speech client and the delivery thread now, from
        the supervisor's thread, so that no thread of this incarnation outlives it. Nothing
        is counted or published: the next incarnation's counters are the ones shown."""
        for job in list(self._jobs.values()):
            self._cancel(job)
            if job.reply is not None:
                resolve(job.reply, Outcome("error", error=STOPPED))
        client, self._client = self._client, None
        if client is not None:
            client.close()
        if self._delivery is not None:
            self._delivery.shutdown(wait=False)

    def inject_fault(self, kind: str, seconds: float = 0.0) -> None:
        """As :meth:`RelayActor.inject_fault`; ``worker_crash`` and ``worker_hang`` drill the
        local recogniser's worker process instead (this actor goes on)."""
        if not kind.startswith("worker_"):
            super().inject_fault(kind, seconds)
        elif isinstance(self._client, LocalRecogniser):
            self._log.warning("actor.fault_injected", kind=kind, seconds=seconds)
            self._client.drill(kind.removeprefix("worker_"), seconds)

    # -- messages ----------------------------------------------------------------------------

    def submit(self, utterance: Utterance) -> bool:
        """Start transcribing ``utterance``; False if it was refused (``busy`` or ``breaker``,
        counted and dropped)."""
        return self._admit(utterance, None)

    def transcribe(self, utterance: Utterance) -> concurrent.futures.Future[Outcome]:
        """Start transcribing ``utterance``; the future is resolved with its :class:`Outcome`
        when the transcript is stored or dropped, and at once when it is refused
        (:attr:`Outcome.refused`, with :attr:`Outcome.retry_after_s`)."""
        reply: concurrent.futures.Future[Outcome] = concurrent.futures.Future()
        self._admit(utterance, reply)
        return reply

    def forget(self, span: Span) -> Forgotten:
        """Let go of the transcripts the filters keep (to tell repeats) that arrived in
        ``span``; the stored ones are the feed's to forget."""
        return Forgotten(heard=self._filter.forget(span))

    def stats(self) -> TranscriberStats:
        """The counters, now."""
        now = self._clock.monotonic()
        breaker = self._breaker
        state = breaker.state(now)
        if state != "open" and breaker.open_until is not None:
            state = "probing"
        latencies = self._latencies
        return TranscriberStats(
            in_flight=len(self._jobs),
            max_in_flight=self._config.stt_max_in_flight,
            outcomes=dict(self._outcomes),
            latency_p50_ms=round(statistics.median(latencies)) if latencies else None,
            last_error=self._last_error,
            breaker=state,
            consecutive_failures=breaker.consecutive_failures,
            has_key=self._config.can_transcribe,
            local=self._client.stats() if isinstance(self._client, LocalRecogniser) else None,
            latency_buckets=tuple(self._buckets),
            latency_sum_s=self._latency_sum_s,
        )

    def on_receive(self, message: Any) -> Any:
        """A request's end, its expiry, a delivery's end, or the local model's load."""
        if isinstance(message, Heard):
            self._heard(message)
            return None
        if isinstance(message, Expired):
            self._expired(message.job)
            return None
        if isinstance(message, Delivered):
            self._delivered(message)
            return None
        if isinstance(message, Warmed):
            self._warmed(message.error)
            return None
        return super().on_receive(message)

    def _warmed(self, error: BaseException | None) -> None:
        """One line on the model's load at start (why it did not load, and what to do)."""
        if error is None:
            self._log.info("audio.local_stt_ready", note="the model is loaded")
        else:
            remedy = stt_remedy(error, local=True)
            named = {"setting": remedy.setting, "fix": remedy.advice} if remedy else {}
            self._log.warning("audio.local_stt_failed", error=self._safe_error(error), **named)
        self._publish()

    # -- admission ---------------------------------------------------------------------------

    def _admit(
        self, utterance: Utterance, reply: concurrent.futures.Future[Outcome] | None
    ) -> bool:
        config = self._config
        refused = refusal(
            self._breaker,
            self._clock.monotonic(),
            in_flight=len(self._jobs),
            max_in_flight=config.stt_max_in_flight,
            can_transcribe=config.can_transcribe,
        )
        if refused is not None:
            self._finish(utterance, refused, reply)
            return False
        job_id = next(self._ids)
        job = Job(utterance, reply, self._clock.monotonic())
        self._jobs[job_id] = job
        request = request_for(
            config.stt_api, config.stt_base_url, config.stt_model, config.language, utterance.pcm
        )
        timeout_s = config.stt_timeout_ms / 1000
        assert self._client is not None, "started() creates the client"
        job.call = self._client.send(request, timeout_s)
        job.call.add_done_callback(functools.partial(self._on_answer, self.actor_ref, job_id))
        ref = self.actor_ref

        def expire() -> None:
            tell(ref, Expired(job_id))

        job.expiry = self._clock.call_later(timeout_s, expire)
        self._publish()
        return True

    @staticmethod
    def _on_answer(
        ref: pykka.ActorRef[Any], job_id: int, call: concurrent.futures.Future[str]
    ) -> None:
        """A request ended: tell the actor (nothing else is touched on this thread)."""
        if call.cancelled():  # expired or stopped: the actor has finished the job already
            return
        error = call.exception()
        tell(ref, Heard(job_id, None if error is not None else call.result(), error))

    # -- answers (on this actor's thread) ----------------------------------------------------

    def _heard(self, message: Heard) -> None:
        job = self._jobs.pop(message.job, None)
        if job is None:  # it expired first and was counted then
            return
        if job.expiry is not None:
            job.expiry()
        latency_ms = self._latency(job)
        if message.error is not None or message.text is None:
            error = message.error or SttBadAnswer("no transcript")
            reason = "timeout" if isinstance(error, SttTimeout) else "error"
            remedy = stt_remedy(error, local=self._config.local)
            self._failed(job, reason, self._safe_error(error), latency_ms, remedy)
            return
        self._succeeded()
        text, utterance = message.text, job.utterance
        dropped = "empty" if not text else self._filtered(utterance, text)
        if dropped is not None:
            self._finish(utterance, Outcome(dropped), job.reply, latency_ms, text)
            return
        self._hand_to_feed(utterance, job.reply, latency_ms, text)

    def _expired(self, job_id: int) -> None:
        job = self._jobs.pop(job_id, None)
        if job is None:
            return
        self._cancel(job)
        error = f"no answer within {self._config.stt_timeout_ms} ms"
        remedy = stt_remedy(SttTimeout(error), local=self._config.local)
        self._failed(job, "timeout", error, self._latency(job), remedy)

    def _filtered(self, utterance: Utterance, text: str) -> str | None:
        try:
            return self._filter.check(utterance.source, text, utterance.quiet, self._clock.now_ms())
        except Exception as exc:  # a filter's bug drops this transcript; the actor lives on
            self._last_error = self._safe_error(exc)
            self._log.exception("audio.filter_failed")
            return "error"

    def _failed(
        self, job: Job, reason: str, error: str, latency_ms: int, remedy: Remedy | None
    ) -> None:
        self._last_error = f"{error}; {remedy.advice}" if remedy else error
        named = {"setting": remedy.setting, "fix": remedy.advice} if remedy else {}
        now = self._clock.monotonic()
        if self._breaker.failure(now):
            until = self._breaker.open_until
            self._log.warning(
                "audio.breaker_open",
                consecutive_failures=self._breaker.consecutive_failures,
                cool_off_s=round(until - now, 1) if until is not None else None,
                error=error,
                **named,
            )
        outcome = Outcome(reason, error=error)
        self._finish(job.utterance, outcome, job.reply, latency_ms, named=named)

    def _succeeded(self) -> None:
        if self._breaker.success():
            self._log.info("audio.breaker_closed")

    def _hand_to_feed(
        self,
        utterance: Utterance,
        reply: concurrent.futures.Future[Outcome] | None,
        latency_ms: int,
        text: str,
    ) -> None:
        """Store the transcript on the delivery thread; its end comes back as a message."""
        assert self._delivery is not None, "started() creates the delivery thread"
        record = FeedPost(MARKS[utterance.source] + text, "normal", TRANSCRIPT_SOURCE, STREAM)
        store, ref, safe = self._store, self.actor_ref, self._safe_error

        def run() -> None:
            try:
                outcome = Outcome("stored", item=store(record))
            except Exception as exc:  # the feed did not take it: this transcript is lost
                outcome = Outcome("undelivered", error=safe(exc))
            done = Delivered(utterance, reply, latency_ms, text, outcome)
            if not tell(ref, done) and reply is not None:  # stopped meanwhile: answer anyway
                resolve(reply, outcome)

        self._delivery.submit(run)

    def _delivered(self, message: Delivered) -> None:
        if message.outcome.error is not None:
            self._last_error = message.outcome.error
        self._finish(
            message.utterance, message.outcome, message.reply, message.latency_ms, message.text
        )

    # -- bookkeeping -------------------------------------------------------------------------

    def _finish(
        self,
        utterance: Utterance,
        outcome: Outcome,
        reply: concurrent.futures.Future[Outcome] | None,
        latency_ms: int | None = None,
        text: str = "",
        *,
        named: dict[str, str] | None = None,
    ) -> None:
        """Count the outcome, write its one log line (with the ``setting`` and ``fix`` a
        failure ``named``), publish the counters, answer the caller."""
        self._outcomes[outcome.reason] += 1
        item = outcome.item
        if latency_ms is None:
            (self._log.debug if outcome.reason == "no_key" else self._log.info)(
                "audio.refused",
                source=utterance.source,
                duration_ms=utterance.duration_ms,
                reason=outcome.reason,
            )
        else:
            self._log.info(
                "audio.transcript",
                source=utterance.source,
                duration_ms=utterance.duration_ms,
                latency_ms=latency_ms,
                chars=len(text),
                outcome=outcome.reason,
                id=item.id if item is not None else None,
                error=outcome.error,
                **(named or {}),
            )
            if text:
                self._log.debug("audio.transcript_text", source=utterance.source, text=text)
        self._publish()  # first: a client that reads /health once answered sees it counted
        if reply is not None:
            resolve(reply, outcome)

    def _publish(self) -> None:
        if self._published is not None:
            self._published.publish(self.stats())

    def _latency(self, job: Job) -> int:
        seconds = self._clock.monotonic() - job.started
        latency_ms = round(seconds * 1000)
        self._latencies.append(latency_ms)
        self._buckets[latency_bucket(seconds)] += 1
        self._latency_sum_s += seconds
        return latency_ms

    def _cancel(self, job: Job) -> None:
        if job.expiry is not None:
            job.expiry()
        if job.call is not None:
            job.call.cancel()  # cancels the task on the event loop's thread

    def _safe_error(self, exc: BaseException) -> str:
        """``exc`` as text fit for a log line and ``/health``: made safe, the key taken out."""
        text = str(exc) if isinstance(exc, SttError) else safe_error_text(exc)
        key = self._config.stt_api_key
        if key:
            text = text.replace(key, "[redacted:api-key]")
        return safe_text(text)[:300]
