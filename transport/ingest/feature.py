"""The ingest feature, as the HTTP shell takes it: the feed's and the screen's routes, and
the items each holds in ``/health``."""

from __future__ import annotations

from actors.core.bodies import FEED_BODY_LIMIT, SENSE_BODY_LIMIT, FeedInput, SenseInput
from actors.core.shapes import FeedItem
from transport.host.feature import HealthSection, Parts
from transport.host.route import AFTER, INGEST_ERRORS, Param, Route, ok
from transport.ingest.handler import get_feed, get_feed_stream, get_sense, post_feed, post_sense
from transport.ingest.health import read_messages, read_sense_events
from transport.shell.answers import Accepted, Dropped, FeedList, SenseList

INGEST = Parts(
    "ingest",
    (
        Route(
            "POST",
            "/feed",
            post_feed,
            "Store a feed message (what the user hears: transcripts, messages)",
            ok((Accepted, Dropped), "Stored (committed) with this id, or dropped as paused."),
            INGEST_ERRORS,
            body=FeedInput,
            body_limit=FEED_BODY_LIMIT,
        ),
        Route(
            "GET",
            "/feed",
            get_feed,
            "Feed messages after an id",
            ok(FeedList, "The messages, oldest first."),
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
            ok(
                (Accepted, Dropped),
                "Stored (committed) with this id, or dropped as excluded or paused.",
            ),
            INGEST_ERRORS,
            body=SenseInput,
            body_limit=SENSE_BODY_LIMIT,
        ),
        Route(
            "GET",
            "/sense",
            get_sense,
            "Screen events after an id",
            ok(SenseList, "The events, oldest first."),
            ("BadRequest",),
            params=(
                AFTER,
                Param(
                    "meta_only",
                    bool,
                    "`true` (or `1`) drops `roi.data` and `diff.data`; any other value reads "
                    "as false.",
                ),
            ),
        ),
    ),
    health=(
        HealthSection("messages", int | None, read_messages),
        HealthSection("sense_events", int | None, read_sense_events),
    ),
)
