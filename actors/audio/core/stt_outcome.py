"""What the transcriber answers: the outcome of one utterance, why one is refused at once,
and its counters.

Plain records, so a handler of ``POST /audio`` and ``/health`` read them without knowing the
actor: an outcome that is :attr:`Outcome.refused` is a 503 with ``Retry-After``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, get_args

from actors.common.breaker import Breaker
from actors.common.latency import empty_latency_buckets
from actors.core.records import FeedRecord

REFUSALS: Final = ("busy", "breaker")
"""The reasons an utterance is refused at once, before any request."""
BUSY_RETRY_S: Final = 1.0
"""The ``Retry-After`` of a refusal while every slot (or the one probe) is taken."""
NO_KEY: Final = (
    "no speech service key: set STT_API_KEY (OPENROUTER_API_KEY serves only a speech service "
    "at AGENT_BASE_URL's origin); a local server that asks for none takes any placeholder"
)
SttState = Literal["ok", "degraded", "open", "probing", "no_key"]
"""The transcriber as seen from outside: its breaker's state, or ``no_key`` (nothing is
sent: there is no key to send with)."""
STT_STATES: Final[tuple[SttState, ...]] = get_args(SttState)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one utterance."""

    reason: str
    """``stored``; or why nothing was: ``no_key`` (no speech service key: nothing is sent),
    ``busy``, ``breaker`` (refused at once), ``timeout``,
    ``error`` (the service failed), ``empty`` (nothing heard), a filter's reason (``short``,
    ``invented``, ...), ``undelivered`` (the feed did not take it)."""
    item: FeedRecord | None = None
    """The stored feed item (its id and marked text), when ``stored``."""
    retry_after_s: float | None = None
    """When refused: how long until asking again may succeed."""
    error: str | None = None
    """What failed (``timeout``, ``error``, ``undelivered``), safe to show."""

    @property
    def refused(self) -> bool:
        """Refused at once, before any request: the caller may answer 503 + Retry-After."""
        return self.reason in REFUSALS


def refusal(
    breaker: Breaker, now: float, *, in_flight: int, max_in_flight: int, can_transcribe: bool
) -> Outcome | None:
    """Why an utterance is refused at ``now``, before any request is made, or ``None``: no
    key to send with, the breaker open (or half-open with its one probe out), or every one of
    ``max_in_flight`` slots taken. There is no queue: a refused utterance is dropped, and a
    caller is told when asking again may succeed."""
    if not can_transcribe:
        return Outcome("no_key", error=NO_KEY)
    if breaker.is_open(now):
        assert breaker.open_until is not None
        return Outcome("breaker", retry_after_s=round(breaker.open_until - now, 3))
    if breaker.open_until is not None and in_flight:  # half-open: one probe at a time
        return Outcome("breaker", retry_after_s=BUSY_RETRY_S)
    if in_flight >= max_in_flight:
        return Outcome("busy", retry_after_s=BUSY_RETRY_S)
    return None


WorkerState = Literal["idle", "loading", "ready", "decoding", "failed"]
"""The local recogniser's worker: ``idle`` while no model is loaded (before the first
utterance, or the load at start when a source is captured), ``loading``, ``ready``,
``decoding``, ``failed`` (the model did not load: the next utterance tries again)."""


@dataclass(frozen=True, slots=True)
class LocalStats:
    """The worker as ``/health.audio.transcriber.local`` shows it."""

    state: WorkerState
    model: str
    pid: int | None
    rss_mb: float | None
    real_time_factor: float | None
    """Decoding time over audio time, the median of the recent utterances."""
    restarts: int
    decoded: int


@dataclass(frozen=True, slots=True)
class TranscriberStats:
    """The transcriber's counters, for ``/health`` and ``/metrics``."""

    in_flight: int
    max_in_flight: int
    outcomes: Mapping[str, int]
    """Utterances by :attr:`Outcome.reason` since the transcriber started."""
    latency_p50_ms: int | None
    """The median latency of the recent calls; None before the first."""
    last_error: str | None
    """The latest failure, safe to show."""
    breaker: str
    """``ok``, ``degraded`` (failing, not yet open), ``open`` or ``probing`` (half-open)."""
    consecutive_failures: int
    has_key: bool = False
    """A speech service key is set: without one nothing is sent (every utterance ``no_key``)."""
    latency_buckets: tuple[int, ...] = field(default_factory=empty_latency_buckets)
    """Requests answered or failed, by latency, in the LLM's buckets
    (:data:`~actors.common.latency.LATENCY_BUCKETS_S`, not cumulative, ``+Inf`` last), since
    the transcriber first started: a restarted one counts on from these."""
    latency_sum_s: float = 0.0
    local: LocalStats | None = None
    """The local recogniser's worker, when speech is recognised on this machine."""

    @property
    def state(self) -> SttState:
        """``no_key`` without a key, else the breaker's state."""
        if not self.has_key:
            return "no_key"
        return self.breaker if self.breaker in STT_STATES else "ok"


NO_STATS: Final = TranscriberStats(
    in_flight=0,
    max_in_flight=0,
    outcomes={},
    latency_p50_ms=None,
    last_error=None,
    breaker="ok",
    consecutive_failures=0,
)
"""The counters before the transcriber first publishes them."""
