"""The shell's own routes, handed to the registry as a feature's are: the fault drill and the
capture client's reports; the relay's state, its counters and this document (made for the
``/health`` struct of the features served, :func:`status`)."""

from __future__ import annotations

import functools

from actors.core.bodies import CONFIG_BODY_LIMIT, ProcessReport
from actors.core.control_bodies import Fault
from actors.core.shapes import Shape, TickNote
from transport.handlers.clients import post_profiling_sense
from transport.handlers.health import get_health
from transport.handlers.health_stream import get_health_stream
from transport.handlers.meta import get_metrics, get_openapi, post_fault
from transport.host.feature import Parts
from transport.host.route import Answer, Route, ok
from transport.shell.answers import Done, OpenAPIDocument
from transport.shell.openapi_schemas import TEXT

CONTROL = Parts(
    "control",
    (
        Route(
            "POST",
            "/debug/fault",
            post_fault,
            "Fault drill: make an actor crash or hang",
            ok(Done, "The fault is on its way."),
            ("BadRequest", "NotFound", "PayloadTooLarge", "UnsupportedMediaType"),
            "Only with `RELAY_FAULTS=1` (a 404 otherwise). A `crash` fires on the actor's next "
            "message, a `hang` blocks it for `seconds` (for `http`, the event loop). Answers "
            "before the fault fires.",
            body=Fault,
            drill=True,
        ),
        Route(
            "POST",
            "/profiling/sense",
            post_profiling_sense,
            "The capture client's own figures: RSS, uptime, counters",
            ok(Done, "Kept as the newest report."),
            ("BadRequest", "PayloadTooLarge", "UnsupportedMediaType"),
            "Sinain's capture client posts them every 60 s. The newest report is shown in "
            "`/health.profiling.sense` and in `/metrics` "
            '(`relay_client_*{client="sense"}`); it is kept in memory only.',
            body=ProcessReport,
            body_limit=CONFIG_BODY_LIMIT,
        ),
    ),
)


def status(health: type[Shape]) -> Parts:
    """The routes of the relay's state: ``/health`` and its stream answering ``health``
    (:func:`~transport.handlers.health_answers.health_shape`), ``/metrics``, this document."""
    return Parts(
        "status",
        (
            Route(
                "GET",
                "/health",
                functools.partial(get_health, health),
                "Counts, agent statistics, every actor's state, storage and streams",
                {
                    "200": Answer(health, "Every actor answered."),
                    "503": Answer(
                        health, "An actor did not answer: `ok` is false and `error` says which."
                    ),
                },
                public=True,
            ),
            Route(
                "GET",
                "/health/stream",
                functools.partial(get_health_stream, health),
                "`/health` and the agent's ticks as they change (SSE)",
                description="Once a second: a `health` event when `/health` changed (as "
                "`GET /health` answers the caller), then a `tick` event per tick that ended, with "
                "the tick's number as its id; on connecting, the ticks the relay keeps after "
                "`after` or `Last-Event-ID`.",
                stream=("health", health),
                events=(("health", health), ("tick", TickNote)),
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
                ok(OpenAPIDocument, "The OpenAPI 3.1 description of the API."),
            ),
        ),
    )
