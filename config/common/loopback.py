"""Whether a host is this machine's own: a listening address that serves no one else, or a
model server the relay may call without a key."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


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


def loopback_url(url: str) -> bool:
    """Whether ``url``'s host is provably this machine (:func:`is_loopback`)."""
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return False
    return host is not None and is_loopback(host)
