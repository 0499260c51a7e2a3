"""``GET /`` and the files it loads (``GET /console.js``, ``GET /privacy.js`` ...): the console
page and its scripts and style sheet.

The files ship in ``static/`` and are read once, at import: no build step, nothing fetched
from another origin. They hold no data (the page asks the API for everything, with the token
when one is set), so they are served without the token, behind the same Host check as every
route. Each answer carries a Content-Security-Policy that lets the page load only its own
scripts and styles and talk only to its own origin, and forbids any other page to frame it.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from aiohttp import web

from transport.overlay.socket import OVERLAYS, is_upgrade, serve

STATIC = Path(__file__).resolve().parent / "static"
TYPES = MappingProxyType(
    {
        ".html": "text/html; charset=utf-8",
        ".js": "text/javascript; charset=utf-8",
        ".css": "text/css; charset=utf-8",
        ".svg": "image/svg+xml",
    }
)
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
"""Only the page's own scripts, styles and origin; pictures from ``data:`` URLs (the screen
pictures the API returns); never framed."""
HEADERS = MappingProxyType(
    {
        "Content-Security-Policy": CONTENT_SECURITY_POLICY,
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cross-Origin-Resource-Policy": "same-origin",
        "Cache-Control": "no-cache",
    }
)
PAGE = "index.html"


def _load() -> dict[str, tuple[bytes, str]]:
    return {
        path.name: (path.read_bytes(), TYPES[path.suffix])
        for path in sorted(STATIC.iterdir())
        if path.suffix in TYPES
    }


ASSETS = MappingProxyType(_load())
"""The console's files by name: their bytes and media type."""


def page_response(name: str = PAGE) -> web.Response:
    """One of the console's files, with the console's headers.

    Raises:
        HTTPNotFound: no such file (the JSON 404 of any path the relay does not serve).
    """
    found = ASSETS.get(name)
    if found is None:
        raise web.HTTPNotFound
    body, media = found
    return web.Response(body=body, headers={**HEADERS, "Content-Type": media})


async def get_file(request: web.Request) -> web.Response:
    """``GET /<name>``: one of the files the page loads, by the name in its path."""
    return page_response(request.path.removeprefix("/"))


async def get_root(request: web.Request) -> web.StreamResponse:
    """``GET /``: the console page; an upgrade request is an overlay connecting here rather
    than at ``/ws``, and gets the overlay's WebSocket (:mod:`transport.overlay.socket`)."""
    if not is_upgrade(request):
        return page_response()
    return await serve(request, request.app[OVERLAYS])
