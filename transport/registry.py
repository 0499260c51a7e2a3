"""The registry: every feature the relay serves, and the shell's own parts, in one list.

The shell loops over :data:`FEATURES` and names no feature: the route table
(:data:`ROUTE_TABLE`) is their routes in this order, which :func:`transport.app.build_app`
registers and :mod:`transport.openapi` describes, in the same order. A new feature is a
package that makes one :class:`~transport.host.feature.Feature`, and one line here.
"""

from __future__ import annotations

from transport.agent.feature import AGENT
from transport.audio.feature import AUDIO
from transport.console.feature import CONSOLE
from transport.escalation.feature import ESCALATION
from transport.handlers.parts import CONTROL, STATUS
from transport.host.feature import Feature
from transport.host.route import Route
from transport.ingest.feature import INGEST
from transport.mcp.feature import MCP
from transport.overlay.feature import OVERLAY

FEATURES: tuple[Feature, ...] = (
    INGEST,
    AGENT,
    ESCALATION,
    CONTROL,
    AUDIO,
    CONSOLE,
    OVERLAY,
    STATUS,
    MCP,
)
"""Each feature once, in the order their routes are listed."""

ROUTE_TABLE: tuple[Route, ...] = tuple(route for feature in FEATURES for route in feature.routes)
"""Every route, in the order the document lists them."""
