"""The bounds of the transport's streams: keepalive, timeouts, backlogs and replays, fixed for
one transport incarnation (:class:`StreamLimits`)."""

from __future__ import annotations

from dataclasses import dataclass

KEEPALIVE_S = 15.0
"""A stream that has sent nothing for this long sends a comment line (``: keepalive``), so
that proxies and load balancers do not close it as idle."""
CLIENT_CHECK_S = 1.0
"""How often an idle stream looks whether its client is still connected. aiohttp does not
tell the handler of a body-less request that its client left, so a gone client holds its
slot for up to this long."""
WRITE_TIMEOUT_S = 5.0
"""A write that a client has not taken within this long (it stopped reading and the socket's
buffers are full) drops the client."""
MAX_BACKLOG = 1000
"""Events queued for one client and not yet written; one more drops it. A client that keeps
up has a few at most: the queue is emptied into the socket at every wake-up."""
MAX_BACKLOG_BYTES = 4 * 1024 * 1024
"""Bytes queued for one client and not yet written; more drops it (16 feed items of the
largest size, 256 KiB, or thousands of usual ones)."""
REPLAY_MAX = 1000
"""Events a reconnecting client is sent at most; older ones are announced by a ``gap``."""
REPLAY_MAX_BYTES = 4 * 1024 * 1024
"""Bytes of replayed events at most; the newest are kept."""


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """The bounds above, fixed for one transport incarnation (tests lower them)."""

    keepalive_s: float
    client_check_s: float
    write_timeout_s: float
    max_backlog: int
    max_backlog_bytes: int
    replay_max: int
    replay_max_bytes: int

    @classmethod
    def current(cls) -> StreamLimits:
        """The module's constants as they are now."""
        return cls(
            keepalive_s=KEEPALIVE_S,
            client_check_s=CLIENT_CHECK_S,
            write_timeout_s=WRITE_TIMEOUT_S,
            max_backlog=MAX_BACKLOG,
            max_backlog_bytes=MAX_BACKLOG_BYTES,
            replay_max=REPLAY_MAX,
            replay_max_bytes=REPLAY_MAX_BYTES,
        )
