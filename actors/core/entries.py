"""Agent entries: what each successful tick produced, and the newest of them at one moment."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import orjson

from actors.core.records import JSONDict


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
    context_freshness_ms: int | None = None
    """From the newest event in the tick's window to the answer; ``None`` in entries stored
    before it was recorded."""
    json: bytes = field(default=b"", compare=False, repr=False)
    """:meth:`to_json` serialised, made once (streams send these bytes)."""

    def __post_init__(self) -> None:
        if not self.json:
            object.__setattr__(self, "json", orjson.dumps(self.to_json()))

    def to_json(self) -> JSONDict:
        """The shape of ``/agent/last``'s ``result`` that Sinain's clients read, plus
        ``contextFreshnessMs``."""
        return {
            "id": self.id,
            "ts": self.ts,
            "hud": self.hud,
            "digest": self.digest,
            "context": self.context_json(),
            "pushed": self.pushed,
            "model": self.model,
            "latencyMs": self.latency_ms,
            "tokensIn": self.tokens_in,
            "tokensOut": self.tokens_out,
            "parsedOk": self.parsed_ok,
            "contextFreshnessMs": self.context_freshness_ms,
        }

    def to_record(self) -> bytes:
        """The row stored in ``agent_entries.entry``."""
        return orjson.dumps(
            {**self.to_json(), "appHistory": [list(pair) for pair in self.app_history]}
        )

    @classmethod
    def from_record(cls, raw: bytes) -> AgentEntry:
        """Rebuild an entry from :meth:`to_record`'s bytes."""
        data = orjson.loads(raw)
        context = data["context"]
        return cls(
            id=data["id"],
            ts=data["ts"],
            hud=data["hud"],
            digest=data["digest"],
            current_app=context["currentApp"],
            app_history=tuple((app, ts) for app, ts in data["appHistory"]),
            audio_count=context["audioCount"],
            screen_count=context["screenCount"],
            pushed=data["pushed"],
            model=data["model"],
            latency_ms=data["latencyMs"],
            tokens_in=data["tokensIn"],
            tokens_out=data["tokensOut"],
            parsed_ok=data["parsedOk"],
            context_freshness_ms=data.get("contextFreshnessMs"),
        )

    def context_json(self) -> JSONDict:
        """``context``: what the tick's window held, in the shape Sinain's clients read."""
        return {
            "currentApp": self.current_app,
            "appHistory": [app for app, _ in self.app_history],
            "audioCount": self.audio_count,
            "screenCount": self.screen_count,
        }

    def digest_json(self) -> JSONDict:
        """The shape of ``/agent/digest``'s ``digest``: the relay's own fields (``currentApp``,
        ``appHistory`` with the time of each switch), and beside them ``hud``, ``context`` and
        ``model`` as in :meth:`to_json`, which Sinain's current clients read from the digest."""
        return {
            "id": self.id,
            "ts": self.ts,
            "digest": self.digest,
            "currentApp": self.current_app,
            "appHistory": [{"app": app, "ts": ts} for app, ts in self.app_history],
            "latencyMs": self.latency_ms,
            "hud": self.hud,
            "context": self.context_json(),
            "model": self.model,
        }


@dataclass(frozen=True, slots=True)
class AgentSnapshot:
    """The newest agent entries at one moment, as the digest store last committed them."""

    entries: tuple[AgentEntry, ...]
    """Oldest first; ids ascending; at most :data:`AGENT_RING`."""

    @property
    def latest(self) -> AgentEntry | None:
        """The newest entry, or ``None`` before the first successful tick."""
        return self.entries[-1] if self.entries else None

    def after(self, after: int) -> tuple[AgentEntry, ...]:
        """Entries with an id above ``after``, oldest first."""
        return self.entries[bisect.bisect_right(self.entries, after, key=_entry_id) :]


EMPTY_AGENT = AgentSnapshot(entries=())


def _entry_id(entry: AgentEntry) -> int:
    return entry.id
