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
    """A time range of arrival: from `since` to `until`, epoch ms, both included."""

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
    """What a forget removed, by kind."""

    feed: Annotated[
        Count,
        Meta(description="Feed items: what clients posted, transcripts, the agent's hud lines."),
    ] = 0
    transcripts: Annotated[
        Count, Meta(description="Of the feed items, the transcripts of what was heard.")
    ] = 0
    screen: Annotated[Count, Meta(description="Screen events.")] = 0
    entries: Annotated[Count, Meta(description="Agent entries.")] = 0
    search_rows: Annotated[Count, Meta(description="The entries' rows of the search index.")] = 0
    escalations: Annotated[
        Count, Meta(description="A pending escalation whose window met the range (0 or 1).")
    ] = 0
    heard: Annotated[
        Count, Meta(description="Transcripts the audio path held in memory to tell repeats.")
    ] = 0
    situation_lines: Annotated[
        Count, Meta(description="Lines of SITUATION.md that quoted the range.")
    ] = 0

    def __add__(self, other: Forgotten) -> Forgotten:
        return Forgotten(
            **{name: getattr(self, name) + getattr(other, name) for name in self.__struct_fields__}
        )
