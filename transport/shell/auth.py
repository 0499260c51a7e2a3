"""Who may call the relay: the host it is called by, the bearer token, the browser origins,
and where it may listen.

Five rules, all decided once at start and applied per request by the route guard
(:func:`transport.shell.guard.guarded`) at the cost of a header look-up or two:

- **The host** (``Host``). A web page can rebind its own name to 127.0.0.1 (DNS rebinding):
  the browser then sends the relay requests whose ``Host`` and ``Origin`` are the page's
  name, and lets the page read the answers as its own origin's. So a request is served only
  when its ``Host`` is a name the relay serves: ``127.0.0.1``, ``localhost``, ``[::1]``, the
  IP address the connection arrived at, and the names of ``RELAY_ALLOWED_HOSTS``; with the
  port the connection arrived at, or none (a listed ``name:port`` with that port only).
  Anything else is a JSON 421 before the token is looked at and before any handler runs,
  on every path. A request without ``Host`` (HTTP/1.0; HTTP/1.1 without one is the parser's
  400) comes from no browser and passes. The check is one set look-up of the header as sent
  (:attr:`Access.hosts`); a spelling the set lacks (another case, a trailing dot) is
  canonicalised and looked up again, and the first connection to each local address and
  port adds that address and port to the set: so the port is the one actually bound, also
  when the relay was asked for any free port.
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
- **Browser sites** (``Sec-Fetch-Site``, Fetch Metadata). Browsers say where a request
  comes from also when they send no ``Origin`` (an ``<img>``, an ``<iframe>``, a link): on
  every route but ``/health`` (and preflights, which run nothing), ``cross-site`` and
  ``same-site`` are refused (403) unless an ``Origin`` on the list vouches for the request
  (or the list has ``*``), so no page holds a stream slot. ``same-site`` too: a page on
  another port of localhost is the same site, and another origin, no more trusted than any
  web page. ``same-origin``, ``none`` (typed in the address bar) and no header (native
  clients) pass.
- **Exposure**: without a token the relay refuses to listen on anything it cannot prove is
  loopback (:mod:`transport.exposure`), unless ``RELAY_ALLOW_INSECURE=1``, which is logged as a
  warning at every start.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import TypeGuard

from aiohttp import hdrs, web

from actors.core.errors import BadRequest, RelayError
from transport.shell.hosts import (
    LOCAL_ADDRESSES_MAX,
    canonical_host,
    canonical_origin,
    host_literal,
    served_names,
)

REALM = "sinain-relay"
STREAM_TOKEN_PARAM = "access_token"  # noqa: S105 - a parameter name, not a secret
"""The query parameter that carries the token on the stream endpoints only."""
STREAM_PATHS = frozenset({"/feed/stream", "/agent/stream", "/health/stream", "/", "/ws"})
"""The SSE streams and the overlay's WebSocket: a browser's ``EventSource`` and
``WebSocket`` cannot set headers."""
OPEN_ROUTES = frozenset({("GET", "/health")})
"""Routes that need no token (a ``GET`` route also answers ``HEAD``)."""
CONSOLE_FILES = (
    "console.css",
    "console.js",
    "trouble.js",
    "search.js",
    "health.js",
    "privacy.js",
    "cost.js",
    "settings.js",
)
"""The files the console's page loads, each served at ``/<name>``: the console's routes and
these rules are made from this one list."""
PAGE_ROUTES = frozenset({("GET", "/"), *(("GET", f"/{name}") for name in CONSOLE_FILES)})
"""The console's page and files: they hold no data, so they need no token and any page may
link to them; ``/`` upgraded to a WebSocket is the overlay's socket, a stream."""
ANY_METHOD = "*"
"""The method of the catch-all route (preflights, 404, 405)."""
PREFLIGHT_MAX_AGE_S = 600
"""How long a browser may cache a preflight's answer (Chrome caps it at 7200)."""
SAME_ORIGIN_SITES = frozenset({"same-origin", "none"})
"""The ``Sec-Fetch-Site`` values of a request a page of another origin did not make."""
SHOWN_MAX = 100
"""Characters of a refused header quoted in an error, at most."""
ALLOW_METHODS = "GET, POST, OPTIONS"
ALLOW_HEADERS = "Content-Type, Authorization, Last-Event-ID"

NO_HEADERS: Mapping[str, str] = MappingProxyType({})
Admit = Callable[[web.Request, Mapping[str, str] | None], None]
"""A route's gate: given the request and its CORS headers (``None``: a refused origin),
return to let it through or raise :class:`Forbidden` / :class:`TokenRefused`."""


class Unauthorized(RelayError):
    """A token is required and was missing or wrong (HTTP 401)."""


class Forbidden(RelayError):
    """The request is refused whoever sends it, and changes nothing (HTTP 403)."""


class Misdirected(RelayError):
    """The request names a host this relay does not serve (HTTP 421)."""


class TokenRefused(Unauthorized):
    """The request lacks the token, or carries a malformed or wrong one (HTTP 401)."""

    def __init__(self, message: str, error: str | None = None) -> None:
        super().__init__(message)
        self.challenge = f'Bearer realm="{REALM}"' + (f', error="{error}"' if error else "")
        """The ``WWW-Authenticate`` header (RFC 6750: no error code when none was sent)."""


class OriginRefused(Forbidden):
    """A browser page of an origin that is not allowed sent the request (HTTP 403)."""


class CrossSiteRefused(Forbidden):
    """A browser sent the request for a page of another site, and no allowed origin vouches
    for it (HTTP 403)."""


class HostRefused(Misdirected):
    """The request's ``Host`` is not a name the relay serves (HTTP 421)."""


def challenge(exc: Unauthorized) -> str:
    """The ``WWW-Authenticate`` header of a 401."""
    return exc.challenge if isinstance(exc, TokenRefused) else f'Bearer realm="{REALM}"'


def foreign_site(site: str | None) -> TypeGuard[str]:
    """Whether a ``Sec-Fetch-Site`` value says a browser sent the request for a page of
    another origin (``same-site``, ``cross-site``, or a value not known): ``same-origin``,
    ``none`` (typed in the address bar) and no header (a native client) are not."""
    return site is not None and site not in SAME_ORIGIN_SITES


def shown(value: str, limit: int = SHOWN_MAX) -> str:
    """A header's value as an error may quote it: cut, and ASCII (escapes for the rest, lone
    surrogates included, which JSON could not encode)."""
    cut = value[:limit].encode("ascii", "backslashreplace").decode("ascii")
    return cut + ("..." if len(value) > limit else "")


class Access:
    """The relay's access policy, built once per app from the settings (immutable after,
    but for the hosts served, which learn the local addresses and ports connections arrive
    at).

    Used on the event loop only; the per-request methods are a few dictionary look-ups.
    """

    def __init__(
        self, token: str, cors_origins: Iterable[str] = (), allowed_hosts: Iterable[str] = ()
    ) -> None:
        self._names, with_port = served_names(allowed_hosts)
        self.hosts: set[str | None] = {None, *self._names, *with_port}
        """The ``Host`` values served, as sent (``None``: no ``Host``). Read it, never change
        it: :meth:`check_host` adds what connections teach it."""
        self._addresses: set[tuple[str, int]] = set()
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
        # The CORS headers of a request no allowed origin vouches for (no Origin, or the
        # relay's own); with *, every page is vouched for.
        self._unvouched = None if self._wildcard else self._no_origin

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
        if self._same_origin(origin, request):
            return self._no_origin
        return None

    def _same_origin(self, origin: str, request: web.Request) -> bool:
        """Whether ``origin`` is the relay's own: its authority is the request's ``Host``,
        and that is a host the relay serves (never whatever ``Host`` says)."""
        host = request.headers.get(hdrs.HOST)
        if host is None or origin.partition("://")[2].lower() != host.lower():
            return False
        return self.serves(request)

    # -- the host -----------------------------------------------------------------------------

    def serves(self, request: web.Request) -> bool:
        """Whether ``request``'s ``Host`` is one the relay serves.

        The route guard looks the header up in :attr:`hosts` itself and asks this on a miss:
        the first request on a new local address or port, or a spelling the set lacks.
        """
        host = request.headers.get(hdrs.HOST)
        if host in self.hosts:
            return True
        assert host is not None, "None is in the set"
        self._learn(request)
        return host in self.hosts or canonical_host(host) in self.hosts

    def check_host(self, request: web.Request) -> None:
        """Return if the relay serves ``request``'s ``Host`` (:meth:`serves`), else raise.

        Raises:
            HostRefused: any other ``Host``.
        """
        if self.serves(request):
            return
        host = request.headers.get(hdrs.HOST, "")
        raise HostRefused(
            f"Host '{shown(host)}' is not a name this relay serves (127.0.0.1, localhost, "
            "[::1], or a name in RELAY_ALLOWED_HOSTS); a web page that points its own name "
            "at this machine is refused"
        )

    def _learn(self, request: web.Request) -> None:
        """Add the local address and port ``request``'s connection arrived at: each name
        served with that port, and the address itself."""
        transport = request.transport
        local = transport.get_extra_info("sockname") if transport is not None else None
        if not isinstance(local, tuple) or len(self._addresses) >= LOCAL_ADDRESSES_MAX:
            return
        address, port = str(local[0]), int(local[1])
        if (address, port) in self._addresses:
            return
        self._addresses.add((address, port))
        literal = host_literal(address)
        for name in (*self._names, literal):
            self.hosts.update((name, f"{name}:{port}"))

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
        if (method, path) in OPEN_ROUTES:
            return _admit_origin
        if (method, path) in PAGE_ROUTES:
            return self._admit_page_file
        if not self.token_set:
            return self._admit_page
        if path in STREAM_PATHS:
            return self._admit_stream
        return self._admit

    def _admit_page(self, request: web.Request, cors: Mapping[str, str] | None) -> None:
        """The origin, and the site a browser says the request comes from."""
        if cors is None:
            raise _origin_refused(request)
        if cors is self._unvouched:
            site = request.headers.get(hdrs.SEC_FETCH_SITE)
            if foreign_site(site):
                raise _cross_site(site)

    def _admit_page_file(self, request: web.Request, cors: Mapping[str, str] | None) -> None:
        """The console's files without the token, but for another site only as the page a
        link opens (no ``<script>``, ``<img>`` or frame of another site's loads them); an
        upgrade of ``/`` as the overlay's socket."""
        if request.headers.get(hdrs.UPGRADE, "").strip().lower() != "websocket":
            _admit_origin(request, cors)
            site = request.headers.get(hdrs.SEC_FETCH_SITE)
            opened = request.headers.get(hdrs.SEC_FETCH_MODE) == "navigate" and request.headers.get(
                hdrs.SEC_FETCH_DEST
            ) in ("document", None)
            if foreign_site(site) and cors is self._unvouched and not opened:
                raise _cross_site(site)
        elif self.token_set:
            self._admit_stream(request, cors)
        else:
            self._admit_page(request, cors)

    def _admit(self, request: web.Request, cors: Mapping[str, str] | None) -> None:
        self._admit_page(request, cors)
        if self.token_set:
            self._verify(request.headers.get(hdrs.AUTHORIZATION))

    def _admit_stream(self, request: web.Request, cors: Mapping[str, str] | None) -> None:
        self._admit_page(request, cors)
        self._verify_stream(request)

    def _admit_unless_preflight(self, request: web.Request, cors: Mapping[str, str] | None) -> None:
        if request.method != hdrs.METH_OPTIONS:
            self._admit(request, cors)

    def authorized(self, request: web.Request) -> bool:
        """Whether ``request`` carries the token (always true when none is set); for the
        open ``/health``, which shows callers without it less, and ``/health/stream``, which
        takes the token as every stream does (``?access_token=`` too)."""
        if not self.token_set:
            return True
        try:
            if request.path in STREAM_PATHS:
                self._verify_stream(request)
            else:
                self._verify(request.headers.get(hdrs.AUTHORIZATION))
        except TokenRefused:
            return False
        return True

    def _verify_stream(self, request: web.Request) -> None:
        """The token of a stream: ``Authorization``, or without that header
        ``?access_token=``, compared the same way."""
        header = request.headers.get(hdrs.AUTHORIZATION)
        if header is None and STREAM_TOKEN_PARAM in request.query:
            self._compare(request.query[STREAM_TOKEN_PARAM])
        else:
            self._verify(header)

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
        f"requests from web pages at {shown(origin)} are refused; "
        "list the origin in RELAY_CORS_ORIGINS to allow it"
    )


def _cross_site(site: str) -> CrossSiteRefused:
    return CrossSiteRefused(
        f"requests a browser sends for a page of another site (Sec-Fetch-Site: "
        f"{shown(site, 20)}) are refused; list the page's origin in RELAY_CORS_ORIGINS to "
        "allow its requests that carry it"
    )
