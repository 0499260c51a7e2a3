"""Forgetting a time range: the range, as every owning actor is told it, and what each removed.

``POST /privacy/forget`` tells each actor that keeps what the user saw or heard to forget
what arrived in a :class:`Span`; each deletes its own rows and drops its own memory, and
answers a :class:`Forgotten` with its counts filled. The transport adds them up.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct

Count = Annotated[int, Meta(ge=0)]
NO_END = 2**63 - 1
"""The latest moment a range may reach (SQLite's largest integer)."""
Moment = Annotated[int, Meta(ge=0, le=NO_END)]


class Span(Struct, frozen=True, forbid_unknown_fields=True):
    """A time range of arrival, in epoch ms, both ends included: ``POST /privacy/forget``'s
    body, and what it tells each actor."""

    since: Annotated[Moment, Meta(description="From this time (epoch ms), included.")]
    until: Annotated[
        Moment, Meta(description="To this time (epoch ms), included; not before `since`.")
    ]

    def __post_init__(self) -> None:
        if self.until < self.since:
            raise ValueError("until must not be before since")

    def holds(self, ms: float) -> bool:
        """Whether ``ms`` (epoch ms) is in the range."""
        return self.since <= ms <= self.until


class Forgotten(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, rename="camel"):
    """What a forget removed, by kind (each actor fills its own)."""

    feed: Count = 0
    """Feed items (what clients posted, the agent's hud lines, the transcripts)."""
    transcripts: Count = 0
    """Of those, the transcripts of what was heard."""
    screen: Count = 0
    """Screen events."""
    entries: Count = 0
    """Agent entries."""
    search_rows: Count = 0
    """Their rows of the search index."""
    escalations: Count = 0
    """A pending escalation made from the range (0 or 1)."""
    heard: Count = 0
    """Transcripts the audio path still held in memory (to tell repeats)."""
    situation_lines: Count = 0
    """Lines of SITUATION.md that quoted the range."""

    def __add__(self, other: Forgotten) -> Forgotten:
        return Forgotten(
            **{name: getattr(self, name) + getattr(other, name) for name in self.__struct_fields__}
        )
