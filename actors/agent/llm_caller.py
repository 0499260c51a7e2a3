"""LLMCaller: the only actor that talks to the LLM.

One tick is a chain of attempts, each one OpenAI-compatible chat-completions request through
httpx on an event loop private to this actor's thread:

* ``asyncio.wait_for`` bounds each request, body included, by ``AGENT_TIMEOUT_MS`` (a server
  that trickles bytes cannot hold it longer);
* HTTP 429, 5xx and connection errors are retried on the same model after a backoff that
  honours ``Retry-After``; the retry is a message scheduled on the clock, so the actor never
  sleeps and stays free for its supervisor's pings;
* any other failure, or a model whose retries are spent, moves on to the next of
  ``AGENT_FALLBACK_MODELS``; whatever the call raises is such a failure (an exception that is
  no :class:`LLMError` becomes :class:`LLMUnexpectedError`), never a crash of this actor;
* the whole chain is bounded by the tick's budget (one timeout a model).

The model's hud and digest are redacted as soon as they are read
(:func:`~actors.agent.core.answer_redaction.redacted_answer`), before the tick's result is told to
the digest store or logged: a vision model reads keys off the screen's pixels.

Every error text a tick reports (its log line, ``/health``'s ``lastError``) is made safe by
:func:`~actors.core.error_text.safe_error_text`: an exception's message may quote the request's
``Authorization`` header, or a server may echo the key it refused.

Each request asks for structured output at the level :mod:`actors.agent.core.response_format`
picks; a server that refuses a level (its error names the format) is asked again at once one
level down, within the same request's time, and the refusal is no retry, fallback, failure
or breaker (it is counted, as every request is, as a ``refused`` one); any other 4xx is an
ordinary failure. The level that answered is remembered per model and base URL in a cell
that outlives this actor's incarnations (``/health`` reads it); the negotiation is
:mod:`actors.agent.format_negotiation`'s.

The relay sends no request at start, so the first call to each model is also its check,
logged as the ``doctor.check`` line ``sinain-relay doctor`` would give it
(:mod:`actors.agent.first_calls`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pykka

from actors.agent.chat_request import call_chat, served_models
from actors.agent.core.answer_redaction import redacted_answer
from actors.agent.core.completion import Analysis, Completion, parse_analysis, request_body
from actors.agent.core.events import AgentEvent, TickFailed
from actors.agent.core.hud_check import checked_hud, judge
from actors.agent.core.llm_remedy import llm_remedy, said_once
from actors.agent.core.response_format import NO_LEVELS, FormatLevels, Level
from actors.agent.core.ticks import LLMAttempt, LLMRequest, TickDone, TickResult
from actors.agent.digest_store import DigestStore
from actors.agent.first_calls import NOTHING_JUDGED, CallOutcome, Judged, first_call_check
from actors.agent.format_negotiation import negotiated
from actors.agent.local_llm import LocalModels
from actors.common.backoff import backoff
from actors.common.http_library import httpx
from actors.common.remedy import Remedy
from actors.core.error_text import safe_error_text
from actors.core.errors import (
    LLMError,
    LLMHTTPError,
    is_retryable,
    retry_after_s,
)
from actors.core.screen_image import NOTHING_SENT, ScreenImage, SentImages
from actors.kernel.base import ChildHandle, RelayActor, Reporter
from actors.kernel.clock import Clock
from actors.kernel.listeners import Listeners
from actors.kernel.published import Published
from config.agent.settings import AgentSettings

MAX_RETRIES = 2
"""Retries of one model after a 429, a 5xx or a connection error."""
RETRY_BASE_S = 0.5
"""First retry delay; it doubles, with up to :data:`RETRY_JITTER` more at random, unless
``Retry-After`` says more."""
RETRY_JITTER = 0.2


@dataclass(frozen=True, slots=True)
class _Attempt:
    """One request of a tick's chain (also the message that schedules a retry)."""

    request: LLMRequest
    model_index: int
    retry: int
    started: float
    deadline: float
    errors: tuple[str, ...] = ()
    attempts: tuple[LLMAttempt, ...] = ()
    """The requests made so far, for the per-model counters."""
    remedy: Remedy | None = None
    """What the last error points at (:func:`llm_remedy`)."""


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every incarnation of the caller (httpx's defaults: certifi's CAs).

    Building one loads the CA bundle: milliseconds of CPU, most of it holding the GIL that
    ingestion needs, which a caller that crashes in a loop would pay at every restart.
    """
    return httpx.create_ssl_context()


class LLMCaller(RelayActor):
    """Runs each tick's chain of attempts, then reports to the store and the ticker."""

    name = "llm"

    def __init__(
        self,
        *,
        clock: Clock,
        digest: ChildHandle[DigestStore],
        events: Listeners[AgentEvent] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        formats: Published[FormatLevels] | None = None,
        sent_images: Published[SentImages] | None = None,
        judged: Published[Judged] | None = None,
        local: LocalModels | None = None,
        report: Reporter | None = None,
        redact: bool = True,
    ) -> None:
        super().__init__(report=report)
        self._clock = clock
        self._redact = redact
        """``RELAY_REDACT``: whether the model's words go through the redactor's patterns too."""
        self._formats = formats if formats is not None else Published(NO_LEVELS)
        """The response-format level that last answered, per model and base URL (written
        only here)."""
        self._sent = sent_images if sent_images is not None else Published(NOTHING_SENT)
        """The images recent calls sent (written only here, after a call that answered)."""
        self._judged = judged if judged is not None else Published(NOTHING_JUDGED)
        """The models whose first call was logged as a check (written only here)."""
        self._local = local if local is not None else LocalModels()
        """The model on this machine (``AGENT_API=local``), shared by every incarnation."""
        self._digest = digest
        self._events: Listeners[AgentEvent] = events or Listeners()
        """Where a failed tick is reported (the digest store counts it)."""
        self._transport = transport
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: httpx.AsyncClient | None = None

    def started(self) -> None:
        """Create the private event loop and the HTTP client."""
        self._loop = asyncio.new_event_loop()
        self._client = httpx.AsyncClient(
            transport=self._transport,
            verify=_tls_context(),
            limits=httpx.Limits(max_connections=4, max_keepalive_connections=2),
            headers={"X-Title": "sinain-relay"},
        )

    def stopped(self) -> None:
        """Close the client and the loop."""
        if self._loop is None:
            return
        if self._client is not None:
            self._loop.run_until_complete(self._client.aclose())
        self._loop.close()
        self._loop = None

    def complete(self, request: LLMRequest) -> None:
        """Start a tick's chain with its first model."""
        now = self._clock.monotonic()
        budget_s = request.config.tick_budget_ms(images=bool(request.window.images)) / 1000
        self._run(_Attempt(request, model_index=0, retry=0, started=now, deadline=now + budget_s))

    def on_receive(self, message: Any) -> Any:
        """A scheduled retry."""
        if isinstance(message, _Attempt):
            self._run(message)
            return None
        return super().on_receive(message)

    def _run(self, attempt: _Attempt) -> None:
        request = attempt.request
        config = request.config
        models = config.models_for(images=bool(request.window.images))
        model = models[attempt.model_index]
        remaining = attempt.deadline - self._clock.monotonic()
        if remaining <= 0:
            self._fail(attempt, "the tick's budget is spent")
            return
        began = self._clock.monotonic()
        refusals: list[LLMAttempt] = []
        try:
            timeout_s = min(config.timeout_ms / 1000, remaining)
            answer = negotiated(
                request, model, timeout_s, refusals,
                call=self._call, clock=self._clock, formats=self._formats, log=self._log,
            )  # fmt: skip
        except LLMError as exc:
            errors = (*attempt.errors, f"{model}: {safe_error_text(exc)}"[:300])
            delay = self._retry_delay(exc, attempt.retry)
            now = self._clock.monotonic()
            last = LLMAttempt(model, now - began - _spent(refusals), ok=False)
            failed = replace(
                attempt,
                errors=errors,
                attempts=(*attempt.attempts, *refusals, last),
                remedy=llm_remedy(exc, model=model, config=config),
            )
            if delay is not None and now + delay < attempt.deadline:
                self._schedule(replace(failed, retry=attempt.retry + 1), delay)
                return
            self._judge(request, model, CallOutcome(now - began, error=exc))
            if attempt.model_index + 1 < len(models):
                self._log.info(
                    "llm.fallback", failed=model, next=models[attempt.model_index + 1],
                    **_setting(failed.remedy),
                )  # fmt: skip
                self._run(replace(failed, model_index=attempt.model_index + 1, retry=0))
                return
            self._fail(failed, f"{type(exc).__name__}")
            return
        except Exception as exc:
            # A bug, not an LLM failure: finish the tick, then let the supervisor restart us.
            self._fail(attempt, safe_error_text(exc))
            raise
        seconds = self._clock.monotonic() - began
        answered = LLMAttempt(model, seconds - _spent(refusals), ok=True)
        outcome = CallOutcome(seconds, answer.level, answer.refused, answer.images_refused)
        self._judge(request, model, outcome)
        done = replace(attempt, attempts=(*attempt.attempts, *refusals, answered))
        self._succeed(done, model, answer.completion, answer.level, answer.images)

    def _judge(self, request: LLMRequest, model: str, outcome: CallOutcome) -> None:
        """Log the ``doctor.check`` line of the first call to ``model`` (at this base URL)
        that a tick asked first (:mod:`actors.agent.first_calls`)."""
        config = request.config
        check = first_call_check(
            self._judged, request, model, outcome, lambda: self._served(config)
        )
        if check is None:
            return
        if check.worrying:
            self._log.warning("doctor.check", tick_id=request.tick_id, **check.log_fields())
        else:
            self._log.info("doctor.check", tick_id=request.tick_id, **check.log_fields())

    def _served(self, config: AgentSettings) -> tuple[str, ...]:
        """What the server on this machine lists at ``GET /models`` (a free listing)."""
        assert self._loop is not None, "started() creates the loop"
        assert self._client is not None, "started() creates the client"
        return served_models(
            self._loop, self._client, config.base_url, api_key=config.api_key, timeout_s=2.0
        )

    def _retry_delay(self, error: LLMError, retries: int) -> float | None:
        if not is_retryable(error) or retries >= MAX_RETRIES:
            return None
        delay = backoff(retries, base=RETRY_BASE_S, jitter=RETRY_JITTER)
        asked = retry_after_s(error.retry_after) if isinstance(error, LLMHTTPError) else None
        return max(delay, asked or 0.0)

    def _schedule(self, attempt: _Attempt, delay: float) -> None:
        ref = self.actor_ref

        def fire() -> None:
            with contextlib.suppress(pykka.ActorDeadError):  # replaced: the tick is lost
                ref.tell(attempt)

        self._log.info(
            "llm.retry",
            tick_id=attempt.request.tick_id,
            in_s=round(delay, 3),
            attempt=attempt.retry,
            error=attempt.errors[-1],
            **_setting(attempt.remedy),
        )
        self._clock.call_later(delay, fire)

    def _fail(self, attempt: _Attempt, error: str) -> None:
        latency_ms = round((self._clock.monotonic() - attempt.started) * 1000)
        last = attempt.errors[-1] if attempt.errors else error
        remedy = attempt.remedy
        self._events.send(
            TickFailed(f"{last}; {remedy.advice}" if remedy else last, attempt.attempts)
        )
        detail = {
            **attempt.request.why,
            "error": error,
            "errors": said_once(attempt.errors),
            **_setting(remedy),
            "latencyMs": latency_ms,
            "model": attempt.request.config.models_for(images=bool(attempt.request.window.images))[
                0
            ],
        }
        if attempt.request.window.images:
            detail["images"] = len(attempt.request.window.images)
        failed = TickDone(attempt.request.tick_id, "failed", detail=detail)
        self._reply(attempt.request.reply_to, failed)

    def _succeed(
        self,
        attempt: _Attempt,
        model: str,
        completion: Completion,
        level: Level,
        images: tuple[ScreenImage, ...],
    ) -> None:
        request = attempt.request
        config = request.config
        latency_ms = round((self._clock.monotonic() - attempt.started) * 1000)
        checked = checked_hud(parse_analysis(completion.content), completion.content)
        analysis, redacted = redacted_answer(checked.analysis, patterns=self._redact)
        if images:  # before the tick ends: the next one must not send them again
            self._sent.publish(self._sent.value.with_sent(images))
        result = TickResult(
            tick_id=request.tick_id,
            analysis=analysis,
            window=request.window,
            model=model,
            latency_ms=latency_ms,
            tokens_in=completion.tokens_in,
            tokens_out=completion.tokens_out,
            push_to_feed=config.push_to_feed,
            cost_usd=completion.cost_usd,
            fallback=attempt.model_index > 0,
            attempts=attempt.attempts,
            answered_model=completion.model,
            hud_withheld=checked.withheld,
            escalation=config.escalation,
            images=len(images),
            redacted=redacted,
        )
        self._tell_peer(self._digest, DigestStore.record, result)
        detail: dict[str, Any] = {
            **request.why,
            "model": completion.model or model,
            "latencyMs": latency_ms,
            "tokensIn": completion.tokens_in,
            "tokensOut": completion.tokens_out,
            "parsedOk": analysis.parsed_ok,
            "responseFormat": level,
            "hud": analysis.hud,
        }
        if completion.model not in (None, model):
            detail["askedModel"] = model
        if images:
            detail["images"] = len(images)
        elif request.window.images:  # the model refused them, now or lately
            detail["imagesDropped"] = len(request.window.images)
        if checked.withheld is not None:
            detail["hudWithheld"] = checked.withheld
        if redacted:
            detail["redacted"] = sum(redacted.values())
        if attempt.errors:
            detail["errors"] = said_once(attempt.errors)
        if config.log_verbose:
            detail["digest"] = analysis.digest[:300]
        self._reply(
            request.reply_to,
            TickDone(
                request.tick_id,
                "ok",
                request.marks,
                detail,
                fingerprint=request.fingerprint,
                gist=request.gist,
            ),
        )

    def _call(self, request: LLMRequest, model: str, timeout_s: float) -> Completion:
        assert self._loop is not None, "started() creates the loop"
        assert self._client is not None, "started() creates the client"
        config = request.config
        body = request_body(  # at the level the negotiation put in the config
            model,
            request.prompt,
            max_tokens=config.max_tokens,
            temperature=config.temperature,
            response_format=config.response_format,
            images=request.window.images,
        )
        if config.local:  # the same body, to the model on this machine, its hud pushed ahead
            ahead = self._hud_ahead(request) if config.push_to_feed else None
            return self._local.chat(model, config.local_threads).complete(body, timeout_s, ahead)
        url = f"{config.base_url}/chat/completions"
        return call_chat(
            self._loop, self._client, url, api_key=config.api_key, body=body, timeout_s=timeout_s
        )

    def _hud_ahead(self, request: LLMRequest) -> Callable[[str], None]:
        """What takes a hud the model wrote ahead of its digest: one the gate lets through
        goes to the digest store at once, made safe as the whole answer will be."""

        def ahead(hud: str) -> None:
            if judge(hud) is None:
                safe, _ = redacted_answer(Analysis(hud, "", True), patterns=self._redact)
                self._tell_peer(self._digest, DigestStore.hud_ahead, request.tick_id, safe.hud)

        return ahead


def _spent(attempts: list[LLMAttempt]) -> float:
    return sum(attempt.seconds for attempt in attempts)


def _setting(remedy: Remedy | None) -> dict[str, str]:
    """A log line's ``setting`` and ``fix`` for what an error points at (none for nothing)."""
    return {} if remedy is None else {"setting": remedy.setting, "fix": remedy.advice}
