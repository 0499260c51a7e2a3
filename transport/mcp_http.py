"""``sinain-relay mcp --http``: the MCP server over Streamable HTTP, on loopback only, behind
the relay's token.

The endpoint is ``http://127.0.0.1:<port>/mcp``. With ``RELAY_TOKEN`` set, every request needs
``Authorization: Bearer <token>``, as the relay's own endpoints do; there is no flag to listen
beyond loopback. The SDK's own checks of ``Host`` and ``Origin`` (DNS rebinding, pages of
other sites) stay on.
"""

from __future__ import annotations

import hmac
import socket

import structlog
import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

log = structlog.get_logger("mcp")

HOST = "127.0.0.1"
DEFAULT_PORT = 18792
"""The relay's port plus one."""
PATH = "/mcp"


class BearerGuard:
    """An ASGI wrapper: HTTP requests without ``Authorization: Bearer <token>`` get 401 JSON
    and never reach the app. The app's lifespan passes through."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._allowed(scope):
            log.info("mcp.http_refused", path=scope.get("path"), reason="token")
            refusal = JSONResponse(
                {"ok": False, "error": "missing or wrong bearer token"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="sinain-relay"'},
            )
            await refusal(scope, receive, send)
            return
        await self._app(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        given = [value for name, value in scope.get("headers", ()) if name == b"authorization"]
        return len(given) == 1 and hmac.compare_digest(given[0], self._expected)


def http_app(server: MCPServer, token: str) -> ASGIApp:
    """The Streamable HTTP app at :data:`PATH`, behind :class:`BearerGuard` when ``token``."""
    app: ASGIApp = server.streamable_http_app(streamable_http_path=PATH, host=HOST)
    return BearerGuard(app, token) if token else app


def listen(port: int) -> socket.socket:
    """A socket listening on ``127.0.0.1:port`` (0: a free port).

    Raises:
        OSError: the port is taken, or not ours to take.
    """
    return socket.create_server((HOST, port))


async def serve_http(server: MCPServer, sock: socket.socket, *, token: str) -> None:
    """Serve :func:`http_app` on ``sock`` (from :func:`listen`) until SIGINT or SIGTERM. The
    ``mcp.listening`` line names the endpoint; the socket already accepts connections."""
    config = uvicorn.Config(
        http_app(server, token), log_config=None, access_log=False, lifespan="on"
    )
    bound = sock.getsockname()[1]
    log.info("mcp.listening", url=f"http://{HOST}:{bound}{PATH}", token=bool(token))
    await uvicorn.Server(config).serve(sockets=[sock])
