"""The wire shapes of what the actors own: feed items, agent entries, digests, the window.

One typed statement per shape (msgspec ``Struct``): the records of :mod:`actors.core.records`,
:mod:`actors.agent.core.entries` and :mod:`actors.core.window` are encoded from these, and the
OpenAPI document's components are generated from them (:mod:`transport.openapi`), with each
docstring and ``Meta(description=...)`` as the component's description. Every shape is
closed (``forbid_unknown_fields``: ``additionalProperties: false``); a field that may be left
out is ``UNSET`` when it is, never ``null``.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal, get_args

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

Channel = Literal["stream", "agent"]
"""Where the overlay shows a feed item: its feed, or its Agent tab."""
STREAM: Channel = "stream"
"""The channel of most feed items: the overlay's main feed."""
AGENT: Channel = "agent"
"""The channel of advice for the user (the overlay's Agent tab); also the ``source`` of the
relay's own hud lines."""
CHANNELS: tuple[Channel, ...] = get_args(Channel)

AudioSource = Literal["system", "mic"]
"""Whose words a transcript holds: ``system``, what the user hears (``AUDIO_SOURCE``);
``mic``, what the user says (``MIC_SOURCE``, and ``POST /audio`` from another device)."""
AUDIO_SOURCES: Final[tuple[AudioSource, ...]] = ("system", "mic")
MARKS: Final[dict[AudioSource, str]] = {"system": "[🔊] ", "mic": "[🎙] "}
"""The prefix of a transcript's feed text, by source; the agent hears both."""
TRANSCRIPT_SOURCE: Final = "audio"
"""The feed ``source`` of every transcript."""
NO_OUTPUT: Final = "—"
"""What an agent entry holds when the model gave no hud or no digest."""

Id = Annotated[int, Meta(ge=1, description="Monotonic, also across restarts.")]
Ms = Annotated[int, Meta(description="Epoch milliseconds.")]
Epoch = Annotated[
    str,
    Meta(
        description="Changes only when the data is new: a client that sees a new epoch resets "
        "its `after` cursor."
    ),
]
CostOrigin = Literal["provider", "table", "mixed", "unknown"]
"""Where a model's prices came from: the provider's answers, the price table, both, or
neither."""
MAX_MS = 2**53 - 1
"""The largest time :func:`whole_ms` gives: the largest whole number a float holds exactly."""


def whole_ms(ts: float) -> int:
    """A client's time (epoch ms, maybe with a fraction) as whole milliseconds, within
    ``±MAX_MS`` (a client may send any finite number)."""
    if not abs(ts) <= MAX_MS:
        return MAX_MS if ts > 0 else -MAX_MS
    return round(ts)


_MODEL = Annotated[
    str,
    Meta(description="The model the server says answered (the configured name if it names none)."),
]


class Shape(Struct, frozen=True, forbid_unknown_fields=True, rename="camel"):
    """A closed JSON object whose field names are the Python names in camelCase."""


_encoder = msgspec.json.Encoder()


def encode(shape: object) -> bytes:
    """``shape`` as JSON bytes."""
    return _encoder.encode(shape)


class FeedItem(Shape, frozen=True, kw_only=True):
    """One message of the feed, as `GET /feed` and the feed stream give it."""

    id: Id
    text: str
    priority: str
    ts: Ms
    source: (
        Annotated[
            str,
            Meta(
                description="`agent` on the agent's own lines, whose text is `[🧠] <hud>`; "
                "`overlay` on what the user typed in the overlay; otherwise what the client "
                "posted, absent when it gave none."
            ),
        ]
        | UnsetType
    ) = UNSET
    channel: Channel


class AppSwitch(Shape, frozen=True):
    """The moment the active app changed, by the capture client's clock: the `ts` of the
    screen event that showed it, in whole milliseconds."""

    app: str
    ts: Ms


class EntryContext(Shape, frozen=True):
    """What the tick's window held."""

    current_app: str
    app_history: Annotated[
        list[str],
        Meta(description="The apps of the tick's window, in the order they were used."),
    ]
    audio_count: Annotated[int, Meta(description="Transcripts in the window.")]
    screen_count: Annotated[int, Meta(description="Screen events in the window.")]


class AgentEntry(Shape, frozen=True):
    """One successful tick."""

    id: Id
    ts: Ms
    hud: str
    digest: str
    context: EntryContext
    pushed: Annotated[bool, Meta(description="Whether the hud went to the feed.")]
    model: _MODEL
    latency_ms: int
    tokens_in: int
    tokens_out: int
    parsed_ok: Annotated[bool, Meta(description="Whether the answer was JSON.")]
    context_freshness_ms: (
        Annotated[
            int,
            Meta(description="From the arrival of the newest event in the window to the answer."),
        ]
        | None
    )


class Digest(Shape, frozen=True):
    """The latest tick's digest. `hud`, `context` and `model` are the entry's own (as
    `/agent/last` gives them), for clients that read them from the digest."""

    id: Id
    ts: Ms
    digest: str
    current_app: str
    app_history: Annotated[
        list[AppSwitch],
        Meta(description="Each app switch in the tick's window, with its time."),
    ]
    latency_ms: int
    hud: Annotated[str, Meta(description="The tick's hud line.")]
    context: EntryContext
    model: _MODEL


class AudioChunk(Shape, frozen=True):
    """A transcript chunk of the window; `source` says whose words they are when its mark
    does: `system` (what the user heard) or `mic` (what the user said)."""

    ts: Ms
    text: str
    source: AudioSource | UnsetType = UNSET


class ScreenLine(Shape, frozen=True):
    """What the window keeps of a screen event; `windowTitle`, `title` and `narrative` when
    they say more than the OCR."""

    ts: float
    type: str
    app: str
    ocr: str
    ssim: float | UnsetType = UNSET
    window_title: str | UnsetType = UNSET
    title: str | UnsetType = UNSET
    narrative: str | UnsetType = UNSET


class ImageRef(Shape, frozen=True):
    """A screen image the next call sends: which event it came with, never its bytes."""

    sense_id: int
    type: Annotated[str, Meta(examples=["image/jpeg", "image/png"])]
    bytes: Annotated[int, Meta(description="Its size, decoded.")]


class ContextWindow(Shape, frozen=True):
    """The window the next tick would see."""

    current_app: str
    app_history: list[AppSwitch]
    audio: Annotated[list[AudioChunk], Meta(description="Transcript chunks, newest last.")]
    screen: Annotated[
        list[ScreenLine],
        Meta(
            description="Unique screen events, newest last; `windowTitle`, `title` and "
            "`narrative` when they say more than the OCR."
        ),
    ]
    audio_count: int
    screen_count: int
    window_ms: int
    newest_event_ts: Ms | None
    images: Annotated[
        list[ImageRef],
        Meta(
            description="The screen images the next call sends, newest first: the newest "
            "distinct ones no recent call sent; empty with vision off."
        ),
    ]


class ModelCost(Shape, frozen=True):
    """One model's calls, tokens and cost since the counters began."""

    calls: int
    tokens_in: int
    tokens_out: int
    cost_usd: Annotated[float, Meta(description="`null` when not known.")] | None
    cost_source: Annotated[
        CostOrigin,
        Meta(
            description="Where the prices came from: the provider's answers, the price table, "
            "both, or neither."
        ),
    ]
    unpriced_calls: int


class TickNote(Shape, frozen=True, kw_only=True):
    """One agent tick as it ended: how, and what it cost when it called a model."""

    id: Annotated[int, Meta(ge=1, description="Ticks counted since the relay started.")]
    ts: Ms
    outcome: Annotated[
        str,
        Meta(
            description="`ok`: the model answered; `idle`, `empty`, `unchanged`, `minor`: "
            "skipped (nothing new, nothing in the window, what the last call was told, no "
            "meaningful change); `deferred`: the call waits; `failed`: the model path failed.",
        ),
    ]
    reason: Annotated[
        str | None,
        Meta(description="Why it was skipped or deferred, or why its hud was withheld."),
    ] = None
    model: str | None = None
    latency_ms: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    error: Annotated[str | None, Meta(description="What failed, on `failed`.")] = None
