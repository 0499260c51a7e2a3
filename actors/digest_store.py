"""DigestStore: owns the agent entries, the latest digest, the counters and the last hud pushed."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from actors.base import ChildHandle, RelayActor, Reporter
from actors.clock import Clock
from actors.completion import NO_OUTPUT
from actors.cost import estimate_cost
from actors.records import JSONDict
from actors.ticks import TickResult
from config.app_names import normalize_app_name

AGENT_RING = 50
"""Agent entries kept for ``/agent/last`` and ``/agent/history``."""
DIGEST_PREVIEW_CHARS = 200
"""``/health.agent.lastDigest`` shows this much of the latest digest."""
_NOT_PUSHED = (NO_OUTPUT, "Idle")


@dataclass(frozen=True, slots=True)
class AgentEntry:
    """One successful tick."""

    id: int
    ts: int
    hud: str
    digest: str
    current_app: str
    app_history: tuple[tuple[str, float], ...]
    audio_count: int
    screen_count: int
    pushed: bool
    model: str
    latency_ms: int
    tokens_in: int
    tokens_out: int
    parsed_ok: bool

    def to_json(self) -> JSONDict:
        """The shape of ``/agent/last``'s ``result`` in the v2 spec."""
        return {
            "id": self.id,
            "ts": self.ts,
            "hud": self.hud,
            "digest": self.digest,
            "context": {
                "currentApp": self.current_app,
                "appHistory": [app for app, _ in self.app_history],
                "audioCount": self.audio_count,
                "screenCount": self.screen_count,
            },
            "pushed": self.pushed,
            "model": self.model,
            "latencyMs": self.latency_ms,
            "tokensIn": self.tokens_in,
            "tokensOut": self.tokens_out,
            "parsedOk": self.parsed_ok,
        }

    def digest_json(self) -> JSONDict:
        """The shape of ``/agent/digest``'s ``digest`` in the v2 spec."""
        return {
            "id": self.id,
            "ts": self.ts,
            "digest": self.digest,
            "currentApp": self.current_app,
            "appHistory": [{"app": app, "ts": ts} for app, ts in self.app_history],
            "latencyMs": self.latency_ms,
        }


class DigestStore(RelayActor):
    """Stores what each successful tick produced and pushes new hud lines to the feed.

    A failed tick changes only the failure counters: the stored hud, digest and entries stay.
    """

    name = "digest"

    def __init__(self, *, clock: Clock, feed: ChildHandle, report: Reporter | None = None) -> None:
        super().__init__(report=report)
        self._clock = clock
        self._feed = feed
        self._entries: deque[AgentEntry] = deque(maxlen=AGENT_RING)
        self._latest: AgentEntry | None = None
        self._next_id = 1
        self._last_pushed_hud = ""
        self._total_calls = 0
        self._tokens_in = 0
        self._tokens_out = 0
        self._last_analysis_ts: int | None = None
        self._idle_skips = 0
        self._empty_skips = 0
        self._failures = 0
        self._last_error: str | None = None
        self._parse_failures = 0

    def record(self, result: TickResult) -> AgentEntry:
        """Store a successful tick; push its hud unless it is ``—``, ``Idle`` or a repeat."""
        analysis = result.analysis
        push = (
            result.push_to_feed
            and analysis.hud not in _NOT_PUSHED
            and analysis.hud != self._last_pushed_hud
        )
        if push:
            push = self._tell_peer(self._feed, "push_agent", analysis.hud)
            if push:
                self._last_pushed_hud = analysis.hud
        window = result.window
        entry = AgentEntry(
            id=self._next_id,
            ts=self._clock.now_ms(),
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
        )
        self._next_id += 1
        self._entries.append(entry)
        self._latest = entry
        self._total_calls += 1
        self._tokens_in += result.tokens_in
        self._tokens_out += result.tokens_out
        self._last_analysis_ts = entry.ts
        if not analysis.parsed_ok:
            self._parse_failures += 1
        return entry

    def record_failure(self, error: str) -> None:
        """Count a failed LLM call; nothing stored changes."""
        self._failures += 1
        self._last_error = error

    def record_idle_skip(self) -> None:
        """Count a tick skipped because nothing new arrived."""
        self._idle_skips += 1

    def record_empty_skip(self) -> None:
        """Count a tick skipped because the window held no audio and no screen events."""
        self._empty_skips += 1

    def latest_digest(self) -> JSONDict | None:
        """``/agent/digest``'s ``digest``, or ``None`` before the first successful tick."""
        return self._latest.digest_json() if self._latest else None

    def last(self) -> JSONDict | None:
        """``/agent/last``'s ``result``."""
        return self._entries[-1].to_json() if self._entries else None

    def history(self, limit: int) -> list[JSONDict]:
        """The newest ``limit`` entries, newest first."""
        newest = list(self._entries)[-limit:] if limit > 0 else []
        return [entry.to_json() for entry in reversed(newest)]

    def stats(self) -> dict[str, Any]:
        """The counters ``/health.agent`` shows."""
        return {
            "lastAnalysis": self._last_analysis_ts,
            "lastDigest": self._latest.digest[:DIGEST_PREVIEW_CHARS] if self._latest else None,
            "totalCalls": self._total_calls,
            "totalTokens": {"in": self._tokens_in, "out": self._tokens_out},
            "estimatedCost": estimate_cost(self._tokens_in, self._tokens_out),
            "idleSkips": self._idle_skips,
            "emptySkips": self._empty_skips,
            "failures": self._failures,
            "lastError": self._last_error,
            "parseFailures": self._parse_failures,
        }
