"""DigestStore: owns the agent entries, the latest digest, the counters and the last hud pushed."""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
from collections import deque
from collections.abc import Callable
from typing import Any

import pykka

from actors.agent import entry_reads
from actors.agent.core.counting.counters import AgentCounters, AgentMetrics
from actors.agent.core.counting.health_stats import health_stats
from actors.agent.core.disclosure import disclosed
from actors.agent.core.entries import EMPTY_AGENT, AgentRecord, AgentSnapshot
from actors.agent.core.escalation_message import escalate
from actors.agent.core.events import AgentEvent, QuietSpell
from actors.agent.core.hud_check import pushes
from actors.agent.core.situation import Situation
from actors.agent.core.ticks import TickResult
from actors.common.forgetting import Forgotten, Span
from actors.core import shapes
from actors.core.errors import FeatureUnavailable
from actors.core.exclusion import PrivacyState
from actors.escalation.slot import EscalationSlot, Outcome, refusal
from actors.ingest.feed_buffer import FeedBuffer
from actors.kernel import search_index
from actors.kernel.base import ChildHandle, Reporter
from actors.kernel.clock import Cancel, Clock
from actors.kernel.doorbell import Doorbell
from actors.kernel.durable import DurableActor, Prune
from actors.kernel.published import Published, tell_on_publish
from actors.kernel.storage import Store
from config.app_names import normalize_app_name
from config.prices import PriceTable, load_prices
from config.privacy import TO_AGENTS, Column

AGENT_RING = 50
"""Agent entries kept for ``/agent/last`` and ``/agent/history``."""
DAY_MS = 86_400_000
PRUNE_INTERVAL_S = 3600.0
"""How often entries older than the retention are deleted."""
_SAVE_COUNTERS = "INSERT OR REPLACE INTO agent_state (key, value) VALUES ('counters', ?)"
_SAVE_SLOT = "INSERT OR REPLACE INTO escalation_slot (key, value) VALUES ('slot', ?)"
_FORGOTTEN_HUD = (
    "SELECT 1 FROM agent_entries WHERE ts BETWEEN ? AND ? "
    "AND json_extract(CAST(entry AS TEXT), '$.hud') = ? LIMIT 1"
)


class _Privacy:
    """The privacy controls changed: the retention may be new."""


class DigestStore(DurableActor):
    """Stores what each successful tick produced and pushes new hud lines to the feed.

    It also keeps the agent's counters
    (:class:`~actors.agent.core.counting.counters.AgentCounters`): the answers it stores, and
    the events the agent's other actors report, to which it listens (:meth:`on_receive`,
    :mod:`actors.agent.core.events`). A failed tick changes only
    the failure counters: the stored hud, digest and entries stay.
    The newest :data:`AGENT_RING` entries are also in memory; older ones stay in the database
    for the retention (``privacy``'s ``retentionDays``, which ``POST /privacy`` may change:
    a change prunes at once; without it ``retention_days``) and are read back by
    :meth:`history_range`. With ``situation``
    (``RELAY_SITUATION_FILE`` set), each committed entry and its tick's window are posted
    there for the SITUATION.md writer, which never holds this actor up. Both the escalation
    and SITUATION.md show what ``to_agents`` (the privacy matrix's ``AGENT_GATEWAY`` column)
    lets agents see of the window.
    """

    name = "digest"

    def __init__(
        self,
        *,
        clock: Clock,
        store: Store,
        feed: ChildHandle[FeedBuffer],
        retention_days: float = 7.0,
        privacy: Published[PrivacyState] | None = None,
        published: Published[AgentSnapshot] | None = None,
        prices: PriceTable | None = None,
        situation: Doorbell[Situation] | None = None,
        report: Reporter | None = None,
        to_agents: Column = TO_AGENTS,
    ) -> None:
        super().__init__(store=store, report=report)
        self._clock = clock
        self._to_agents = to_agents
        """What agents may see of a tick's window: the escalation and SITUATION.md."""
        self._situation = situation
        self._situation_next: Situation | None = None
        """The situation of the entry recorded since the last commit, posted after it."""
        self._prices = prices if prices is not None else load_prices()
        self._feed = feed
        self._published = published or Published(EMPTY_AGENT)
        self._retention_days = retention_days
        self._privacy = privacy
        self._unsubscribe: Callable[[], None] | None = None
        self._entries: deque[AgentRecord] = deque(maxlen=AGENT_RING)
        self._next_id = 1
        self._counters = AgentCounters()
        self._prune_timer: Cancel | None = None
        self._quiet: tuple[float, float] | None = None
        """The quiet spell being counted, ``(since, interval_s)`` on the clock's monotonic
        seconds, or ``None`` (see :meth:`quiet`)."""
        self._quiet_seen: tuple[float, float] | None = None
        """The last spell told, counted or not, and how many of its intervals are banked."""
        self._quiet_banked = 0
        self._search_ready = False
        self._slot = EscalationSlot()
        self._ahead: tuple[int, str] | None = None
        """The tick whose hud :meth:`hud_ahead` pushed, and that hud."""

    def restore(self, db: sqlite3.Connection) -> None:
        """Reload the newest entries and the counters; schedule retention pruning."""
        rows = db.execute(
            "SELECT entry FROM agent_entries ORDER BY id DESC LIMIT ?", (AGENT_RING,)
        ).fetchall()
        self._entries.extend(AgentRecord.from_record(row[0]) for row in reversed(rows))
        last = db.execute("SELECT MAX(id) FROM agent_entries").fetchone()[0]
        self._next_id = (last or 0) + 1
        state = db.execute("SELECT value FROM agent_state WHERE key = 'counters'").fetchone()
        if state is not None:
            self._counters = AgentCounters.from_json(state[0])
        slot = db.execute("SELECT value FROM escalation_slot WHERE key = 'slot'").fetchone()
        if slot is not None:
            self._slot = EscalationSlot.from_json(slot[0])
        if rows:
            self._log.info("digest.restored", entries=len(rows), next_id=self._next_id)
        self._search_ready = search_index.ready(db)
        if not self._search_ready:
            self._log.warning("digest.search_unavailable", reason=entry_reads.NO_SEARCH)
        self._request_prune()
        if self._privacy is not None:
            self._retention_days = self._privacy.value.retention_days
            self._unsubscribe = tell_on_publish(self._privacy, self.actor_ref, _Privacy())

    def committed(self) -> None:
        """Publish the newest entries as they are on disk now (streams and long-polls read
        them); post the newest entry's situation for the SITUATION.md writer."""
        self._published.publish(
            AgentSnapshot(entries=tuple(self._entries), escalation=self._slot.pending)
        )
        if self._situation is not None and self._situation_next is not None:
            self._situation.post(self._situation_next)
            self._situation_next = None

    def stopped(self) -> None:
        """Disarm the prune timer, bank the quiet spell's idle skips, then commit and close."""
        if self._prune_timer is not None:
            self._prune_timer()
            self._prune_timer = None
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._db is not None and not self._failed:
            self._bank_idle_beats(self._clock.monotonic())
        super().stopped()

    def prune(self) -> None:
        """Drop entries older than the retention, keep the newest 50; then re-arm the timer."""
        privacy = self._privacy
        days = privacy.value.retention_days if privacy is not None else self._retention_days
        cutoff = self._clock.now_ms() - round(days * DAY_MS)
        if self._prune_timer is not None:  # a prune out of turn (the retention changed)
            self._prune_timer()
        keep_from = self._next_id - AGENT_RING
        self._write("DELETE FROM agent_entries WHERE ts < ? AND id < ?", (cutoff, keep_from))
        ref = self.actor_ref

        def fire() -> None:
            with contextlib.suppress(pykka.ActorDeadError):  # a dead incarnation prunes nothing
                ref.tell(Prune())

        self._prune_timer = self._clock.call_later(PRUNE_INTERVAL_S, fire)

    def forget(self, span: Span, reach_ms: int) -> Forgotten:
        """Delete the entries stored in ``span`` with their search rows, and a pending
        escalation whose window (``reach_ms`` long) met it; the counters and cost totals stay
        (the last hud pushed is let go if a forgotten entry had it). Their bytes are gone
        from the files (:meth:`_erase`) before this answers."""
        bounds, counters = (span.since, span.until), self._counters

        def work(db: sqlite3.Connection) -> tuple[int, int]:
            pushed = db.execute(_FORGOTTEN_HUD, (*bounds, counters.last_pushed_hud)).fetchone()
            if pushed is not None:
                counters.last_pushed_hud = ""
            dropped = self._slot.forget(span, reach_ms)
            db.execute(_SAVE_COUNTERS, (counters.to_json(),))
            db.execute(_SAVE_SLOT, (self._slot.to_json(),))
            deleted = db.execute("DELETE FROM agent_entries WHERE ts BETWEEN ? AND ?", bounds)
            if self._search_ready:
                search_index.compact(db)
            return deleted.rowcount, dropped

        entries, escalations = self._erase(work)
        self._entries = deque((e for e in self._entries if not span.holds(e.ts)), maxlen=AGENT_RING)
        self.committed()
        searched = entries if self._search_ready else 0
        return Forgotten(entries=entries, search_rows=searched, escalations=escalations)

    def _save_counters(self) -> None:
        self._write(_SAVE_COUNTERS, (self._counters.to_json(),))

    def hud_ahead(self, tick_id: int, hud: str) -> None:
        """Push a tick's hud before its answer is whole (a local model writes the hud first,
        then the digest), as :meth:`record` would push it; the tick's entry then says it was
        pushed, and its hud is not pushed twice."""
        if self._push_hud(hud):
            self._ahead = (tick_id, hud)
            self._save_counters()

    def _push_hud(self, hud: str) -> bool:
        counters = self._counters
        if not pushes(hud, counters.last_pushed_hud):
            return False
        if not self._tell_peer(self._feed, FeedBuffer.push_agent, hud):
            return False
        counters.last_pushed_hud = hud
        return True

    def record(self, result: TickResult) -> AgentRecord:
        """Store a successful tick; push its hud unless it is ``—`` (none, or withheld as no
        line a user can read: counted by reason), ``Idle``, a repeat, or pushed already
        (:meth:`hud_ahead`)."""
        analysis = result.analysis
        counters = self._counters
        ahead, self._ahead = self._ahead, None
        push = ahead == (result.tick_id, analysis.hud) or (
            result.push_to_feed and self._push_hud(analysis.hud)
        )
        window = result.window
        now = self._clock.now_ms()
        entry = AgentRecord(
            id=self._next_id,
            ts=now,
            hud=analysis.hud,
            digest=analysis.digest,
            current_app=normalize_app_name(window.current_app),
            app_history=tuple((normalize_app_name(a.app), a.ts) for a in window.app_history),
            audio_count=window.audio_count,
            screen_count=window.screen_count,
            pushed=push,
            model=result.answered_model or result.model,
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
            shown = disclosed(window, self._to_agents)
            self._situation_next = Situation(result.tick_id, entry, shown)
        counters.answered(result, entry.ts, self._prices)
        self._save_counters()
        try:
            self._escalate(result, entry)
        except Exception:  # keeps the tick's entry: an escalation is never worth losing it
            self._log.exception("escalation.failed", tick=result.tick_id, entry=entry.id)
        return entry

    def _escalate(self, result: TickResult, entry: AgentRecord) -> None:
        """Decide whether the tick's moment goes to the escalation slot, in the entry's
        commit; one log line a decision (mode ``off`` decides nothing)."""
        if result.escalation.mode == "off":
            return
        shown = disclosed(result.window, self._to_agents)
        decision, pending = escalate(self._slot, entry, result.window, result.escalation, shown)
        self._log.info(
            "escalation.decided",
            tick=result.tick_id,
            entry=entry.id,
            mode=result.escalation.mode,
            escalate=pending is not None,
            why=decision.trigger or decision.skip,
            score=decision.score.total,
            reasons=list(decision.score.reasons),
            id=pending.id if pending is not None else None,
        )
        self._save_slot()

    def _save_slot(self) -> None:
        self._write(_SAVE_SLOT, (self._slot.to_json(),))

    def respond_escalation(self, answer_id: str, *, take: bool) -> tuple[Outcome, bool, str]:
        """An answer to the escalation ``answer_id``: its outcome, whether the moment was
        coding, and for a refusal the error the agent reads. ``take`` it (an accepted answer
        clears the slot) once the feed has stored it; until then it changes nothing. A refusal
        is counted at once. Answered once the slot is stored."""
        pending, now = self._slot.pending, self._clock.now_ms()
        if not take and (judged := self._slot.judge(answer_id, now))[0] in ("accepted", "late"):
            return *judged, ""
        outcome, coding = self._slot.respond(answer_id, now)
        self._save_slot()
        self._log.info("escalation.answered", id=answer_id, outcome=outcome)
        error = refusal(pending) if outcome in ("mismatch", "none") else ""
        return outcome, coding, error

    def on_receive(self, message: Any) -> Any:
        """Count the events the agent's other actors report (:meth:`on_event`)."""
        if isinstance(message, AgentEvent):
            self.on_event(message)
            return None
        if isinstance(message, _Privacy):  # a new retention prunes now, not at the next hour
            days = self._privacy.value.retention_days if self._privacy is not None else None
            if days is not None and days != self._retention_days:
                self._retention_days = days
                self.prune()
            return None
        return super().on_receive(message)

    def on_event(self, event: AgentEvent) -> None:
        """Count ``event`` and store the counters (a quiet spell: see :meth:`_quiet_spell`)."""
        if isinstance(event, QuietSpell):
            self._quiet_spell(event)
            return
        self._counters.count(event, self._clock.now_ms())
        self._save_counters()

    def _quiet_spell(self, told: QuietSpell) -> None:
        """At ``told.at`` (monotonic seconds), the agent has been quiet since ``told.since``,
        or is not quiet (``None``), as the Ticker reports it.

        Each whole ``interval_s`` of a spell counts one idle skip: what a tick every
        ``interval_s`` would have skipped, counted without a timer. The intervals that passed
        before ``at`` are banked into the stored counter when a spell ends, and when a reader
        asks for the counters (:meth:`_bank_idle_beats`); never fewer than are banked already,
        so the counter only grows. A spell told again (an empty tick did not end it) goes on
        from where it was.
        """
        since, interval_s = told.since, told.interval_s
        self._bank_idle_beats(told.at)
        spell = (since, interval_s) if since is not None and interval_s > 0 else None
        if spell is not None and spell != self._quiet_seen:
            self._quiet_seen, self._quiet_banked = spell, 0
        self._quiet = spell

    def _beats(self, at: float) -> int:
        """Whole intervals of the current spell by ``at``, never fewer than are banked."""
        if self._quiet is None:
            return self._quiet_banked
        since, interval_s = self._quiet
        return max(int((at - since) // interval_s), self._quiet_banked)

    def _bank_idle_beats(self, at: float) -> None:
        """Store the spell's intervals by ``at``. Readers bank first, and their answer waits for
        the commit: no crash takes back a count a reader saw (one write per interval, if read)."""
        beats = self._beats(at) - self._quiet_banked
        if beats > 0:
            self._quiet_banked += beats
            self._counters.idle_skips += beats
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
        """Entries with ``since <= ts < until`` and ``id < before``, newest first, and the
        next page's ``before`` cursor (:func:`~actors.agent.entry_reads.entries_in_range`)."""
        assert self._db is not None, "started() opened the connection"
        return entry_reads.entries_in_range(self._db, since, until, before, limit)

    def search(
        self, match: str, since: int | None, until: int | None, before: int | None, limit: int
    ) -> tuple[list[shapes.AgentEntry], int | None]:
        """As :meth:`history_range`, of the entries whose digest or hud match ``match``
        (:func:`~actors.agent.entry_reads.search_entries`, on this actor's clock).

        Raises:
            FeatureUnavailable: this SQLite has no FTS5, or the search took too long.
        """
        assert self._db is not None, "started() opened the connection"
        if not self._search_ready:
            raise FeatureUnavailable(entry_reads.NO_SEARCH)
        return entry_reads.search_entries(
            self._db, self._clock, match, (since, until, before), limit
        )

    def entries_after(self, after: int, limit: int) -> tuple[AgentRecord, ...]:
        """Up to ``limit`` stored entries with an id above ``after``, oldest first: what a
        stream replays to a client that reconnects after more than the ring."""
        assert self._db is not None, "started() opened the connection"
        return entry_reads.entries_after(self._db, after, limit)

    def stats(self) -> dict[str, Any]:
        """The counters ``/health.agent`` shows
        (:func:`~actors.agent.core.counting.health_stats.health_stats`).

        ``contextFreshnessMedianMs`` is the median over the newest :data:`AGENT_RING`
        entries; ``parseSuccessRate`` counts every answer since the counters began. Every
        count shown is stored first (the quiet spell's idle skips are banked).
        """
        self._bank_idle_beats(self._clock.monotonic())
        return health_stats(self._counters, self._entries, self._slot.counts().to_json())

    def metrics(self) -> AgentMetrics:
        """What ``GET /metrics`` reads of the agent: tick outcomes and per-model figures,
        each stored before it is shown (as :meth:`stats`)."""
        self._bank_idle_beats(self._clock.monotonic())
        return dataclasses.replace(self._counters.metrics(), escalation=self._slot.counts())
