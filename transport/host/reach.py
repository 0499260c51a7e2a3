"""What a started relay checks of a service without asking it anything: that the host of its
base URL resolves and its port accepts a TCP connection (the features' ``... server`` checks).

A connection that is opened and closed carries no request: no key, no prompt, no audio, and
nothing a provider bills. The verdict on the model itself comes with the first call the agent
makes for a tick with news (the LLM caller logs it as ``doctor.check llm``); the
``sinain-relay doctor`` command, which a user runs on purpose, sends its one tiny request.

Through an HTTP proxy (``HTTPS_PROXY`` and the like, as the relay's client honours them) the
proxy is what must accept the connection.
"""

from __future__ import annotations

import socket
import urllib.request
from urllib.parse import urlsplit

from actors.common.check import unreachable_reason
from config.common.origins import DEFAULT_PORTS

CONNECT_TIMEOUT_S = 5.0
"""The longest a connection may take to be accepted (a service's own timeout if shorter)."""


def _endpoint(url: str) -> tuple[str, int] | None:
    """The host and port a request to ``url`` connects to first: the proxy's, when one is
    set for it in the environment; ``None`` for what is no ``http(s)`` URL with a host."""
    parts = urlsplit(url)
    host = parts.hostname
    if host is None or parts.scheme not in DEFAULT_PORTS:
        return None
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        return _endpoint(proxy if "://" in proxy else f"http://{proxy}")
    return host, parts.port or DEFAULT_PORTS[parts.scheme]


def unreachable(url: str, timeout_s: float) -> str | None:
    """Why no TCP connection to ``url``'s host can be opened within ``timeout_s`` (``the host
    name does not resolve``, ``connection refused`` ...); ``None`` when one was, and closed
    at once."""
    endpoint = _endpoint(url)
    if endpoint is None:
        return "not an http(s) URL with a host"
    try:
        with socket.create_connection(endpoint, timeout=timeout_s):
            return None
    except OSError as exc:
        return unreachable_reason(exc)
