"""What ``POST /privacy/forget`` answers, and the media type of ``GET /export``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta

from actors.common.forgetting import Forgotten, Moment
from actors.core.shapes import Shape

FORGET_BODY_LIMIT = 1024
"""Largest ``POST /privacy/forget`` body, in bytes."""
NDJSON = "application/x-ndjson"
"""``GET /export``'s media type: one JSON object a line."""


class ForgetAnswer(Shape, frozen=True):
    """A forget done: the range, and what was removed by kind."""

    ok: Literal[True]
    since: Moment
    until: Moment
    forgotten: Forgotten


class ExportLine(Shape, frozen=True):
    """One line of ``GET /export``."""

    kind: Annotated[
        Literal["feed", "screen", "entry"],
        Meta(description="A feed item, a screen event, an agent entry."),
    ]
    ts: Annotated[int, Meta(description="When it arrived (an entry: was stored), epoch ms.")]
    item: Annotated[
        dict[str, Any],
        Meta(
            description="As `GET /feed`, `GET /sense?meta_only=true` (no pictures) and "
            "`GET /agent/history` give it."
        ),
    ]
