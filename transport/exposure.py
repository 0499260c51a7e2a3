"""Where the relay may listen: without a token, only on what it can prove is loopback.

Decided once at start (``run.py``): beyond loopback without ``RELAY_TOKEN`` the relay
refuses to start, unless ``RELAY_ALLOW_INSECURE=1``, which is logged as a warning at every
start. Who may call it once it listens: :mod:`transport.shell.auth`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import structlog

from config.common.loopback import is_loopback as is_loopback  # noqa: PLC0414

Verdict = Literal["loopback", "token", "insecure", "refused"]

log = structlog.get_logger("relay")


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
