"""The HTTP transport: its actor, the aiohttp app, its routes, streams, auth and metrics."""

from transport.app import build_app
from transport.exposure import exposure, refusal, warn_at_start
from transport.http_transport import HttpTransport
from transport.state import Peers, Policy

__all__ = ["HttpTransport", "Peers", "Policy", "build_app", "exposure", "refusal", "warn_at_start"]
