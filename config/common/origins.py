"""A URL's origin (its scheme, host and port), as two services are compared before one is
given the other's key."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> tuple[str, str, int] | None:
    """``url``'s origin, as compared: the scheme and the host in lower case, an IP address
    in its shortest form, the port with the scheme's default filled in; ``None`` for what is
    not an ``http`` or ``https`` URL with a host."""
    try:
        parts = urlsplit(url.strip())
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
    except ValueError:  # a port that is not a number or out of range, a bad IPv6 literal
        return None
    if scheme not in DEFAULT_PORTS or not host:
        return None
    try:
        host = ipaddress.ip_address(host).compressed
    except ValueError:
        host = host.rstrip(".")
    return scheme, host, DEFAULT_PORTS[scheme] if port is None else port


def same_origin(url: str, other: str) -> bool:
    """Whether two URLs have one origin (:func:`origin`): the one service, which may be
    given the other's key. Anything that is not an origin matches nothing."""
    mine = origin(url)
    return mine is not None and mine == origin(other)
