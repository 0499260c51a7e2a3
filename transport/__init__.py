"""The HTTP transport: its actor, the aiohttp app, its routes, streams, auth and metrics."""

from transport.app import build_app
from transport.exposure import exposure, refusal, warn_at_start
from transport.frontend import HttpFrontend
from transport.http_transport import HttpTransport
from transport.state import Peers, Policy

__all__ = [
    "HttpFrontend",
    "HttpTransport",
    "Peers",
    "Policy",
    "build_app",
    "exposure",
    "refusal",
    "warn_at_start",
]
