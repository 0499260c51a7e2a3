"""The API's routes, each stated once: its handler, what it reads and what it answers.

:func:`transport.app.build_app` registers a handler for each :data:`ROUTE_TABLE` entry, and
:mod:`transport.openapi` describes the same entries: a route's answers are typed structs
(:mod:`transport.answers`), its query parameters typed too, its request body named by its
component. Each route also answers ``OPTIONS`` (a CORS preflight), and ``HEAD`` where it
answers ``GET``; the errors every request may get (401, 403, 417, 421) are added by the
document, not listed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from msgspec import Meta

from actors.core.bodies import CONFIG_BODY_LIMIT, FEED_BODY_LIMIT, SENSE_BODY_LIMIT
from actors.core.control_bodies import ESCALATION_BODY_LIMIT
from actors.core.shapes import AgentEntry, FeedItem, TickNote
from actors.kernel.search_index import MAX_QUERY_CHARS, MAX_TERMS
from transport.agent.handler import (
    HISTORY_DEFAULT,
    HISTORY_MAX,
    RANGE_DEFAULT,
    RANGE_MAX,
    get_agent_stream,
    get_config,
    get_context,
    get_digest,
    get_feed_stream,
    get_history,
    get_last,
    post_config,
)
from transport.answers import (
    Accepted,
    CommandAnswer,
    ConfigAnswer,
    ContextAnswer,
    DigestAnswer,
    Done,
    Dropped,
    FeedList,
    HistoryAnswer,
    LastAnswer,
    OpenAPIDocument,
    SenseList,
    Transcribed,
)
from transport.console.page import get_script, get_styles
from transport.features import (
    AUDIO_BODY_LIMIT,
    MAX_AUDIO_MS,
    WAV_TYPES,
    PendingAnswer,
    RespondAnswer,
    get_pending,
    post_audio,
    post_respond,
)
from transport.guard import Handler
from transport.handlers.clients import get_root, get_ws, post_overlay_command, post_profiling_sense
from transport.handlers.health import get_health
from transport.handlers.health_answers import Health
from transport.handlers.health_stream import get_health_stream
from transport.handlers.ingest import get_feed, get_sense, post_feed, post_sense
from transport.handlers.meta import get_metrics, get_openapi, post_fault
from transport.openapi_schemas import HTML, JSON, TEXT
from transport.streams.fanout import LONG_POLL_MAX_S

INGEST_ERRORS = ("BadRequest", "PayloadTooLarge", "UnsupportedMediaType", "Unavailable")
"""What a route that stores a posted body may answer besides its 200."""


@dataclass(frozen=True, slots=True)
class Param:
    """A query (or header) parameter; optional unless the route refuses a request without it."""

    name: str
    type: Any
    """A type msgspec describes: ``int``, ``bool``, or one ``Annotated`` with its limits."""
    description: str
    where: Literal["query", "header"] = "query"
    required: bool = False


@dataclass(frozen=True, slots=True)
class Answer:
    """One status's answer: its body's type (``None``: no body) and what it means."""

    type: Any
    """What msgspec describes; a tuple: one of these (each a struct)."""
    description: str
    media: str = JSON


@dataclass(frozen=True, slots=True)
class Route:
    """One method on one path."""

    method: Literal["GET", "POST"]
    path: str
    handler: Handler
    summary: str
    answers: Mapping[str, Answer] = field(default_factory=dict)
    errors: tuple[str, ...] = ()
    """Names of :data:`transport.openapi.ERROR_ANSWERS` this route may answer."""
    description: str = ""
    params: tuple[Param, ...] = ()
    body: str | None = None
    """The request body's component, when it reads one."""
    body_limit: int | None = None
    """The body's size limit, as the description states it."""
    body_media: tuple[str, ...] = ()
    """The media types of a body that is not JSON (bytes, described by the text)."""
    public: bool = False
    """Needs no token, even when the relay has one."""
    drill: bool = False
    """Served only with ``RELAY_FAULTS=1``."""
    stream: tuple[str, type] | None = None
    """Server-Sent Events: the event's name and its item's type."""
    events: tuple[tuple[str, type], ...] = ()
    """A stream's events, when they are others than its item and the gap."""
    socket: bool = False
    """The overlay's WebSocket."""


AFTER = Param("after", int, "Only items with an id above this one (0 by default).")


def _ok(answer_type: Any, description: str) -> Mapping[str, Answer]:
    return {"200": Answer(answer_type, description)}


def _console_file(path: str, handler: Handler, summary: str, media: str) -> Route:
    """One of the console's files: no token needed, it holds no data."""
    return Route(
        "GET", path, handler, summary, {"200": Answer(str, summary + ".", media)}, public=True
    )


ROUTE_TABLE: tuple[Route, ...] = (
    Route(
        "POST",
        "/feed",
        post_feed,
        "Store a feed message (what the user hears: transcripts, messages)",
        _ok(Accepted, "Stored (committed) with this id."),
        INGEST_ERRORS,
        body="FeedInput",
        body_limit=FEED_BODY_LIMIT,
    ),
    Route(
        "GET",
        "/feed",
        get_feed,
        "Feed messages after an id",
        _ok(FeedList, "The messages, oldest first."),
        ("BadRequest",),
        params=(AFTER,),
    ),
    Route(
        "GET",
        "/feed/stream",
        get_feed_stream,
        "Feed messages as they come (SSE)",
        stream=("feed", FeedItem),
    ),
    Route(
        "POST",
        "/sense",
        post_sense,
        "Store a screen event (what the user sees)",
        _ok((Accepted, Dropped), "Stored (committed) with this id, or dropped as excluded."),
        INGEST_ERRORS,
        body="SenseInput",
        body_limit=SENSE_BODY_LIMIT,
    ),
    Route(
        "GET",
        "/sense",
        get_sense,
        "Screen events after an id",
        _ok(SenseList, "The events, oldest first."),
        ("BadRequest",),
        params=(
            AFTER,
            Param(
                "meta_only",
                bool,
                "`true` (or `1`) drops `roi.data` and `diff.data`; any other value reads as false.",
            ),
        ),
    ),
    Route(
        "GET",
        "/agent/digest",
        get_digest,
        "The latest digest; with `wait`, a long-poll for a newer one",
        _ok(DigestAnswer, "The digest, `null` before the first tick."),
        ("BadRequest", "PollUnavailable"),
        "Without `wait` it answers at once. With `wait` it answers as soon as the latest "
        "digest's `id` is above `after`, at once if it already is, or after `wait` seconds "
        "with the current digest (maybe `null`, or not newer). To follow the digest, pass the "
        "last `digest.id` you got as `after`.",
        params=(
            Param(
                "wait",
                Annotated[float, Meta(gt=0, le=LONG_POLL_MAX_S)],
                "Seconds to wait for a newer digest (long-poll).",
            ),
            Param("after", int, "With `wait`: the id to wait past (0 by default)."),
        ),
    ),
    Route(
        "GET",
        "/agent/stream",
        get_agent_stream,
        "Agent entries as ticks record them (SSE)",
        stream=("agent", AgentEntry),
    ),
    Route(
        "GET",
        "/agent/last",
        get_last,
        "The newest agent entry",
        _ok(LastAnswer, "The entry, `null` before the first tick."),
        ("Unavailable",),
    ),
    Route(
        "GET",
        "/agent/history",
        get_history,
        "Agent entries, newest first; or a time range or a search, page by page",
        _ok(HistoryAnswer, "The entries."),
        ("BadRequest", "Unavailable"),
        "Without `since`, `until`, `before` and `q`: the newest entries (`limit` "
        f"{HISTORY_DEFAULT} by default, {HISTORY_MAX} at most). With any of them: entries "
        "with `since <= ts < until` and `id < before` from the whole retention (`limit` "
        f"{RANGE_DEFAULT} by default, {RANGE_MAX} at most), matching `q` if given, and "
        "`next`, the `before` of the next page.",
        params=(
            Param("limit", Annotated[int, Meta(ge=1)], "Larger is capped."),
            Param("since", int, "Epoch ms, inclusive."),
            Param("until", int, "Epoch ms, exclusive; not before `since`."),
            Param("before", int, "Entries with an id below this one (a `next`)."),
            Param(
                "q",
                Annotated[str, Meta(max_length=MAX_QUERY_CHARS)],
                "Search: only entries whose digest or hud has every word of `q`, each matched "
                "as a word's beginning (`deploy` finds deployment), accents and case ignored; "
                f"at most {MAX_TERMS} words. Words are plain text, never query syntax. 503 "
                "when this relay's SQLite has no full-text search (FTS5).",
            ),
        ),
    ),
    Route(
        "GET",
        "/agent/context",
        get_context,
        "The context window the next tick would see",
        _ok(ContextAnswer, "The window."),
        ("Unavailable",),
    ),
    Route(
        "GET",
        "/agent/config",
        get_config,
        "The agent's runtime configuration",
        _ok(ConfigAnswer, "The configuration."),
        ("Unavailable",),
    ),
    Route(
        "POST",
        "/agent/config",
        post_config,
        "Change the agent's configuration at runtime",
        _ok(ConfigAnswer, "The configuration applied."),
        INGEST_ERRORS,
        body="AgentConfigUpdate",
        body_limit=CONFIG_BODY_LIMIT,
    ),
    Route(
        "GET",
        "/escalation/pending",
        get_pending,
        "The escalation waiting for Sinain's agent",
        _ok(PendingAnswer, "The escalation, or `null`; and the escalation settings."),
        ("BadRequest", "PollUnavailable"),
        "Reading does not consume it: an answer with its id clears it, a newer escalation "
        "replaces it. With `wait`, a long-poll: the answer comes once one is pending, or "
        "(`null`) once `wait` has passed.",
        params=(
            Param(
                "wait",
                Annotated[float, Meta(gt=0, le=LONG_POLL_MAX_S)],
                "Seconds to wait for an escalation to be pending (long-poll).",
            ),
        ),
    ),
    Route(
        "POST",
        "/escalation/respond",
        post_respond,
        "Sinain's agent answers the pending escalation; the answer goes to the feed",
        _ok(RespondAnswer, "`ok` true: taken; false: refused, and why."),
        INGEST_ERRORS,
        "The pending id clears the slot; one of the last five replaced ids, within 60 s of "
        "its tick, is taken too and leaves the slot as it is. A taken answer is on the feed "
        "as `[🤖] <response>` (the agent channel, priority `high`, source `openclaw`, cut at "
        "3000 characters, 4000 when the moment was coding) before this answers. A missing "
        "or empty `id` or `response` is a 400 `missing id or response`.",
        body="EscalationReply",
        body_limit=ESCALATION_BODY_LIMIT,
    ),
    Route(
        "POST",
        "/debug/fault",
        post_fault,
        "Fault drill: make an actor crash or hang",
        _ok(Done, "The fault is on its way."),
        ("BadRequest", "NotFound", "PayloadTooLarge", "UnsupportedMediaType"),
        "Only with `RELAY_FAULTS=1` (a 404 otherwise). A `crash` fires on the actor's next "
        "message, a `hang` blocks it for `seconds` (for `http`, the event loop). Answers "
        "before the fault fires.",
        body="Fault",
        drill=True,
    ),
    Route(
        "POST",
        "/profiling/sense",
        post_profiling_sense,
        "The capture client's own figures: RSS, uptime, counters",
        _ok(Done, "Kept as the newest report."),
        ("BadRequest", "PayloadTooLarge", "UnsupportedMediaType"),
        "Sinain's capture client posts them every 60 s. The newest report is shown in "
        "`/health.profiling.sense` and in `/metrics` "
        '(`relay_client_*{client="sense"}`); it is kept in memory only.',
        body="ProcessReport",
        body_limit=CONFIG_BODY_LIMIT,
    ),
    Route(
        "POST",
        "/audio",
        post_audio,
        "Transcribe one utterance recorded on another device into the feed",
        _ok(Transcribed, "Transcribed: the stored item, or why nothing was stored."),
        (*INGEST_ERRORS, "BadGateway"),
        "A phone or a wearable posts what it recorded: a 16 kHz mono 16-bit WAV, or raw PCM as "
        "`audio/L16; rate=16000; channels=1` (big-endian samples), at most "
        f"{MAX_AUDIO_MS // 1000} s. It goes through the transcriber, the filters and the feed "
        "as captured audio does, marked as `source` says (`mic`: `[🎙] `, the default; "
        "`system`: `[🔊] `), and the answer waits for the transcript. A 503 with "
        "`Retry-After` when the transcriber takes no utterance now (every slot taken, or the "
        "speech service failing), a 503 without one when no speech service key is set, a 502 "
        "when the service failed. Other audio (another rate, stereo, 8-bit, compressed) is a "
        "400; another media type a 415.",
        params=(
            Param(
                "source",
                Literal["mic", "system"],
                "Whose words: `mic`, what the user said (the default), or `system`, what the "
                "user heard.",
            ),
        ),
        body_limit=AUDIO_BODY_LIMIT,
        body_media=(*WAV_TYPES, "audio/L16"),
    ),
    Route(
        "GET",
        "/",
        get_root,
        "The console page; upgraded, the overlay's WebSocket",
        {"200": Answer(str, "Not an upgrade request: the console page (no token needed).", HTML)},
        description="The page holds no data: it asks the API for everything, with the token "
        "when one is set. It and its files answer with a Content-Security-Policy that allows "
        "only this origin and no framing.",
        socket=True,
    ),
    _console_file("/console.js", get_script, "The console's script", "text/javascript"),
    _console_file("/console.css", get_styles, "The console's style sheet", "text/css"),
    Route(
        "POST",
        "/overlay/command",
        post_overlay_command,
        "Work one of the overlay's switches, as the overlay would",
        _ok(CommandAnswer, "Done: the line the overlay shows for it."),
        ("BadRequest",),
        "With `AUDIO_SOURCE` or `MIC_SOURCE` set, `toggle_audio` stops every capture or starts "
        "them again, and `switch_device` swaps `AUDIO_SOURCE` for `AUDIO_ALT_SOURCE`; every "
        "overlay is told. Otherwise, and for `toggle_screen`, the line says the capture "
        "clients own the switch. It reads no body.",
        params=(
            Param(
                "action",
                Literal["toggle_audio", "switch_device", "toggle_screen"],
                "The switch.",
                required=True,
            ),
        ),
    ),
    Route(
        "GET",
        "/ws",
        get_ws,
        "The overlay's WebSocket (upgrade), at /ws",
        errors=("UpgradeRequired",),
        socket=True,
    ),
    Route(
        "GET",
        "/health",
        get_health,
        "Counts, agent statistics, every actor's state, storage and streams",
        {
            "200": Answer(Health, "Every actor answered."),
            "503": Answer(Health, "An actor did not answer: `ok` is false and `error` says which."),
        },
        public=True,
    ),
    Route(
        "GET",
        "/health/stream",
        get_health_stream,
        "`/health` and the agent's ticks as they change (SSE)",
        description="Once a second: a `health` event when `/health` changed (as `GET /health` "
        "answers the caller), then a `tick` event per tick that ended, with the tick's number "
        "as its id; on connecting, the ticks the relay keeps after `after` or `Last-Event-ID`.",
        stream=("health", Health),
        events=(("health", Health), ("tick", TickNote)),
    ),
    Route(
        "GET",
        "/metrics",
        get_metrics,
        "The relay's counters, in the Prometheus text format",
        {"200": Answer(str, "The Prometheus text exposition format, version 0.0.4.", TEXT)},
        description="Made at scrape time. An actor that does not answer in time leaves its "
        "metrics out of that scrape; `relay_scrape_source_up{source}` says which.",
    ),
    Route(
        "GET",
        "/openapi.json",
        get_openapi,
        "This document",
        _ok(OpenAPIDocument, "The OpenAPI 3.1 description of the API."),
    ),
)
"""Every route, in the order the document lists them."""
