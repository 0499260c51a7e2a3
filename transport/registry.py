"""The registry: every feature the relay serves, and the shell's own parts, in one list.

The shell loops over :data:`FEATURES` and names no feature: the route table
(:data:`ROUTE_TABLE`) is their routes in this order, which :func:`transport.app.build_app`
registers and :mod:`transport.openapi` describes, in the same order; ``GET /health``'s
struct is the relay's fields around their sections, in this order too
(:func:`~transport.handlers.health_answers.health_shape`). A new feature is a package that
makes one :class:`~transport.host.feature.Feature`, and one line here.
"""

from __future__ import annotations

from transport.agent.feature import AGENT
from transport.audio.feature import AUDIO
from transport.console.feature import CONSOLE
from transport.escalation.feature import ESCALATION
from transport.forget.feature import FORGET
from transport.handlers.health_answers import health_shape
from transport.handlers.parts import CONTROL, status
from transport.host.feature import Feature
from transport.host.route import Route
from transport.ingest.feature import INGEST
from transport.mcp.feature import MCP
from transport.overlay.feature import OVERLAY
from transport.privacy.feature import PRIVACY

_FEATURES: tuple[Feature, ...] = (
    INGEST,
    AGENT,
    ESCALATION,
    CONTROL,
    FORGET,
    AUDIO,
    CONSOLE,
    OVERLAY,
    MCP,
    PRIVACY,
)

FEATURES: tuple[Feature, ...] = (*_FEATURES, status(health_shape(_FEATURES)))
"""Each feature once, in the order their routes are listed (and their ``/health`` sections,
their metric families and their checks); the shell's status routes last, as ``/health``'s
answer is made of every other's sections."""

ROUTE_TABLE: tuple[Route, ...] = tuple(route for feature in FEATURES for route in feature.routes)
"""Every route, in the order the document lists them."""
