"""The escalation feature, as the HTTP shell takes it: the slot Sinain's agents poll, and their
answers."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from actors.core.control_bodies import ESCALATION_BODY_LIMIT, EscalationReply
from transport.escalation.answers import PendingAnswer, RespondAnswer
from transport.escalation.handler import get_pending, post_respond
from transport.host.feature import Parts
from transport.host.route import INGEST_ERRORS, Param, Route, ok
from transport.streams.fanout import LONG_POLL_MAX_S

ESCALATION = Parts(
    "escalation",
    (
        Route(
            "GET",
            "/escalation/pending",
            get_pending,
            "The escalation waiting for Sinain's agent",
            ok(PendingAnswer, "The escalation, or `null`; and the escalation settings."),
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
            ok(RespondAnswer, "`ok` true: taken; false: refused, and why."),
            INGEST_ERRORS,
            "The pending id clears the slot; one of the last five replaced ids, within 60 s of "
            "its tick, is taken too and leaves the slot as it is. A taken answer is on the feed "
            "as `[🤖] <response>` (the agent channel, priority `high`, source `openclaw`, cut at "
            "3000 characters, 4000 when the moment was coding) before this answers. A missing "
            "or empty `id` or `response` is a 400 `missing id or response`.",
            body=EscalationReply,
            body_limit=ESCALATION_BODY_LIMIT,
        ),
    ),
)
