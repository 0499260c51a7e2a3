"""Forgetting and exporting, as the HTTP shell takes them: a time range forgotten by the
user's wish, and the same range taken away as a file."""

from __future__ import annotations

from actors.common.forgetting import Moment, Span
from transport.forget.answers import FORGET_BODY_LIMIT, NDJSON, ExportLine, ForgetAnswer
from transport.forget.handler import get_export, post_forget
from transport.host.feature import Parts
from transport.host.route import INGEST_ERRORS, Answer, Param, Route, ok

FORGET = Parts(
    "forget",
    (
        Route(
            "POST",
            "/privacy/forget",
            post_forget,
            "Forget everything that arrived in a time range",
            ok(ForgetAnswer, "Forgotten: gone from every answer and every file; the counts."),
            INGEST_ERRORS,
            "Feed items (transcripts and the agent's hud lines among them), screen events, "
            "agent entries with their search rows, a pending escalation made from the range, "
            "the transcripts the audio path keeps in memory, and the lines of SITUATION.md "
            "that quote the range. `since <= arrival <= until`, epoch ms, both required "
            "whole numbers; anything else is a 400 that changes nothing. The answer comes "
            "once the bytes are gone from the data directory (deleted with SQLite's "
            "`secure_delete`, the WAL truncated). Counters and cost totals stay; what a "
            "model provider received cannot be taken back.",
            body=Span,
            body_limit=FORGET_BODY_LIMIT,
        ),
        Route(
            "GET",
            "/export",
            get_export,
            "Everything that arrived in a time range, as a file of JSON lines",
            {
                "200": Answer(
                    ExportLine,
                    "One `ExportLine` a line (NDJSON), in time order, streamed; sent as an "
                    "attachment.",
                    NDJSON,
                )
            },
            ("BadRequest", "Unavailable"),
            "Feed items, screen events (their pictures left out) and agent entries with "
            "`since <= ts <= until`, each line a JSON object with its `kind` (`feed`, "
            "`screen`, `entry`), its `ts` (epoch ms) and its `item`.",
            params=(
                Param("since", Moment, "From this time (epoch ms), included; 0 by default."),
                Param("until", Moment, "To this time (epoch ms), included; no end by default."),
            ),
        ),
    ),
)
