"""The HTTP transport actor and its routes."""

from transport.auth import exposure, refusal, warn_at_start
from transport.http_transport import HttpTransport
from transport.routes import Peers, build_app

__all__ = ["HttpTransport", "Peers", "build_app", "exposure", "refusal", "warn_at_start"]
