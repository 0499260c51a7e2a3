"""A route, stated once: its handler, what it reads and what it answers.

Each feature states its own routes (its :class:`~transport.host.feature.Feature`'s
``routes``); :mod:`transport.app` registers a handler for each, and :mod:`transport.openapi`
describes the same entries: a route's answers are typed structs, its query parameters typed
too, its request body named by its component. Each route also answers ``OPTIONS`` (a CORS
preflight), and ``HEAD`` where it answers ``GET``; the errors every request may get (401,
403, 417, 421) are added by the document, not listed here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web
from msgspec import Struct

from transport.shell.openapi_schemas import JSON

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
"""What serves a route: a coroutine from the request to its answer."""

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
    body: type[Struct] | None = None
    """The struct that decodes the request body, when it reads one: the document's component
    of its name is generated from it."""
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


def ok(answer_type: Any, description: str) -> Mapping[str, Answer]:
    """A route's one answer: a 200 with a JSON body of ``answer_type``."""
    return {"200": Answer(answer_type, description)}
