"""DigestStore: owns the agent entries, the latest digest, the counters and the last hud pushed."""

from __future__ import annotations

import contextlib
import sqlite3
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson
import pykka

from actors.core import shapes
from actors.core.completion import NO_OUTPUT
from actors.core.cost import call_cost, estimate_cost
from actors.core.entries import EMPTY_AGENT, AgentEntry, AgentSnapshot
from actors.core.error_text import safe_text
from actors.core.model_stats import ModelStats, models_from_json
from actors.core.situation import Situation
from actors.core.ticks import LLMAttempt, TickResult
from actors.feed_buffer import FeedBuffer
from actors.kernel.base import ChildHandle, Reporter
from actors.kernel.clock import Cancel, Clock
from actors.kernel.durable import DurableActor, Prune
from actors.kernel.published import Published
from actors.kernel.storage import Store
from actors.situation_outbox import SituationOutbox
from config.app_names import normalize_app_name
from config.prices import PriceTable, load_prices

AGENT_RING = 50
"""Agent entries kept for ``/agent/last`` and ``/agent/history``."""
DIGEST_PREVIEW_CHARS = 200
"""``/health.agent.lastDigest`` shows this much of the latest digest."""
_NOT_PUSHED = (NO_OUTPUT, "Idle")
DAY_MS = 86_400_000
PRUNE_INTERVAL_S = 3600.0
"""How often entries older than the retention are deleted."""


def _median(values: list[int]) -> int | None:
    """The median, rounded; ``None`` of nothing. (``statistics`` would import ``decimal`` and
    ``fractions``: a megabyte resident for one median.)"""
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return round((ordered[middle - 1] + ordered[middle]) / 2)


def _sql_int(value: int) -> int:
    """``value`` within SQLite's integers (a larger Python int raises ``OverflowError``)."""
    return min(max(value, -(2**63)), 2**63 - 1)


@dataclass(slots=True)
class _Counters:
    """The agent's counters; persisted as one JSON row."""

    total_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    last_analysis_ts: int | None = None
    idle_skips: int = 0
    empty_skips: int = 0
    unchanged_skips: int = 0
    minor_skips: int = 0
    deferred: int = 0
    failures: int = 0
    last_error: str | None = None
    parse_failures: int = 0
    last_pushed_hud: str = ""
    fallbacks: int = 0
    """Ticks answered by a model other than the first."""
    situation_write_failures: int = 0
    """SITUATION.md writes that failed (see :mod:`actors.situation_writer`)."""
    models: dict[str, ModelStats] = field(default_factory=dict)
    """Per-model requests, latencies, tokens and cost (absent from rows of older relays)."""
    huds_withheld: dict[str, int] = field(default_factory=dict)
    """Answers whose hud was no line a user can read, by reason (:mod:`actors.core.hud_check`)."""


class DigestStore(DurableActor):
    """Stores what each successful tick produced and pushes new hud lines to the feed.

    A failed tick changes only the failure counters: the stored hud, digest and entries stay.
    The newest :data:`AGENT_RING` entries are also in memory; older ones stay in the database
    for ``retention_days`` and are read back by :meth:`history_range`. With ``situation``
    (``RELAY_SITUATION_FILE`` set), each committed entry and its tick's window are posted
    there for the SITUATION.md writer, which never holds this actor up.
    """

    name = "digest"

    def __init__(
        self,
        *,
        clock: Clock,
        store: Store,
        feed: ChildHandle[FeedBuffer],
        retention_days: float = 7.0,
        published: Published[AgentSnapshot] | None = None,
        prices: PriceTable | None = None,
        situation: SituationOutbox | None = None,
        report: Reporter | None = None,
    ) -> None:
        super().__init__(store=store, report=report)
        self._clock = clock
        self._situation = situation
        self._situation_next: Situation | None = None
        """The situation of the entry recorded since the last commit, posted after it."""
        self._prices = prices if prices is not None else load_prices()
        self._feed = feed
        self._published = published or Published(EMPTY_AGENT)
        self._retention_ms = round(retention_days * DAY_MS)
        self._entries: deque[AgentEntry] = deque(maxlen=AGENT_RING)
        self._next_id = 1
        self._counters = _Counters()
        self._prune_timer: Cancel | None = None
        self._quiet: tuple[float, float] | None = None
        """The quiet spell being counted, ``(since, interval_s)`` on the clock's monotonic
        seconds, or ``None`` (see :meth:`quiet`)."""
        self._quiet_seen: tuple[float, float] | None = None
        """The last spell told, counted or not, and how many of its intervals are banked."""
        self._quiet_banked = 0
        self._quiet_shown = 0
        """The most intervals of the spell a reader was shown (the count never goes back)."""

    def restore(self, db: sqlite3.Connection) -> None:
        """Reload the newest entries and the counters; schedule retention pruning."""
        rows = db.execute(
            "SELECT entry FROM agent_entries ORDER BY id DESC LIMIT ?", (AGENT_RING,)
        ).fetchall()
        self._entries.extend(AgentEntry.from_record(row[0]) for row in reversed(rows))
        last = db.execute("SELECT MAX(id) FROM agent_entries").fetchone()[0]
        self._next_id = (last or 0) + 1
        state = db.execute("SELECT value FROM agent_state WHERE key = 'counters'").fetchone()
        if state is not None:
            known = set(_Counters.__dataclass_fields__) - {"models"}
            saved = orjson.loads(state[0])
            self._counters = _Counters(
                **{k: v for k, v in saved.items() if k in known},
                models=models_from_json(saved.get("models")),
            )
        if rows:
            self._log.info("digest.restored", entries=len(rows), next_id=self._next_id)
        self._request_prune()

    def committed(self) -> None:
        """Publish the newest entries as they are on disk now (streams and long-polls
        read them, and the context builder takes the previous digest from them); post the
        newest entry's situation for the SITUATION.md writer."""
        self._published.publish(AgentSnapshot(entries=tuple(self._entries)))
        if self._situation is not None and self._situation_next is not None:
            self._situation.post(self._situation_next)
            self._situation_next = None

    def stopped(self) -> None:
        """Disarm the prune timer, bank the quiet spell's idle skips, then commit and close."""
        if self._prune_timer is not None:
            self._prune_timer()
            self._prune_timer = None
        if self._db is not None and not self._failed:
            self._bank_idle_beats(self._clock.monotonic())
        super().stopped()

    def prune(self) -> None:
        """Drop entries older than the retention, keep the newest 50; then re-arm the timer."""
        cutoff = self._clock.now_ms() - self._retention_ms
        keep_from = self._next_id - AGENT_RING
        self._write("DELETE FROM agent_entries WHERE ts < ? AND id < ?", (cutoff, keep_from))
        ref = self.actor_ref

        def fire() -> None:
            with contextlib.suppress(pykka.ActorDeadError):  # a dead incarnation prunes nothing
                ref.tell(Prune())

        self._prune_timer = self._clock.call_later(PRUNE_INTERVAL_S, fire)

    def _save_counters(self) -> None:
        self._write(
            "INSERT OR REPLACE INTO agent_state (key, value) VALUES ('counters', ?)",
            (orjson.dumps(asdict(self._counters)),),
        )

    def record(self, result: TickResult) -> AgentEntry:
        """Store a successful tick; push its hud unless it is ``—`` (none, or withheld as no
        line a user can read: counted by reason), ``Idle`` or a repeat."""
        analysis = result.analysis
        counters = self._counters
        push = (
            result.push_to_feed
            and analysis.hud not in _NOT_PUSHED
            and analysis.hud != counters.last_pushed_hud
        )
        if push:
            push = self._tell_peer(self._feed, FeedBuffer.push_agent, analysis.hud)
            if push:
                counters.last_pushed_hud = analysis.hud
        window = result.window
        now = self._clock.now_ms()
        entry = AgentEntry(
            id=self._next_id,
            ts=now,
            hud=analysis.hud,
            digest=analysis.digest,
            current_app=normalize_app_name(window.current_app),
            app_history=tuple((normalize_app_name(a.app), a.ts) for a in window.app_history),
            audio_count=window.audio_count,
            screen_count=window.screen_count,
            pushed=push,
            model=result.model,
            latency_ms=result.latency_ms,
            tokens_in=result.tokens_in,
            tokens_out=result.tokens_out,
            parsed_ok=analysis.parsed_ok,
            context_freshness_ms=max(0, now - window.newest_ms)
            if window.newest_ms is not None
            else None,
        )
        self._write(
            "INSERT INTO agent_entries (id, ts, entry) VALUES (?, ?, ?)",
            (entry.id, entry.ts, entry.to_record()),
        )
        self._next_id += 1
        self._entries.append(entry)
        if self._situation is not None:
            self._situation_next = Situation(result.tick_id, entry, window)
        counters.total_calls += 1
        counters.tokens_in += result.tokens_in
        counters.tokens_out += result.tokens_out
        counters.last_analysis_ts = entry.ts
        if not analysis.parsed_ok:
            counters.parse_failures += 1
        if result.hud_withheld is not None:
            withheld = counters.huds_withheld
            withheld[result.hud_withheld] = withheld.get(result.hud_withheld, 0) + 1
        self._count_model_call(result)
        self._save_counters()
        return entry

    def _model(self, model: str) -> ModelStats:
        stats = self._counters.models.get(model)
        if stats is None:
            stats = self._counters.models[model] = ModelStats()
        return stats

    def _count_model_call(self, result: TickResult) -> None:
        """Count the tick's requests per model, and price the answer."""
        for attempt in result.attempts:
            self._model(attempt.model).observe(attempt.seconds, ok=attempt.ok)
        cost, source = call_cost(
            result.model, result.tokens_in, result.tokens_out, result.cost_usd, self._prices
        )
        self._model(result.model).answered(result.tokens_in, result.tokens_out, cost, source)
        if result.fallback:
            self._counters.fallbacks += 1

    def record_failure(self, error: str, attempts: tuple[LLMAttempt, ...] = ()) -> None:
        """Count a failed tick and its requests per model; nothing else changes."""
        self._counters.failures += 1
        self._counters.last_error = error
        for attempt in attempts:
            self._model(attempt.model).observe(attempt.seconds, ok=attempt.ok)
        self._save_counters()

    def record_situation_failure(self) -> None:
        """Count a SITUATION.md write that failed (the writer logged why)."""
        self._counters.situation_write_failures += 1
        self._save_counters()

    def record_idle_skip(self) -> None:
        """Count a tick that ran and found nothing new (one tried again, or started by hand)."""
        self._counters.idle_skips += 1
        self._save_counters()

    def quiet(self, since: float | None, interval_s: float, at: float) -> None:
        """Ticker -> DigestStore: at ``at`` (monotonic seconds), the agent has been quiet since
        ``since``, or is not quiet (``None``).

        Each whole ``interval_s`` of a spell counts one idle skip: what a tick every
        ``interval_s`` would have skipped, counted without a timer. The intervals that passed
        before ``at`` are banked into the stored counter when a spell ends (never fewer than
        a reader was already shown: the counter only grows); a spell told again (an empty
        tick did not end it) goes on from where it was.
        """
        self._bank_idle_beats(at)
        spell = (since, interval_s) if since is not None and interval_s > 0 else None
        if spell is not None and spell != self._quiet_seen:
            self._quiet_seen, self._quiet_banked, self._quiet_shown = spell, 0, 0
        self._quiet = spell

    def _beats(self, at: float) -> int:
        """Whole intervals of the current spell by ``at``, never fewer than were shown."""
        if self._quiet is None:
            return self._quiet_banked
        since, interval_s = self._quiet
        return max(int((at - since) // interval_s), self._quiet_shown, self._quiet_banked)

    def _idle_beats(self) -> int:
        """Idle skips of the current spell not yet banked, as of now (what readers see)."""
        beats = self._beats(self._clock.monotonic())
        self._quiet_shown = beats
        return beats - self._quiet_banked

    def _bank_idle_beats(self, at: float) -> None:
        beats = self._beats(at) - self._quiet_banked
        if beats > 0:
            self._quiet_banked += beats
            self._counters.idle_skips += beats
            self._save_counters()

    def record_unchanged_skip(self) -> None:
        """Count a tick skipped because the window said what the last call was told."""
        self._counters.unchanged_skips += 1
        self._save_counters()

    def record_minor_skip(self) -> None:
        """Count a tick skipped because the window changed in no meaningful way."""
        self._counters.minor_skips += 1
        self._save_counters()

    def record_deferred(self) -> None:
        """Count a tick whose meaningful change waits: a burst settling, or the call budget."""
        self._counters.deferred += 1
        self._save_counters()

    def record_empty_skip(self) -> None:
        """Count a tick skipped because the window held no audio and no screen events."""
        self._counters.empty_skips += 1
        self._save_counters()

    def latest_digest(self) -> shapes.Digest | None:
        """``/agent/digest``'s ``digest``, or ``None`` before the first successful tick."""
        return self._entries[-1].digest_shape() if self._entries else None

    def last(self) -> shapes.AgentEntry | None:
        """``/agent/last``'s ``result``."""
        return self._entries[-1].shape() if self._entries else None

    def history(self, limit: int) -> list[shapes.AgentEntry]:
        """The newest ``limit`` entries (at most :data:`AGENT_RING`), newest first."""
        newest = list(self._entries)[-limit:] if limit > 0 else []
        return [entry.shape() for entry in reversed(newest)]

    def history_range(
        self, since: int | None, until: int | None, before: int | None, limit: int
    ) -> tuple[list[shapes.AgentEntry], int | None]:
        """Entries with ``since <= ts < until`` and ``id < before``, newest first.

        Returns the page and the ``before`` cursor of the next page (``None`` on the last).
        Bounds beyond SQLite's 64-bit integers are clamped to them (they select the same rows).
        """
        assert self._db is not None, "started() opened the connection"
        rows = self._db.execute(
            "SELECT entry FROM agent_entries WHERE ts >= ? AND ts < ? AND id < ? "
            "ORDER BY id DESC LIMIT ?",
            (
                _sql_int(since) if since is not None else 0,
                _sql_int(until) if until is not None else 2**62,
                _sql_int(before) if before is not None else 2**62,
                limit + 1,
            ),
        ).fetchall()
        page = [AgentEntry.from_record(row[0]) for row in rows[:limit]]
        cursor = page[-1].id if len(rows) > limit else None
        return [entry.shape() for entry in page], cursor

    def entries_after(self, after: int, limit: int) -> tuple[AgentEntry, ...]:
        """Up to ``limit`` stored entries with an id above ``after``, oldest first: what a
        stream replays to a client that reconnects after more than the ring."""
        assert self._db is not None, "started() opened the connection"
        rows = self._db.execute(
            "SELECT entry FROM agent_entries WHERE id > ? ORDER BY id LIMIT ?", (after, limit)
        ).fetchall()
        return tuple(AgentEntry.from_record(row[0]) for row in rows)

    def stats(self) -> dict[str, Any]:
        """The counters ``/health.agent`` shows.

        ``contextFreshnessMedianMs`` is the median over the newest :data:`AGENT_RING`
        entries; ``parseSuccessRate`` counts every answer since the counters began.
        """
        c = self._counters
        latest = self._entries[-1] if self._entries else None
        freshness = [
            e.context_freshness_ms for e in self._entries if e.context_freshness_ms is not None
        ]
        return {
            "lastAnalysis": c.last_analysis_ts,
            "lastDigest": latest.digest[:DIGEST_PREVIEW_CHARS] if latest else None,
            "totalCalls": c.total_calls,
            "totalTokens": {"in": c.tokens_in, "out": c.tokens_out},
            "estimatedCost": self._estimated_cost(),
            "costByModel": {
                model: stats.to_health() for model, stats in c.models.items() if stats.calls
            },
            "fallbacks": c.fallbacks,
            "idleSkips": c.idle_skips + self._idle_beats(),
            "emptySkips": c.empty_skips,
            "unchangedSkips": c.unchanged_skips,
            "minorSkips": c.minor_skips,
            "deferredTicks": c.deferred,
            "failures": c.failures,
            "lastError": safe_text(c.last_error) if c.last_error else None,
            "parseFailures": c.parse_failures,
            "parseSuccessRate": round((c.total_calls - c.parse_failures) / c.total_calls, 4)
            if c.total_calls
            else None,
            "contextFreshnessMedianMs": _median(freshness),
            "hudsWithheld": dict(c.huds_withheld),
            "situationWriteFailures": c.situation_write_failures,
        }

    def _estimated_cost(self) -> float:
        """The known costs of every model, in USD. Tokens counted before per-model counts
        existed (counters of an older relay) keep the flat estimate that relay showed."""
        c = self._counters
        known = sum(stats.cost_usd for stats in c.models.values())
        older_in = c.tokens_in - sum(stats.tokens_in for stats in c.models.values())
        older_out = c.tokens_out - sum(stats.tokens_out for stats in c.models.values())
        return round(known + estimate_cost(max(older_in, 0), max(older_out, 0)), 6)

    def metrics(self) -> AgentMetrics:
        """What ``GET /metrics`` reads of the agent: tick outcomes and per-model figures."""
        c = self._counters
        return AgentMetrics(
            ticks={
                "called": c.total_calls,
                "idle": c.idle_skips + self._idle_beats(),
                "empty": c.empty_skips,
                "fingerprint_skip": c.unchanged_skips,
                "minor_skip": c.minor_skips,
                "deferred": c.deferred,
                "failed": c.failures,
            },
            fallbacks=c.fallbacks,
            models={model: stats.copy() for model, stats in c.models.items()},
            situation_write_failures=c.situation_write_failures,
            huds_withheld=dict(c.huds_withheld),
        )


@dataclass(frozen=True, slots=True)
class AgentMetrics:
    """A copy of the digest store's counters for one scrape (the store keeps no reference)."""

    ticks: dict[str, int]
    """Ticks by outcome, as ``relay_ticks_total`` labels them."""
    fallbacks: int
    models: dict[str, ModelStats]
    situation_write_failures: int = 0
    """SITUATION.md writes that failed."""
    huds_withheld: dict[str, int] = field(default_factory=dict)
    """Answers whose hud was not pushed, by reason."""
