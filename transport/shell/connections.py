"""What a client connection may hold: how long it may take and idle, and how many may be open.

Each connection costs the relay a file descriptor, and so do its own files (three SQLite
databases with their journals, the lock file, the log, the LLM client's sockets: about 30 at
rest). Were clients to take every descriptor the process may open, the relay could accept no
one else until they left, and could not open a file of its own. So:

- a new connection must send a whole request head within :attr:`ConnectionLimits.header_timeout_s`
  (silent or half-sent ones are closed);
- once a head has come, its body must arrive within :attr:`ConnectionLimits.body_timeout_s`,
  and keep to :data:`BODY_MIN_RATE` after its first :data:`BODY_RATE_GRACE_S`
  (:func:`transport.shell.inputs.read_json` answers 408 otherwise, and the connection is closed);
- between two requests a connection may idle :attr:`ConnectionLimits.keepalive_timeout_s`
  (aiohttp's keep-alive timeout, which counts only while no request is being handled: an
  event stream or the overlay's socket is one long request and is never closed for it);
- at most :attr:`Connections.limit` are open at once, by default
  :func:`max_connections_for` the limit of open files (``ulimit -n``). One more takes the
  place of an idle connection; when none is idle, it is answered a JSON 503 and closed;
- the request bodies all connections hold at once share one budget, :class:`BodyBudget`
  (``RELAY_BODY_MEMORY_MB``): a thousand connections each sending most of a 2 MiB screen
  event would otherwise hold gigabytes. Its last eighth is kept for small bodies, and a body
  past it cuts the slowest bodies still arriving, or, when that cannot make room, is
  answered a JSON 503 with ``Retry-After`` before the rest of it is read
  (:func:`transport.shell.inputs.read_json`).

The transport's connection handler (:class:`transport.http_transport.JsonErrorHandler`)
applies these; :class:`Connections` keeps the count, on the event loop's thread only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
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
SMALL_BODY_BYTES = 64 * 1024
"""A body this large at most may take the budget's reserve (:class:`BodyBudget`): a post to
``/feed``, a text screen event, an escalation's answer, a setting."""
SMALL_BODY_RESERVE = 8
"""The reserve is this fraction of the budget: 8 MiB of the default 64, 128 bodies of
:data:`SMALL_BODY_BYTES` or thousands of usual posts."""
BODY_RATE_GRACE_S = 2.0
"""How long a body may take to begin before it must keep to :data:`BODY_MIN_RATE`."""
BODY_MIN_RATE = 16 * 1024
"""Bytes a second a body must keep to once it is being read: ``t`` seconds after its head,
``(t - BODY_RATE_GRACE_S) * BODY_MIN_RATE`` bytes of it must have come, or all of it. A 2 MiB
screen event whole within the body timeout comes at 70 KiB a second at least."""
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


class BodyHold:
    """What one request's body holds of the :class:`BodyBudget`, and how fast it arrives."""

    __slots__ = ("cut", "cut_for_another", "held", "received", "since")

    def __init__(self) -> None:
        self.held = 0
        """Bytes charged and not yet given back."""
        self.received = 0
        """Bytes of the body read so far, while it arrives."""
        self.since = 0.0
        """When it began to arrive (the budget's clock)."""
        self.cut: Callable[[], None] | None = None
        """Stops the body's read at once; set while it arrives (:meth:`BodyBudget.arriving`)."""
        self.cut_for_another = False
        """Cut to make room for another body (its charge already given back)."""


class BodyBudget:
    """The bytes of request bodies held at once by every connection, and their bound (loop
    thread only).

    A body is charged as it is read: its ``Content-Length`` before any of it is, or each chunk
    of a chunked one as it comes, and what it inflates to; the guard gives the charge back
    once the handler is done with the request (:func:`transport.shell.guard.guarded`), whether it
    answered, failed, or its client left. Three rules keep a few slow clients from holding it:

    - the last :attr:`reserve` bytes are for small bodies (:data:`SMALL_BODY_BYTES` at most,
      posts to ``/feed`` among them): large ones may fill the budget only up to it;
    - a body still arriving must keep to a minimum rate (:func:`transport.shell.inputs.read_json`
      cuts it with a 408 otherwise);
    - a charge past the bound cuts the bodies still arriving, slowest first, until it fits
      (they are answered 503); it is refused only when cutting every one of them would not
      make room, the rest being bodies read whole that their handlers still work on.

    One body alone is always taken, so a body larger than the whole budget (a setting below
    the largest body limit) waits its turn rather than never passing. The hot path is a few
    sums; the bodies still arriving are looked at only when the budget is full.
    """

    __slots__ = ("_arriving", "_clock", "cut", "held", "limit", "refused", "reserve", "too_slow")

    def __init__(self, limit: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.reserve = limit // SMALL_BODY_RESERVE
        """The last bytes of the budget, which only small bodies may take."""
        self.held = 0
        """Bytes charged and not yet given back."""
        self.refused = 0
        """Requests refused for the budget since the server started."""
        self.cut = 0
        """Bodies cut while arriving to make room for another since the server started."""
        self.too_slow = 0
        """Bodies cut for coming slower than :data:`BODY_MIN_RATE` since the server started."""
        self._clock = clock
        self._arriving: dict[BodyHold, None] = {}
        """The bodies being read that can be cut, oldest first."""

    def take(self, hold: BodyHold, size: int) -> bool:
        """Charge ``hold`` ``size`` more bytes, cutting slower bodies to make room; ``False``
        (counted, nothing charged, nobody cut) when that cannot make room."""
        total = hold.held + size
        others = self.held - hold.held
        room = self.limit if total <= SMALL_BODY_BYTES else self.limit - self.reserve
        if others and others + total > room and not self._make_room(others + total - room, hold):
            self.refused += 1
            return False
        self.held += size
        hold.held = total
        return True

    def give_back(self, hold: BodyHold) -> None:
        """Give back what ``hold`` was charged (the request is done)."""
        self.held -= hold.held
        hold.held = 0
        self.arrived(hold)

    def arriving(self, hold: BodyHold, cut: Callable[[], None]) -> None:
        """``hold``'s body is being read, and ``cut`` stops that read at once."""
        hold.since = self._clock()
        hold.cut = cut
        self._arriving[hold] = None

    def arrived(self, hold: BodyHold) -> None:
        """``hold``'s body is no longer being read (whole, or failed): it is not cut."""
        self._arriving.pop(hold, None)
        hold.cut = None

    def _make_room(self, needed: int, taker: BodyHold) -> bool:
        """Cut bodies still arriving, slowest first (bytes read a second since they began),
        until ``needed`` bytes are free; ``False``, nobody cut, when they hold too little."""
        candidates = [hold for hold in self._arriving if hold is not taker]
        if sum(hold.held for hold in candidates) < needed:
            return False
        now = self._clock()
        candidates.sort(key=lambda hold: hold.received / max(now - hold.since, 1e-3))
        for hold in candidates:
            needed -= hold.held
            self.held -= hold.held
            hold.held = 0
            hold.cut_for_another = True
            cut = hold.cut
            self.arrived(hold)
            self.cut += 1
            if cut is not None:
                cut()
            if needed <= 0:
                break
        return True


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
        "body_grace_s",
        "body_min_rate",
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
        self.body_grace_s = BODY_RATE_GRACE_S
        """How long a body may take to begin (:data:`BODY_RATE_GRACE_S`)."""
        self.body_min_rate = BODY_MIN_RATE
        """Bytes a second a body must keep to after that (:data:`BODY_MIN_RATE`)."""
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
