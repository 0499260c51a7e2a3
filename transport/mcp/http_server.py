"""``sinain-relay mcp --http``: the MCP server over Streamable HTTP, on loopback only, under
the relay's own rules for who may call it.

The endpoint is ``http://127.0.0.1:<port>/mcp``; there is no flag to listen beyond loopback.
Every HTTP request passes :class:`Guard` before the SDK's app sees it, which applies the
rules of :mod:`transport.shell.auth`, in the relay's order:

- **the host**: its ``Host`` must be a name the relay serves (``127.0.0.1``, ``localhost``,
  ``[::1]`` and ``RELAY_ALLOWED_HOSTS``), with this server's port or none, as sent
  (:func:`transport.shell.hosts.hosts_on`); anything else, or none, is a JSON 421, so a page that
  points its own name at this machine (DNS rebinding) gets nothing;
- **browser pages**: the server is for agents, not for web pages, so a request with any
  ``Origin`` is a JSON 403 (a page on another port of localhost included: another origin,
  no more trusted than any web page), and so is one a browser says it sent for a page of
  another site (``Sec-Fetch-Site: same-site`` or ``cross-site``, the relay's rule:
  :func:`transport.shell.auth.foreign_site`), which carries no ``Origin``;
- **the token**: with ``RELAY_TOKEN`` set, ``Authorization: Bearer <token>``, the relay's
  own token; anything else is a JSON 401.

The SDK is handed the same hosts and no origins (:func:`security`), so its own check, behind
this one, agrees with it rather than falling back to its defaults, which let in pages on any
port of localhost.
"""

from __future__ import annotations

import hmac
import socket
from collections.abc import Iterable

import structlog
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from transport.shell.auth import REALM, foreign_site, shown
from transport.shell.hosts import hosts_on

log = structlog.get_logger("mcp")

HOST = "127.0.0.1"
DEFAULT_PORT = 18792
"""The relay's port plus one."""
PATH = "/mcp"

_Refusal = tuple[int, str, str]
"""A refused request's status, the reason logged, and the error answered."""
_HOST_REFUSED = (
    "Host '{}' is not a name this server serves (127.0.0.1, localhost, [::1], or a name in "
    "RELAY_ALLOWED_HOSTS, with its port or none); a web page that points its own name at this "
    "machine is refused"
)
_ORIGIN_REFUSED = (
    "requests from web pages (Origin: {}) are refused: this MCP server serves agents, not browsers"
)
_SITE_REFUSED = (
    "requests a browser sends for a page of another site (Sec-Fetch-Site: {}) are refused"
)


def security(hosts: Iterable[str]) -> TransportSecuritySettings:
    """The SDK's own Host and Origin check, set to :class:`Guard`'s rules: these hosts, no
    origin."""
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=sorted(hosts), allowed_origins=[]
    )


class Guard:
    """An ASGI wrapper: an HTTP request that breaks one of the module's rules gets a JSON
    error and never reaches the app. The app's lifespan passes through."""

    def __init__(self, app: ASGIApp, *, hosts: Iterable[str], token: str = "") -> None:
        self._app = app
        self._hosts = frozenset(hosts)
        self._expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self._refusal(scope) if scope["type"] == "http" else None
        if refusal is None:
            await self._app(scope, receive, send)
            return
        status, reason, error = refusal
        log.info("mcp.http_refused", path=scope.get("path"), reason=reason, status=status)
        headers = {"WWW-Authenticate": f'Bearer realm="{REALM}"'} if status == 401 else None
        answer = JSONResponse({"ok": False, "error": error}, status_code=status, headers=headers)
        await answer(scope, receive, send)

    def _refusal(self, scope: Scope) -> _Refusal | None:
        headers = Headers(scope=scope)
        host = headers.get("host")
        if host not in self._hosts:
            return 421, "host", _HOST_REFUSED.format(shown(host or ""))
        origin = headers.get("origin")
        if origin is not None:
            return 403, "origin", _ORIGIN_REFUSED.format(shown(origin))
        site = headers.get("sec-fetch-site")
        if foreign_site(site):
            return 403, "site", _SITE_REFUSED.format(shown(site, 20))
        if self._expected is not None and not _carries(scope, self._expected):
            return 401, "token", "missing or wrong bearer token"
        return None


def _carries(scope: Scope, expected: bytes) -> bool:
    """One ``Authorization`` header, and it is ``expected`` (compared in constant time)."""
    given = [value for name, value in scope.get("headers", ()) if name == b"authorization"]
    return len(given) == 1 and hmac.compare_digest(given[0], expected)


def http_app(server: MCPServer, *, port: int, token: str, allowed_hosts: Iterable[str]) -> ASGIApp:
    """The Streamable HTTP app at :data:`PATH` on ``port``, behind :class:`Guard`."""
    hosts = hosts_on(port, allowed_hosts)
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=PATH, host=HOST, transport_security=security(hosts)
    )
    return Guard(app, hosts=hosts, token=token)


def listen(port: int) -> socket.socket:
    """A socket listening on ``127.0.0.1:port`` (0: a free port).

    Raises:
        OSError: the port is taken, or not ours to take.
    """
    return socket.create_server((HOST, port))


async def serve_http(
    server: MCPServer, sock: socket.socket, *, token: str, allowed_hosts: Iterable[str] = ()
) -> None:
    """Serve :func:`http_app` on ``sock`` (from :func:`listen`) until SIGINT or SIGTERM. The
    ``mcp.listening`` line names the endpoint; the socket already accepts connections."""
    bound = sock.getsockname()[1]
    app = http_app(server, port=bound, token=token, allowed_hosts=allowed_hosts)
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on")
    log.info("mcp.listening", url=f"http://{HOST}:{bound}{PATH}", token=bool(token))
    await uvicorn.Server(config).serve(sockets=[sock])
