"""What a client connection may hold: how long it may take and idle, and how many may be open.

Each connection costs the relay a file descriptor, and so do its own files (three SQLite
databases with their journals, the lock file, the log, the LLM client's sockets: about 30 at
rest). Were clients to take every descriptor the process may open, the relay could accept no
one else until they left, and could not open a file of its own. So:

- a new connection must send a whole request head within :attr:`ConnectionLimits.header_timeout_s`
  (silent or half-sent ones are closed);
- once a head has come, its body must arrive within :attr:`ConnectionLimits.body_timeout_s`
  (:func:`transport.inputs.read_json` answers 408 then, and the connection is closed);
- between two requests a connection may idle :attr:`ConnectionLimits.keepalive_timeout_s`
  (aiohttp's keep-alive timeout, which counts only while no request is being handled: an
  event stream or the overlay's socket is one long request and is never closed for it);
- at most :attr:`Connections.limit` are open at once, by default
  :func:`max_connections_for` the limit of open files (``ulimit -n``). One more takes the
  place of an idle connection; when none is idle, it is answered a JSON 503 and closed;
- the request bodies all connections hold at once share one budget, :class:`BodyBudget`
  (``RELAY_BODY_MEMORY_MB``): a thousand connections each sending most of a 2 MiB screen
  event would otherwise hold gigabytes. A body past it is answered a JSON 503 with
  ``Retry-After`` before the rest of it is read (:func:`transport.inputs.read_json`).

The transport's connection handler (:class:`transport.http_transport.JsonErrorHandler`)
applies these; :class:`Connections` keeps the count, on the event loop's thread only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

import structlog

from config.settings import BODY_MEMORY_MB, BODY_TIMEOUT_S, HEADER_TIMEOUT_S

log = structlog.get_logger("relay")

RESERVED_FILES = 64
"""Descriptors kept for the relay's own files, sockets and a margin: about 30 are open at rest
(databases, journals, the lock file, the log, the event loops), up to 4 more for the LLM
client, and SQLite, ``/metrics`` and the situation file open a few for a moment."""
MAX_CONNECTIONS_CEILING = 1024
"""The default cap however high the limit of open files: Sinain's clients (a capture client,
the overlay's socket, a few streams, agents polling) need a few dozen."""
MIB = 1024 * 1024
BODY_RETRY_AFTER_S = 1
"""The ``Retry-After`` of a body refused for the budget: bodies in flight take about that."""
REFUSED_HEAD_TIMEOUT_S = 1.0
"""How long a connection over the cap has to send its request head, to be answered 503:
it holds a descriptor meanwhile, so not the whole header timeout."""


def max_connections_for(open_files: int | None) -> int:
    """The default cap on open connections under a limit of ``open_files`` descriptors
    (``None``: no limit): :data:`RESERVED_FILES` fewer, at most :data:`MAX_CONNECTIONS_CEILING`,
    and half the limit at least for a small one (192 for 256, 960 for 1024)."""
    if open_files is None:
        return MAX_CONNECTIONS_CEILING
    return max(1, min(MAX_CONNECTIONS_CEILING, max(open_files - RESERVED_FILES, open_files // 2)))


def open_files_limit() -> int | None:
    """This process's limit of open files (the soft ``RLIMIT_NOFILE``); ``None`` for none."""
    try:
        import resource  # noqa: PLC0415 - POSIX only
    except ImportError:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """The bounds of client connections (``RELAY_HEADER_TIMEOUT_S``,
    ``RELAY_KEEPALIVE_TIMEOUT_S``, ``RELAY_MAX_CONNECTIONS``)."""

    header_timeout_s: float
    body_timeout_s: float
    """How long a request's body may take once its head has come (a 408 then)."""
    keepalive_timeout_s: float
    max_connections: int
    """0: :func:`max_connections_for` the limit of open files, read when the server starts."""
    body_memory_bytes: int = BODY_MEMORY_MB * MIB
    """The bytes of request bodies all connections may hold at once (:class:`BodyBudget`)."""

    def cap(self) -> int:
        """The cap on open connections: :attr:`max_connections`, or the default for the
        limit of open files (a cap set above that limit is logged as a warning)."""
        open_files = open_files_limit()
        if not self.max_connections:
            return max_connections_for(open_files)
        if open_files is not None and self.max_connections > open_files - RESERVED_FILES:
            log.warning(
                "http.max_connections_above_open_files",
                actor="http",
                max_connections=self.max_connections,
                open_files=open_files,
                note="RELAY_MAX_CONNECTIONS leaves the relay too few descriptors of its "
                "own: raise ulimit -n or lower RELAY_MAX_CONNECTIONS",
            )
        return self.max_connections


class BodyBudget:
    """The bytes of request bodies held at once by every connection, and their bound (loop
    thread only).

    A body is charged as it is read: its ``Content-Length`` before any of it is, or each chunk
    of a chunked one as it comes, and what it inflates to; the guard gives the charge back
    once the handler is done with the request (:func:`transport.guard.guarded`), whether it
    answered, failed, or its client left. A charge past :attr:`limit` is refused, and the
    request answered a 503; one body alone is always taken, so a body larger than the whole
    budget (a setting below the largest body limit) waits its turn rather than never passing.
    """

    __slots__ = ("held", "limit", "refused")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        """Bytes charged and not yet given back."""
        self.refused = 0
        """Requests refused for the budget since the server started."""

    def take(self, size: int) -> bool:
        """Charge ``size`` more bytes; ``False`` (counted, nothing charged) past the limit."""
        if self.held and self.held + size > self.limit:
            self.refused += 1
            return False
        self.held += size
        return True

    def give_back(self, size: int) -> None:
        """Give back ``size`` bytes that :meth:`take` charged."""
        self.held -= size


class Client(Protocol):
    """A counted connection, as :class:`Connections` sees it."""

    def waiting_for(self) -> Literal["first", "next"] | None:
        """What the connection waits for: its ``first`` request head, the ``next`` request
        (idle between two), or ``None``: a request is being handled (a stream, a long-poll)."""
        ...

    def evict(self) -> None:
        """Close the connection now, without counting it out (it is no longer counted)."""
        ...


class Connections:
    """The open client connections, and whether one more may be (loop thread only).

    At the cap, a new connection takes the place of an idle one: the oldest that has not sent
    a request head yet, else the oldest idle between two requests (a client reconnects as
    when a keep-alive timeout closed it). Only when every connection is handling a request
    (streams, long-polls, requests in flight) is the new one refused. Either is logged once a
    burst: a warning at the first, and, once the open connections are down to three quarters
    of the cap, one line saying how many were closed and refused.
    """

    __slots__ = (
        "_burst",
        "_clients",
        "bodies",
        "body_timeout_s",
        "evicted",
        "head_timeouts",
        "header_timeout_s",
        "limit",
        "refused",
    )

    def __init__(
        self,
        limit: int,
        *,
        header_timeout_s: float = HEADER_TIMEOUT_S,
        body_timeout_s: float = BODY_TIMEOUT_S,
        body_memory_bytes: int = BODY_MEMORY_MB * MIB,
    ) -> None:
        self.limit = limit
        self.header_timeout_s = header_timeout_s
        """How long a new connection has to send its request head (``RELAY_HEADER_TIMEOUT_S``)."""
        self.body_timeout_s = body_timeout_s
        """How long a request's body may take once its head has come (``RELAY_BODY_TIMEOUT_S``)."""
        self.bodies = BodyBudget(body_memory_bytes)
        """The request bodies held at once (``RELAY_BODY_MEMORY_MB``)."""
        self._clients: dict[Client, None] = {}
        """The counted connections, oldest first (a dict keeps its order)."""
        self.refused = 0
        """Connections refused since the server started (every other was busy)."""
        self.evicted = 0
        """Idle connections closed to make room for a new one."""
        self.head_timeouts = 0
        """Connections closed because their request head was late (or never came)."""
        self._burst: tuple[int, int] | None = None
        """``evicted`` and ``refused`` when the current burst at the cap began; ``None``:
        not in one."""

    @property
    def open(self) -> int:
        return len(self._clients)

    def admit(self, client: Client) -> bool:
        """Count ``client`` in, in the place of an idle one at the cap; ``False`` (counted as
        refused) when every open connection is busy."""
        clients = self._clients
        if len(clients) >= self.limit:
            self._at_cap()
            idle = self._idlest()
            if idle is None:
                self.refused += 1
                return False
            del clients[idle]
            self.evicted += 1
            idle.evict()
        clients[client] = None
        return True

    def release(self, client: Client) -> None:
        """Count ``client`` out (it closed); nothing if it was not counted."""
        if self._clients.pop(client, False) is not False:
            self._ended_burst()

    def _idlest(self) -> Client | None:
        """The connection to close for a new one, or ``None`` when all are busy."""
        idle: Client | None = None
        for client in self._clients:
            waiting = client.waiting_for()
            if waiting == "first":
                return client
            if waiting == "next" and idle is None:
                idle = client
        return idle

    def _at_cap(self) -> None:
        if self._burst is None:
            self._burst = (self.evicted, self.refused)
            log.warning(
                "http.connections_full",
                actor="http",
                limit=self.limit,
                note="idle connections are closed to make room for new ones, which are "
                "answered 503 while every connection is busy; RELAY_MAX_CONNECTIONS and "
                "ulimit -n set the cap",
            )

    def _ended_burst(self) -> None:
        if self._burst is not None and len(self._clients) <= self.limit * 3 // 4:
            evicted, refused = self._burst
            log.info(
                "http.connections_available",
                actor="http",
                limit=self.limit,
                open=len(self._clients),
                closed_idle=self.evicted - evicted,
                refused=self.refused - refused,
            )
            self._burst = None
