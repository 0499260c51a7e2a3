"""Who may call the relay: the bearer token, the browser origins, and where it may listen.

Three rules, all decided once at start and applied per request by the route guard
(:func:`transport.guard.guarded`) at the cost of a header look-up or two:

- **The token** (``RELAY_TOKEN``). When set, every request needs
  ``Authorization: Bearer <token>``, except ``GET``/``HEAD /health`` and CORS preflights;
  the stream endpoints also take it as ``?access_token=`` because a browser's
  ``EventSource`` cannot set headers. A missing, malformed or wrong header is a 401 with
  ``WWW-Authenticate: Bearer``; the overlay's WebSocket (``/``, ``/ws``) takes
  ``?access_token=`` too, a browser's ``WebSocket`` cannot set headers either. Unknown paths
  answer 401 too rather than 404/405, so a caller
  without the token cannot map the API (nor see whether ``/debug/fault`` exists).
- **Browser origins** (``RELAY_CORS_ORIGINS``). A request whose ``Origin`` is on the list
  gets ``Access-Control-Allow-Origin: <that origin>`` and ``Vary: Origin``; ``*`` on the list
  answers ``*`` to every origin, but only while no token is set. A request from any other
  cross-origin page is refused with 403 before its handler runs: the browser would hide the
  answer anyway, but a "simple" request (a form-encoded or ``text/plain`` POST, an
  ``EventSource``) reaches the server without a preflight, and the relay must not store what
  a web page posted behind the user's back (CSRF to localhost), nor hold a stream slot for
  it. The same goes for the overlay's WebSocket: browsers apply no CORS to WebSockets, so
  an upgrade from a page of any other origin is refused (403) rather than let any page read
  the feed (cross-site WebSocket hijacking). Requests without ``Origin`` (capture clients,
  the overlay, curl, same-origin GETs) are not browser cross-origin requests and pass.
  ``Access-Control-Allow-Credentials`` is never sent: the token travels in a header the page
  sets itself, which CORS does not count as a credential, and the relay has no cookies a
  browser could attach.
- **Exposure**: without a token the relay refuses to listen on anything it cannot prove is
  loopback (:func:`exposure`), unless ``RELAY_ALLOW_INSECURE=1``, which is logged as a
  warning at every start.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Literal

import structlog
from aiohttp import hdrs, web

from actors.core.errors import BadRequest, Forbidden, Unauthorized

REALM = "sinain-relay"
STREAM_TOKEN_PARAM = "access_token"  # noqa: S105 - a parameter name, not a secret
"""The query parameter that carries the token on the stream endpoints only."""
STREAM_PATHS = frozenset({"/feed/stream", "/agent/stream", "/", "/ws"})
"""The SSE streams and the overlay's WebSocket: a browser's ``EventSource`` and
``WebSocket`` cannot set headers."""
OPEN_ROUTES = frozenset({("GET", "/health")})
"""Routes that need no token (a ``GET`` route also answers ``HEAD``)."""
ANY_METHOD = "*"
"""The method of the catch-all route (preflights, 404, 405)."""
PREFLIGHT_MAX_AGE_S = 600
"""How long a browser may cache a preflight's answer (Chrome caps it at 7200)."""
ALLOW_METHODS = "GET, POST, OPTIONS"
ALLOW_HEADERS = "Content-Type, Authorization, Last-Event-ID"

NO_HEADERS: Mapping[str, str] = MappingProxyType({})
Admit = Callable[[web.Request, Mapping[str, str] | None], None]
"""A route's gate: given the request and its CORS headers (``None``: a refused origin),
return to let it through or raise :class:`Forbidden` / :class:`TokenRefused`."""
Verdict = Literal["loopback", "token", "insecure", "refused"]

log = structlog.get_logger("relay")


class TokenRefused(Unauthorized):
    """The request lacks the token, or carries a malformed or wrong one (HTTP 401)."""

    def __init__(self, message: str, error: str | None = None) -> None:
        super().__init__(message)
        self.challenge = f'Bearer realm="{REALM}"' + (f', error="{error}"' if error else "")
        """The ``WWW-Authenticate`` header (RFC 6750: no error code when none was sent)."""


class OriginRefused(Forbidden):
    """A browser page of an origin that is not allowed sent the request (HTTP 403)."""


def challenge(exc: Unauthorized) -> str:
    """The ``WWW-Authenticate`` header of a 401."""
    return exc.challenge if isinstance(exc, TokenRefused) else f'Bearer realm="{REALM}"'


def canonical_origin(origin: str) -> str:
    """``origin`` as a browser serialises it: lower case, without the scheme's default port."""
    origin = origin.strip().rstrip("/").lower()
    for scheme, port in (("http://", ":80"), ("https://", ":443")):
        if origin.startswith(scheme) and origin.endswith(port):
            return origin.removesuffix(port)
    return origin


class Access:
    """The relay's access policy, built once per app from the settings (immutable after).

    Used on the event loop only; the per-request methods are a few dictionary look-ups.
    """

    def __init__(self, token: str, cors_origins: Iterable[str] = ()) -> None:
        origins = tuple(cors_origins)
        self.token_set = bool(token)
        self._token = token.encode("utf-8")
        self._wildcard = "*" in origins and not self.token_set  # with a token: warn_at_start
        listed = dict.fromkeys(canonical_origin(o) for o in origins if o != "*")
        preflight = {
            "Access-Control-Allow-Methods": ALLOW_METHODS,
            "Access-Control-Allow-Headers": ALLOW_HEADERS,
            "Access-Control-Max-Age": str(PREFLIGHT_MAX_AGE_S),
        }
        self._by_origin: dict[str, Mapping[str, str]] = {}
        self._preflight_by_origin: dict[str, Mapping[str, str]] = {}
        if self._wildcard:  # the same answer whatever the origin: no Vary
            self._no_origin: Mapping[str, str] = MappingProxyType(
                {"Access-Control-Allow-Origin": "*"}
            )
            self._any_origin: Mapping[str, str] | None = self._no_origin
            self._any_preflight = MappingProxyType({**self._no_origin, **preflight})
        else:
            # The answer depends on Origin once any origin is listed: say so to caches.
            self._no_origin = MappingProxyType({"Vary": "Origin"} if listed else {})
            self._any_origin = None
            self._any_preflight = self._no_origin
            for origin in listed:
                cors = {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}
                self._by_origin[origin] = MappingProxyType(cors)
                self._preflight_by_origin[origin] = MappingProxyType({**cors, **preflight})

    # -- CORS ---------------------------------------------------------------------------------

    def cors(self, request: web.Request) -> Mapping[str, str] | None:
        """The CORS headers of the answer to ``request``; ``None`` if its origin is refused.

        No ``Origin`` header (not a browser's cross-origin request) or the relay's own origin:
        no ``Access-Control-Allow-Origin`` (only ``Vary``, when the list makes answers differ).
        """
        origin = request.headers.get(hdrs.ORIGIN)
        if origin is None:
            return self._no_origin
        headers = self._by_origin.get(origin)
        if headers is not None:
            return headers
        if self._any_origin is not None:
            return self._any_origin
        if _same_origin(origin, request.host):
            return self._no_origin
        return None

    def preflight(self, request: web.Request) -> web.Response:
        """The 204 answer to an ``OPTIONS`` preflight: methods, headers and max-age for an
        allowed origin; no CORS headers for another (the browser then stops there)."""
        origin = request.headers.get(hdrs.ORIGIN, "")
        headers = self._preflight_by_origin.get(origin)
        if headers is None:
            headers = self._any_preflight if self._any_origin is not None else NO_HEADERS
        return web.Response(status=204, headers=headers)

    # -- gates --------------------------------------------------------------------------------

    def gate(self, method: str, path: str) -> Admit:
        """The gate of one route: ``GET /health`` needs no token, the streams also take
        ``?access_token=``, the catch-all (:data:`ANY_METHOD`) lets preflights through."""
        if method == ANY_METHOD:
            return self._admit_unless_preflight
        if (method, path) in OPEN_ROUTES or not self.token_set:
            return _admit_origin
        if path in STREAM_PATHS:
            return self._admit_stream
        return self._admit

    def _admit(self, request: web.Request, cors: Mapping[str, str] | None) -> None:
        if cors is None:
            raise _origin_refused(request)
        if self.token_set:
            self._verify(request.headers.get(hdrs.AUTHORIZATION))

    def _admit_stream(self, request: web.Request, cors: Mapping[str, str] | None) -> None:
        if cors is None:
            raise _origin_refused(request)
        header = request.headers.get(hdrs.AUTHORIZATION)
        if header is None and STREAM_TOKEN_PARAM in request.query:
            self._compare(request.query[STREAM_TOKEN_PARAM])
        else:
            self._verify(header)

    def _admit_unless_preflight(self, request: web.Request, cors: Mapping[str, str] | None) -> None:
        if request.method != hdrs.METH_OPTIONS:
            self._admit(request, cors)

    def authorized(self, request: web.Request) -> bool:
        """Whether ``request`` carries the token (always true when none is set); for the
        open ``/health``, which shows callers without it less."""
        if not self.token_set:
            return True
        try:
            self._verify(request.headers.get(hdrs.AUTHORIZATION))
        except TokenRefused:
            return False
        return True

    def _verify(self, header: str | None) -> None:
        if header is None:
            raise TokenRefused("this endpoint needs Authorization: Bearer <RELAY_TOKEN>")
        scheme, _, credentials = header.strip().partition(" ")
        credentials = credentials.strip()
        if scheme.lower() != "bearer" or not credentials:
            raise TokenRefused(
                "the Authorization header must be: Bearer <RELAY_TOKEN>", "invalid_request"
            )
        self._compare(credentials)

    def _compare(self, given: str) -> None:
        # compare_digest: the time taken depends on the lengths, not on where bytes differ.
        # surrogatepass: a header aiohttp decoded with lone surrogates still encodes, and
        # never to the bytes of a real token.
        if not hmac.compare_digest(given.encode("utf-8", "surrogatepass"), self._token):
            raise TokenRefused("wrong token in Authorization: Bearer", "invalid_token")


def _admit_origin(request: web.Request, cors: Mapping[str, str] | None) -> None:
    if cors is None:
        raise _origin_refused(request)


def _origin_refused(request: web.Request) -> OriginRefused | BadRequest:
    origin = request.headers.get(hdrs.ORIGIN, "")
    if not origin.isascii():  # a browser writes an origin in ASCII (a name in punycode)
        return BadRequest("the Origin header is not an origin: it has bytes that are not ASCII")
    return OriginRefused(
        f"requests from web pages at {origin[:100]} are refused; "
        "list the origin in RELAY_CORS_ORIGINS to allow it"
    )


def _same_origin(origin: str, host: str) -> bool:
    """Whether ``origin`` is the relay's own (its authority is the request's ``Host``)."""
    return origin.partition("://")[2].lower() == host.lower()


# -- exposure ---------------------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    """Whether listening on ``host`` provably serves this machine only.

    True for ``localhost`` (RFC 6761 reserves the name for loopback), 127.0.0.0/8, ``::1``
    and its IPv4-mapped form. False for everything else, including what may well be
    loopback but cannot be told without asking a resolver (another host name, ``127.1``):
    ``0.0.0.0`` and ``::`` listen on every interface.
    """
    name = host.strip().lower().rstrip(".")
    if name == "localhost":
        return True
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def exposure(host: str, *, token: str, allow_insecure: bool) -> Verdict:
    """Whether the relay may listen on ``host``.

    ``loopback``: this machine only; ``token``: beyond it, with a token; ``insecure``: beyond
    it without a token, as ``RELAY_ALLOW_INSECURE`` asks (warn at every start);
    ``refused``: beyond it without a token (exit 2 with :func:`refusal`).
    """
    if is_loopback(host):
        return "loopback"
    if token:
        return "token"
    return "insecure" if allow_insecure else "refused"


def refusal(host: str) -> str:
    """The one-line message of a refused start (after ``run.py: error: ``)."""
    return (
        f"refusing to listen on {host} without RELAY_TOKEN: it is not a loopback address "
        "(127.0.0.1, ::1, localhost), so anyone who can reach the port could read what this "
        "machine sees and hears. Set RELAY_TOKEN (e.g. RELAY_TOKEN=$(openssl rand -hex 32)), "
        "or listen on 127.0.0.1 (RELAY_HOST, --host), or set RELAY_ALLOW_INSECURE=1 to serve "
        "without a token anyway"
    )


def warn_at_start(verdict: Verdict, *, host: str, token: str, cors_origins: Iterable[str]) -> None:
    """Log what the operator must know at every start: an insecure exposure, an ignored ``*``."""
    if verdict == "insecure":
        log.warning(
            "relay.insecure",
            actor="root",
            host=host,
            note="RELAY_ALLOW_INSECURE: serving beyond loopback without RELAY_TOKEN; anyone "
            "who can reach the port can read and change everything",
        )
    if token and "*" in tuple(cors_origins):
        log.warning(
            "relay.cors_wildcard_ignored",
            actor="root",
            note="RELAY_CORS_ORIGINS lists * but RELAY_TOKEN is set: * is never sent with a "
            "token; list the origins that may call the relay",
        )
