"""The HTTP transport actor and its routes."""

from transport.http_transport import HttpTransport
from transport.routes import Peers, build_app

__all__ = ["HttpTransport", "Peers", "build_app"]
