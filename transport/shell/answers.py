"""The answers the HTTP shell and the overlay's socket send, as typed structs.

One statement per shape: handlers encode their answers from these
(:func:`actors.core.shapes.encode`), and the OpenAPI document's components are generated from
them (:mod:`transport.openapi`), each docstring and ``Meta(description=...)`` the component's
description. The shapes of what the actors own (feed items, agent entries, digests, the
window) are in :mod:`actors.core.shapes`; the envelopes and figures only HTTP shows are here,
what the streams send and count in :mod:`transport.streams.answers`, and each feature's own
answers in its package's ``answers.py``.
Every answer is closed (``additionalProperties: false``); a field that may be left out is
``UNSET`` when it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, Raw, Struct, UnsetType

from actors.common.check import Verdict
from actors.core.shapes import (
    AgentEntry,
    Channel,
    ContextWindow,
    Digest,
    Epoch,
    FeedItem,
    Id,
    Ms,
    Shape,
)
from actors.kernel.base import ChildState


def encoded(items: Iterable[bytes]) -> Any:
    """Items already encoded, to stand in a list field of their type: they are sent as
    they are (``msgspec.Raw``), not encoded again."""
    return [Raw(item) for item in items]


class Error(Shape, frozen=True):
    """Every error answer: a 4xx for bad input (which changes nothing), 503 when an actor is
    restarting or did not answer in time."""

    ok: Literal[False]
    error: Annotated[str, Meta(description="What is wrong.")]


class Accepted(Shape, frozen=True):
    """A stored item and its id."""

    ok: Literal[True]
    id: Id


class Dropped(Shape, frozen=True):
    """Not stored, by design: the event's app or window is excluded (`excluded`: the privacy
    controls' `excludeApps`, `excludeTitles`), or capture is paused (`paused`). No id."""

    ok: Literal[True]
    dropped: Literal["excluded", "paused"]


class Transcribed(Shape, frozen=True):
    """What became of a posted utterance: the stored feed item's `id` and `text` (with its
    mark, as the feed shows it), or `id: null`, `text: ""` and why nothing was stored
    (`dropped`: `empty`, nothing was said; `short`, `repetitive`, `invented`, `duplicate`,
    `bleed`, a filter's reason; `paused`, capture is paused and nothing was transcribed)."""

    ok: Literal[True]
    id: Id | None
    text: str
    dropped: str | UnsetType = UNSET


class Done(Shape, frozen=True):
    """Done: nothing more to say."""

    ok: Literal[True]


class FeedList(Shape, frozen=True):
    """Oldest first; the ring keeps the newest 100."""

    messages: Sequence[FeedItem]
    """Each item's own encoding, made once (:func:`encoded`)."""
    epoch: Epoch


class SenseEvent(Shape, frozen=True, forbid_unknown_fields=False):
    """The event as sent, between its `id` and the server's `receivedAt`."""

    id: Id
    received_at: Ms


class SenseList(Shape, frozen=True):
    """Oldest first; the ring keeps the newest 30."""

    events: Sequence[SenseEvent]
    """Each event's own encoding, made once (:func:`encoded`)."""
    epoch: Epoch


class DigestAnswer(Shape, frozen=True):
    """The digest, `null` before the first tick."""

    ok: Literal[True]
    digest: Digest | None


class LastAnswer(Shape, frozen=True):
    """The newest agent entry, `null` before the first tick."""

    ok: Literal[True]
    result: AgentEntry | None


class HistoryAnswer(Shape, frozen=True, kw_only=True):
    """Agent entries, newest first; with a range, `next` too."""

    ok: Literal[True]
    results: Annotated[list[AgentEntry], Meta(description="Newest first.")]
    next: (
        Annotated[
            int,
            Meta(description="`before` for the next page; `null` on the last. Only with a range."),
        ]
        | UnsetType
        | None
    ) = UNSET
    epoch: Epoch


class ContextAnswer(Shape, frozen=True):
    """The window the next tick would see."""

    ok: Literal[True]
    context: ContextWindow


class ActorState(Shape, frozen=True):
    """One actor's supervision: alive, its restarts and the newest, its state."""

    alive: bool
    restarts: int
    last_restart: Ms | None
    state: ChildState
    last_exit: Ms | None = None
    last_error: Annotated[
        str | None,
        Meta(
            description="Why its newest incarnation that ended unasked ended (a crash's error, "
            "a hang); `null` for callers without the token."
        ),
    ] = None


class Storage(Shape, frozen=True):
    """Where the data is kept, and what happened to it at this start."""

    path: str
    epoch: Epoch
    sync: Annotated[Literal["full", "normal", "off"], Meta(description="`off` in memory.")]
    schema_versions: dict[str, int]
    recovered: bool
    moved_aside: list[str]
    problem: str | None


class CheckState(Shape, frozen=True):
    """One check of the started relay, as ``sinain-relay doctor`` says it
    ([The doctor](doctor.md)): those that ask no service anything."""

    name: str
    verdict: Verdict
    found: Annotated[str | None, Meta(description="`null` for callers without the token.")]
    remedy: Annotated[
        str | None,
        Meta(description="What to do, naming the setting; `null` for callers without the token."),
    ]


class CommandAnswer(Shape, frozen=True):
    """What a switch did, in the overlay's words."""

    ok: Literal[True]
    text: str


class ClientFigures(Shape, frozen=True):
    """A client's newest report, as it sent it, and when it arrived."""

    rss_mb: float
    uptime_s: float
    ts: Annotated[float, Meta(description="The client's clock, epoch milliseconds.")]
    received_at: Annotated[int, Meta(description="The relay's clock, epoch ms.")]
    extra: (
        Annotated[
            dict[str, float],
            Meta(
                description="The client's counters, by name (a secret in a name redacted); "
                "`null` for a caller without the token, when one is set."
            ),
        ]
        | None
    )


class Profiling(Shape, frozen=True):
    """The capture client's and the overlay's newest reports of their own figures (`null`
    before the first); kept in memory, not history."""

    sense: ClientFigures | None
    overlay: ClientFigures | None


class OverlayStatus(Shape, frozen=True):
    """Relay → overlay: on connect, and again whenever it changes."""

    type: Literal["status"]
    audio: Annotated[
        Literal["active", "muted"],
        Meta(description="`active` while transcripts arrive, `muted` after a quiet spell."),
    ]
    screen: Annotated[
        Literal["active", "off"],
        Meta(description="`active` while screen events arrive, `off` after a quiet spell."),
    ]
    connection: Literal["connected"]
    paused: Annotated[
        bool,
        Meta(description="`true` while the privacy controls pause capture (`POST /privacy`)."),
    ]


class OverlayFeed(Shape, frozen=True, kw_only=True):
    """Relay → overlay: a feed item (on connect the newest 20, oldest first, then each one
    committed), or a line for this overlay alone. Never an `id`."""

    type: Literal["feed"]
    text: str
    priority: str
    ts: Ms
    channel: Channel
    sender: (
        Annotated[Literal["user"], Meta(description="On what the user typed in the overlay.")]
        | UnsetType
    ) = UNSET


class OverlayPing(Shape, frozen=True):
    """Relay → overlay: the heartbeat; the overlay answers `pong`."""

    type: Literal["ping"]
    ts: Ms


class OpenAPIDocument(Struct, frozen=True):
    """The OpenAPI 3.1 description of the API (`GET /openapi.json`); it has more fields."""

    openapi: str
    info: dict[str, Any]
    paths: dict[str, Any]
