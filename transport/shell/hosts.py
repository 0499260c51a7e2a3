"""The names the relay answers to: a ``Host`` header or an ``Origin`` as a browser spells them,
an address as a ``Host`` names it, and the hosts served on a port (the loopback names, and
``RELAY_ALLOWED_HOSTS``' entries). A request for another name is refused
(:class:`~transport.shell.auth.Access`): a page of another site that rebinds a name of its
own to this machine's address reaches no route.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
"""The names the relay always serves, with its port or none."""
LOCAL_ADDRESSES_MAX = 16
"""Local (address, port) pairs whose names are added to the hosts served, at most: one per
interface and listening port; the set of hosts stays small whatever connects."""


def canonical_origin(origin: str) -> str:
    """``origin`` as a browser serialises it: lower case, without the scheme's default port."""
    origin = origin.strip().rstrip("/").lower()
    for scheme, port in (("http://", ":80"), ("https://", ":443")):
        if origin.startswith(scheme) and origin.endswith(port):
            return origin.removesuffix(port)
    return origin


def canonical_host(host: str) -> str:
    """``host`` (a ``Host`` header, an entry of ``RELAY_ALLOWED_HOSTS``) as the hosts served
    spell it: lower case, without a name's trailing dot or an empty port."""
    host = host.lower()
    if ":" in host.rpartition("]")[2]:
        name, _, port = host.rpartition(":")
    else:
        name, port = host, ""
    name = name.rstrip(".")
    return f"{name}:{port}" if port else name


def host_literal(address: str) -> str:
    """An IP address as a ``Host`` names it: IPv6 in brackets (no zone), IPv4-mapped as IPv4."""
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return address.lower()
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ip.ipv4_mapped) if ip.ipv4_mapped is not None else f"[{ip.compressed}]"
    return str(ip)


def served_names(allowed_hosts: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The names served, canonical (:func:`canonical_host`): those served with the port a
    connection arrived at or none (the loopback names, then ``RELAY_ALLOWED_HOSTS``'s entries
    without a port), and the entries that name a port, served with that port only."""
    entries = [canonical_host(host) for host in allowed_hosts]
    with_port = tuple(host for host in entries if ":" in host.rpartition("]")[2])
    names = tuple(h for h in dict.fromkeys([*LOOPBACK_HOSTS, *entries]) if h not in with_port)
    return names, with_port


def hosts_on(port: int, allowed_hosts: Iterable[str] = ()) -> frozenset[str]:
    """The ``Host`` values served on ``port``, as a browser sends them: each name of
    :func:`served_names` with ``port`` or none, and the entries that name a port. For a
    server on one loopback port (the MCP server's ``--http``); the relay learns its own
    addresses and ports as connections arrive (:class:`Access`)."""
    names, with_port = served_names(allowed_hosts)
    return frozenset({*names, *(f"{name}:{port}" for name in names), *with_port})
