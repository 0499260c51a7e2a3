"""What the HTTP app holds: the actors it talks to, its policy, and what its handlers share.

:class:`Peers` are the actor handles and the cells the actors publish; :class:`Policy` is
what the app applies to requests (token, CORS, hosts, faults, tracing, stream limit, exclusion,
redaction counts); the app keys name each shared object (``request.app[PEERS]``, ...), among
them the streams' hubs over the cells (:func:`streams_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import structlog
from aiohttp import web

from actors.agent.context_builder import ContextBuilder
from actors.agent.core.entries import AgentSnapshot
from actors.agent.core.response_format import NO_LEVELS, FormatLevels
from actors.agent.digest_store import DigestStore
from actors.agent.local_llm import LocalModels
from actors.agent.ticker import Ticker
from actors.audio.subtree import AudioHandles, AudioViews
from actors.common.check import Check
from actors.core.exclusion import Exclusions, PrivacyState
from actors.core.records import FeedSnapshot, SenseSnapshot
from actors.core.redaction.redactor import Redactor
from actors.ingest.feed_buffer import FeedBuffer
from actors.ingest.sense_buffer import SenseBuffer
from actors.kernel.base import ChildHandle
from actors.kernel.clock import Clock
from actors.kernel.published import Published
from actors.kernel.storage import StorageInfo
from actors.privacy.store import PrivacyStore
from config.audio.settings import AudioConfig
from config.privacy import DEFAULT_MATRIX, DEFAULT_MODE, Matrix
from transport.shell.auth import Access
from transport.shell.batching import Batcher
from transport.shell.bridge import Asker
from transport.shell.connections import BodyHold, Connections
from transport.shell.metrics import HttpStats
from transport.shell.profiling import ClientReports
from transport.streams.fanout import Streams
from transport.streams.hub import Hub
from transport.streams.limits import StreamLimits
from transport.streams.subscriber import Event

log = structlog.get_logger("relay")


@dataclass(frozen=True, slots=True)
class Peers:
    """The handles the transport may talk to, and how long it waits for them."""

    feed: ChildHandle[FeedBuffer]
    sense: ChildHandle[SenseBuffer]
    feed_view: Published[FeedSnapshot]
    """What the feed buffer last committed: ``GET /feed`` reads it without a message."""
    sense_view: Published[SenseSnapshot]
    """What the sense buffer last committed, for ``GET /sense``."""
    agent_view: Published[AgentSnapshot]
    """The newest agent entries the digest store committed: streams and long-polls."""
    digest: ChildHandle[DigestStore]
    context: ChildHandle[ContextBuilder]
    ticker: ChildHandle[Ticker]
    actors: dict[str, ChildHandle[Any]]
    """Every supervised actor by short name, for ``/health.actors``."""
    timeout_s: float
    storage: StorageInfo
    """Static for the process: the epoch and where the data lives."""
    clock: Clock
    """The relay's clock: the items' times are its, and the overlay's quiet spells run on it."""
    formats: Published[FormatLevels] = field(default_factory=lambda: Published(NO_LEVELS))
    """The response-format level that last answered, per model and base URL (the LLM caller
    writes it)."""
    audio: AudioHandles = field(default_factory=AudioHandles)
    """The transcriber (``POST /audio``) and the captures (the overlay's commands)."""
    audio_views: AudioViews = field(default_factory=AudioViews)
    """What the audio actors last published: ``/health.audio`` and ``/metrics`` read it."""
    audio_config: AudioConfig = field(default_factory=AudioConfig)
    """The audio settings: which sources are captured, which speech service is asked."""
    local_models: LocalModels = field(default_factory=LocalModels)
    """The agent's model on this machine: ``/health.agent.local``, ``/metrics``, its drills."""
    checks: Published[tuple[Check, ...]] = field(default_factory=lambda: Published(()))
    """The started relay's checks as they last ran (:func:`~transport.doctor.command.
    check_in_background`), for ``/health.checks``."""
    privacy: Published[PrivacyState] = field(default_factory=lambda: Published(PrivacyState()))
    """The privacy controls in force: ``POST /sense`` and ``POST /feed`` read the pause and
    the exclusion rule here on every request, without a message."""
    privacy_store: ChildHandle[PrivacyStore] = field(default_factory=lambda: ChildHandle("privacy"))
    """Their owner, which ``POST /privacy`` asks."""
    matrix: Matrix = DEFAULT_MATRIX
    """The privacy matrix in force, built once at start: ``GET /privacy`` shows it."""
    privacy_mode: str = DEFAULT_MODE
    """``PRIVACY_MODE``, or ``default`` when unset."""


@dataclass(frozen=True, slots=True)
class Policy:
    """What the HTTP app applies to requests: access, routes, limits, tracing, privacy."""

    token: str = ""
    """``RELAY_TOKEN``: when set, every endpoint but ``/health`` needs it."""
    faults: bool = False
    """Whether ``POST /debug/fault`` exists."""
    max_streams: int = 32
    """Concurrent stream clients at most (``RELAY_MAX_STREAMS``)."""
    trace_requests: bool = False
    """Log every request and give actors its id (``LOG_LEVEL=debug``); errors are always logged."""
    cors_origins: tuple[str, ...] = ()
    """Origins browser pages may call from (``RELAY_CORS_ORIGINS``); see
    :mod:`transport.shell.auth`."""
    allowed_hosts: tuple[str, ...] = ()
    """``Host`` names served besides the loopback ones (``RELAY_ALLOWED_HOSTS``)."""
    exclusions: Exclusions = field(default_factory=Exclusions)
    """How many screen events ``POST /sense`` dropped by the privacy controls' rule."""
    redactor: Redactor = field(default_factory=Redactor)
    """The buffers' redactor: its ``counts()`` of secrets replaced, by kind (for metrics)."""


class ListAnswers:
    """The answers of one list endpoint for the newest snapshot, reused while nothing changed.

    Pollers and dashboards ask the same question of the same snapshot many times between two
    posts. Answers are kept for one snapshot only, recognised by identity (hashing it would
    hash the whole ring): the first request that sees a newer one drops them. At most
    :attr:`SIZE` answers and :attr:`BUDGET` bytes are kept; a larger answer (a ring of
    megabyte screen events) is built for each request. Used on the loop only.
    """

    SIZE = 8
    BUDGET = 1024 * 1024

    def __init__(self) -> None:
        self._snapshot: object = None
        self._answers: dict[Hashable, bytes] = {}
        self._bytes = 0

    def get(self, snapshot: object, query: Hashable, build: Callable[[], bytes]) -> bytes:
        """The answer to ``query`` over ``snapshot``, built by ``build`` on a miss."""
        body = self.cached(snapshot, query)
        if body is None:
            body = build()
            self.keep(snapshot, query, body)
        return body

    def cached(self, snapshot: object, query: Hashable) -> bytes | None:
        """The answer kept for ``query`` over ``snapshot``, if any (a newer snapshot than the
        last seen drops the answers kept)."""
        if snapshot is not self._snapshot:
            self._snapshot, self._answers, self._bytes = snapshot, {}, 0
        return self._answers.get(query)

    def keep(self, snapshot: object, query: Hashable, body: bytes) -> None:
        """Keep ``body`` as the answer to ``query`` over ``snapshot``, within the bounds, unless
        a request has seen another snapshot since (an answer built while awaiting)."""
        if snapshot is not self._snapshot or query in self._answers:
            return
        if len(self._answers) < self.SIZE and self._bytes + len(body) <= self.BUDGET:
            self._answers[query] = body
            self._bytes += len(body)


PEERS = web.AppKey("peers", Peers)
POLICY = web.AppKey("policy", Policy)


ASK = web.AppKey("ask", Asker)
"""Asks the actors, each answer awaited for the actor timeout."""


FEED_ANSWERS = web.AppKey("feed_answers", ListAnswers)


SENSE_ANSWERS = web.AppKey("sense_answers", ListAnswers)


ROUTES = web.AppKey("routes", dict[str, set[str]])
"""The methods each path answers, for the ``Allow`` header of a 405."""


FEED_POSTS = web.AppKey("feed_posts", Batcher)


SENSE_POSTS = web.AppKey("sense_posts", Batcher)


STREAMS: web.AppKey[Streams[AgentSnapshot]] = web.AppKey("streams")
"""The feed and agent hubs (:func:`streams_of`), and the slots the streams share."""


REQUEST_ID = web.RequestKey("request_id", str)


BODY_HOLD = web.RequestKey("body_hold", BodyHold)
"""What the request's body was charged of the body budget; the guard gives it back."""


HTTP_STATS = web.AppKey("http_stats", HttpStats)
"""Requests and latencies per route, for ``GET /metrics``."""


CLIENT_FIGURES = web.AppKey("client_figures", ClientReports)
"""The capture client's and the overlay's newest reports of their own figures."""


CONNECTIONS = web.AppKey("connections", Connections)
"""The server's count of open client connections, for ``GET /metrics``."""


OPENAPI: web.AppKey[Callable[[], bytes]] = web.AppKey("openapi")
"""The OpenAPI document as ``GET /openapi.json`` sends it, made at the first request."""


ACCESS = web.AppKey("access", Access)
"""The token and CORS policy; the guard adds each answer's CORS headers (:func:`guarded`)."""


def _feed_items(snapshot: FeedSnapshot) -> tuple[Event, ...]:
    return snapshot.items


def _agent_entries(snapshot: AgentSnapshot) -> tuple[Event, ...]:
    return snapshot.entries


def streams_of(
    peers: Peers, ask: Asker, limits: StreamLimits, max_streams: int
) -> Streams[AgentSnapshot]:
    """The feed and agent hubs over the actors' cells, and the streams' bounds."""

    async def stored_feed(after: int, limit: int) -> tuple[Event, ...]:
        return await ask(peers.feed, FeedBuffer.stored_after, after, limit)

    async def stored_entries(after: int, limit: int) -> tuple[Event, ...]:
        return await ask(peers.digest, DigestStore.entries_after, after, limit)

    return Streams(
        feed=Hub("feed", peers.feed_view, _feed_items, stored_feed, limits),
        agent=Hub("agent", peers.agent_view, _agent_entries, stored_entries, limits),
        max_streams=max_streams,
        limits=limits,
    )
