"""Agent entries: what each successful tick produced, and the newest of them at one moment."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import msgspec
import orjson

from actors.core import shapes
from actors.core.records import JSONDict
from actors.escalation.slot import Pending


@dataclass(frozen=True, slots=True)
class AgentRecord:
    """One successful tick."""

    id: int
    ts: int
    hud: str
    digest: str
    current_app: str
    app_history: tuple[tuple[str, int], ...]
    """Each app switch of the tick's window and its time, epoch ms."""
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
    """:meth:`shape` encoded, made once (streams send these bytes)."""

    def __post_init__(self) -> None:
        if not self.json:
            object.__setattr__(self, "json", shapes.encode(self.shape()))

    def shape(self) -> shapes.AgentEntry:
        """The shape of ``/agent/last``'s ``result`` that Sinain's clients read, plus
        ``contextFreshnessMs``."""
        return shapes.AgentEntry(
            id=self.id,
            ts=self.ts,
            hud=self.hud,
            digest=self.digest,
            context=self.context_shape(),
            pushed=self.pushed,
            model=self.model,
            latency_ms=self.latency_ms,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            parsed_ok=self.parsed_ok,
            context_freshness_ms=self.context_freshness_ms,
        )

    def to_json(self) -> JSONDict:
        """:meth:`shape` as plain data."""
        out: JSONDict = msgspec.to_builtins(self.shape())
        return out

    def to_record(self) -> bytes:
        """The row stored in ``agent_entries.entry``."""
        return orjson.dumps(
            {**self.to_json(), "appHistory": [list(pair) for pair in self.app_history]}
        )

    @classmethod
    def from_record(cls, raw: bytes) -> AgentRecord:
        """Rebuild an entry from :meth:`to_record`'s bytes."""
        data = orjson.loads(raw)
        context = data["context"]
        return cls(
            id=data["id"],
            ts=data["ts"],
            hud=data["hud"],
            digest=data["digest"],
            current_app=context["currentApp"],
            app_history=tuple((app, shapes.whole_ms(ts)) for app, ts in data["appHistory"]),
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

    def context_shape(self) -> shapes.EntryContext:
        """``context``: what the tick's window held, in the shape Sinain's clients read."""
        return shapes.EntryContext(
            current_app=self.current_app,
            app_history=[app for app, _ in self.app_history],
            audio_count=self.audio_count,
            screen_count=self.screen_count,
        )

    def digest_shape(self) -> shapes.Digest:
        """The shape of ``/agent/digest``'s ``digest``: the relay's own fields (``currentApp``,
        ``appHistory`` with the time of each switch), and beside them ``hud``, ``context`` and
        ``model`` as in :meth:`shape`, which Sinain's current clients read from the digest."""
        return shapes.Digest(
            id=self.id,
            ts=self.ts,
            digest=self.digest,
            current_app=self.current_app,
            app_history=[shapes.AppSwitch(app=app, ts=ts) for app, ts in self.app_history],
            latency_ms=self.latency_ms,
            hud=self.hud,
            context=self.context_shape(),
            model=self.model,
        )


@dataclass(frozen=True, slots=True)
class AgentSnapshot:
    """The newest agent entries at one moment, as the digest store last committed them."""

    entries: tuple[AgentRecord, ...]
    """Oldest first; ids ascending; at most :data:`AGENT_RING`."""
    escalation: Pending | None = None
    """The escalation waiting for Sinain's agent (:mod:`actors.escalation.slot`)."""

    @property
    def latest(self) -> AgentRecord | None:
        """The newest entry, or ``None`` before the first successful tick."""
        return self.entries[-1] if self.entries else None

    def after(self, after: int) -> tuple[AgentRecord, ...]:
        """Entries with an id above ``after``, oldest first."""
        return self.entries[bisect.bisect_right(self.entries, after, key=_entry_id) :]


EMPTY_AGENT = AgentSnapshot(entries=())


def _entry_id(entry: AgentRecord) -> int:
    return entry.id
