"""The subtrees of the relay's tree: each feature's child specs, and the frontend's.

Each feature's :class:`Subtree` makes the children it adds to the root supervisor (the
privacy store, ingest's buffers, the agent's digest store and its LLM path, the audio path),
listed in start order in :data:`SUBTREES`. :func:`start_subtrees` adds them in that order;
the root starts each child and waits for its answer to a ping, then watches it for good (a
dead child is restarted, too many restarts escalate); :func:`stop_subtrees` stops them in
reverse. The frontend's actor starts after them and stops before them (:func:`start_frontend`,
:func:`stop_frontend`).
Every subtree is built from one :class:`Wiring`, made before any actor starts; the
:class:`Frontend` (the HTTP transport, assembled outside ``actors``) is handed it too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import pykka

from actors.agent.context_builder import ContextBuilder
from actors.agent.core.entries import EMPTY_AGENT, AgentSnapshot
from actors.agent.core.events import AgentEvent
from actors.agent.core.response_format import NO_LEVELS, FormatLevels
from actors.agent.digest_store import DigestStore
from actors.agent.first_calls import NOTHING_JUDGED, Judged
from actors.agent.llm_caller import LLMCaller
from actors.agent.local_llm import LocalModels
from actors.agent.situation_writer import SituationOutbox, SituationWriter
from actors.agent.subtree import situation_children
from actors.agent.subtree import situation_outbox as agent_outbox
from actors.agent.ticker import Ticker
from actors.agent.ticker_cells import ConfigCell, News
from actors.audio.core.sources import SourceError, check_sources
from actors.audio.subtree import AudioHandles, AudioViews, audio_children, configured
from actors.core.errors import ActorUnavailable
from actors.core.exclusion import PrivacyState
from actors.core.records import EMPTY_FEED, EMPTY_SENSE, FeedSnapshot, SenseSnapshot
from actors.core.redaction.redactor import Redactor
from actors.core.screen_image import NOTHING_SENT, SentImages
from actors.core.shapes import AudioSource
from actors.ingest.feed_buffer import FeedBuffer
from actors.ingest.sense_buffer import SenseBuffer
from actors.kernel.base import ChildExited, ChildHandle, Reporter
from actors.kernel.clock import Clock
from actors.kernel.listeners import Listeners
from actors.kernel.published import Published
from actors.kernel.start_watch import START_TIMEOUT_S
from actors.kernel.storage import StorageInfo
from actors.kernel.supervisor import Backoff, ChildSpec, Intensity, Supervisor
from actors.privacy.store import PrivacyStore
from config.prices import PriceTable
from config.privacy import DEFAULT_MATRIX, Matrix
from config.settings import Settings

if TYPE_CHECKING:
    import httpx

STOP_TIMEOUT_S = 10.0
LLM_BACKOFF = Backoff(min_s=0.5, max_s=30.0, random_factor=0.2, reset_after_s=30.0)
"""The LLM path backs off when it keeps dying; in-process actors restart at once."""
PING_TIMEOUT_S = 10.0
"""An actor that leaves a ping unanswered this long is hung and replaced. The LLM caller
gets ``AGENT_TIMEOUT_MS`` on top, the longest it may legitimately be busy."""


@dataclass(frozen=True, slots=True)
class Handles:
    """The stable address of every actor of the tree, typed by its actor class."""

    privacy: ChildHandle[PrivacyStore] = field(default_factory=lambda: ChildHandle("privacy"))
    feed: ChildHandle[FeedBuffer] = field(default_factory=lambda: ChildHandle("feed"))
    sense: ChildHandle[SenseBuffer] = field(default_factory=lambda: ChildHandle("sense"))
    digest: ChildHandle[DigestStore] = field(default_factory=lambda: ChildHandle("digest"))
    context: ChildHandle[ContextBuilder] = field(default_factory=lambda: ChildHandle("context"))
    llm: ChildHandle[LLMCaller] = field(default_factory=lambda: ChildHandle("llm"))
    ticker: ChildHandle[Ticker] = field(default_factory=lambda: ChildHandle("ticker"))
    situation: ChildHandle[SituationWriter] = field(
        default_factory=lambda: ChildHandle("situation")
    )
    agent: ChildHandle[Supervisor] = field(default_factory=lambda: ChildHandle("agent"))
    http: ChildHandle[Any] = field(default_factory=lambda: ChildHandle("http"))
    """The frontend's actor, whose class only the frontend knows."""
    audio: AudioHandles = field(default_factory=AudioHandles)

    def by_name(
        self, *, situation: bool = False, sources: Iterable[AudioSource] = ()
    ) -> dict[str, ChildHandle[Any]]:
        """Every handle by its actor's short name, in start order; the SITUATION.md
        writer's only when it runs (``situation``), a capture's only for its source."""
        handles = (self.privacy, self.feed, self.sense, self.digest, self.context, self.llm)
        writer = (self.situation,) if situation else ()
        audio = (self.audio.stt, *(self.audio.captures[s] for s in sources), self.audio.audio)
        every = (*handles, self.ticker, *writer, self.agent, *audio, self.http)
        return {handle.name: handle for handle in every}


@dataclass(frozen=True, slots=True)
class Wiring:
    """What the subtrees are built from, made once before any actor starts: the settings,
    the clock, the storage, the redactor, every handle and the cells the actors publish."""

    settings: Settings
    clock: Clock
    storage: StorageInfo
    redactor: Redactor
    prices: PriceTable
    matrix: Matrix = DEFAULT_MATRIX
    """The privacy matrix, built once at start: what each destination gets of each kind."""
    llm_transport: httpx.AsyncBaseTransport | None = None
    """The LLM client's transport; None: the network."""
    poll_interval_s: float = 1.0
    """How often the supervisors look for children that died without saying so."""
    handles: Handles = field(default_factory=Handles)
    privacy: Published[PrivacyState] = field(default_factory=lambda: Published(PrivacyState()))
    """The privacy controls in force (the privacy store writes; ingest, the ticker, the
    captures, the digest store and the overlay read)."""
    feed_view: Published[FeedSnapshot] = field(default_factory=lambda: Published(EMPTY_FEED))
    sense_view: Published[SenseSnapshot] = field(default_factory=lambda: Published(EMPTY_SENSE))
    agent_view: Published[AgentSnapshot] = field(default_factory=lambda: Published(EMPTY_AGENT))
    formats: Published[FormatLevels] = field(default_factory=lambda: Published(NO_LEVELS))
    sent_images: Published[SentImages] = field(default_factory=lambda: Published(NOTHING_SENT))
    """The screen images recent calls sent (the LLM caller writes, the context builder reads)."""
    local_models: LocalModels = field(default_factory=LocalModels)
    """The agent's model on this machine (``AGENT_API=local``): the LLM caller's, across its
    incarnations; ``/health``, ``/metrics`` and the fault drills read it."""
    judged: Published[Judged] = field(default_factory=lambda: Published(NOTHING_JUDGED))
    """The models whose first call the LLM caller logged as a check (so a restart does not
    log it again)."""
    outbox: SituationOutbox | None = None
    """The SITUATION.md writer's outbox, with ``RELAY_SITUATION_FILE`` only."""
    audio_views: AudioViews = field(default_factory=AudioViews)

    @property
    def actors(self) -> dict[str, ChildHandle[Any]]:
        """Every supervised actor by short name, in start order."""
        sources = configured(self.settings.audio)
        return self.handles.by_name(situation=self.outbox is not None, sources=sources)

    def close(self) -> None:
        """End what the subtrees hold beside their actors, once they have stopped: the
        agent's model's worker process."""
        self.local_models.close()

    @property
    def intensity(self) -> Intensity:
        """How many restarts a supervisor allows before it escalates."""
        return Intensity(self.settings.max_restarts, self.settings.restart_window_s)


class Frontend(Protocol):
    """What serves the tree to its clients: the HTTP transport, which ``actors`` does not
    know. The entry point assembles it and hands it to :func:`actors.tree.start_relay`, which
    checks it before any actor starts, starts it last and stops it first."""

    def check(self) -> None:
        """Raise if it cannot serve (a port in use), before anything has started."""

    def starter(self, wiring: Wiring) -> Callable[[Reporter], pykka.ActorRef[Any]]:
        """How to start an incarnation of its actor (the root calls it again after a crash)."""

    def address(self, handle: ChildHandle[Any], timeout_s: float) -> tuple[str, int]:
        """Where the incarnation behind ``handle`` serves."""


def supervisor(root: pykka.ActorRef[Any]) -> ChildHandle[Supervisor]:
    """A typed address of the root supervisor, for asks from outside the tree."""
    handle: ChildHandle[Supervisor] = ChildHandle("root")
    handle.bind(root)
    return handle


def start_root(wiring: Wiring, escalate: Callable[[ChildExited], None]) -> pykka.ActorRef[Any]:
    """The root supervisor, with no child yet: each subtree's start adds its own (the first
    waits for the root's own start)."""
    return Supervisor.start(
        name="root",
        children=[],
        clock=wiring.clock,
        report=escalate,
        intensity=wiring.intensity,
        poll_interval_s=wiring.poll_interval_s,
    )


def stop_root(root: pykka.ActorRef[Any], timeout_s: float | None) -> None:
    """Stop the root, which stops any child still running, in reverse start order; without
    ``timeout_s``, do not wait (a root busy starting a child stops once it is done).

    Raises:
        pykka.Timeout: the root did not stop within ``timeout_s``.
    """
    with contextlib.suppress(pykka.ActorDeadError):
        root.stop(block=timeout_s is not None, timeout=timeout_s)


def _supervised(w: Wiring, handle: ChildHandle[Supervisor], children: list[ChildSpec]) -> ChildSpec:
    """A supervisor of ``children``, named as its handle, as one child of the root."""

    def start(report: Reporter) -> pykka.ActorRef[Any]:
        return Supervisor.start(
            name=handle.name,
            children=children,
            clock=w.clock,
            report=report,
            intensity=w.intensity,
            poll_interval_s=w.poll_interval_s,
        )

    return ChildSpec(handle.name, start, handle, shutdown_timeout_s=STOP_TIMEOUT_S)


class Subtree(Protocol):
    """A feature's children of the root, in start order (a supervisor of its own counts as
    one)."""

    def __call__(self, w: Wiring) -> tuple[ChildSpec, ...]: ...


def _add(root: pykka.ActorRef[Any], *specs: ChildSpec) -> None:
    for spec in specs:
        supervisor(root).ask(Supervisor.start_child, spec).result(timeout=START_TIMEOUT_S)


def _remove(root: pykka.ActorRef[Any], timeout_s: float, *names: str) -> None:
    for name in names:
        with contextlib.suppress(ActorUnavailable):  # the root stopped them when it gave up
            supervisor(root).ask(Supervisor.stop_child, name).result(timeout=timeout_s)


def privacy(w: Wiring) -> tuple[ChildSpec, ...]:
    """The privacy store: the controls set at runtime over the environment's."""
    s = w.settings
    start = PrivacyState.of(
        s.exclude_apps, (s.exclude_titles,) if s.exclude_titles else (), s.retention_days
    )

    def store(report: Reporter) -> pykka.ActorRef[Any]:
        stores = w.storage.stores
        return PrivacyStore.start(
            clock=w.clock, store=stores["privacy"], start=start, published=w.privacy, report=report
        )

    return (ChildSpec("privacy", store, w.handles.privacy, ping_timeout_s=PING_TIMEOUT_S),)


def buffers(w: Wiring) -> tuple[ChildSpec, ...]:
    """Ingest's feed and sense buffers: their rings, ids and tables."""
    stores, hs = w.storage.stores, w.handles

    def feed(report: Reporter) -> pykka.ActorRef[Any]:
        return FeedBuffer.start(
            clock=w.clock,
            store=stores["feed"],
            published=w.feed_view,
            report=report,
            redactor=w.redactor,
            stored=w.matrix.column("local_buffer"),
        )

    def sense(report: Reporter) -> pykka.ActorRef[Any]:
        return SenseBuffer.start(
            clock=w.clock,
            store=stores["sense"],
            published=w.sense_view,
            report=report,
            redactor=w.redactor,
            stored=w.matrix.column("local_buffer"),
        )

    return (
        ChildSpec("feed", feed, hs.feed, ping_timeout_s=PING_TIMEOUT_S),
        ChildSpec("sense", sense, hs.sense, ping_timeout_s=PING_TIMEOUT_S),
    )


def digest(w: Wiring) -> tuple[ChildSpec, ...]:
    """The agent's digest store: agent entries, counters, the hud pushed to the feed."""

    def store(report: Reporter) -> pykka.ActorRef[Any]:
        return DigestStore.start(
            clock=w.clock,
            store=w.storage.stores["agent"],
            feed=w.handles.feed,
            privacy=w.privacy,
            published=w.agent_view,
            prices=w.prices,
            situation=w.outbox,
            report=report,
            to_agents=w.matrix.column("agent_gateway"),
        )

    return (ChildSpec("digest", store, w.handles.digest, ping_timeout_s=PING_TIMEOUT_S),)


def agent(w: Wiring) -> tuple[ChildSpec, ...]:
    """The agent's LLM path under a supervisor of its own: context, LLM caller, ticker, and
    the SITUATION.md writer when it runs; started together, restarted on their own."""
    hs = w.handles
    config, news = ConfigCell(w.settings.agent), News(w.feed_view, w.sense_view, hs.ticker, w.clock)
    events: Listeners[AgentEvent] = Listeners(hs.digest)  # the digest store counts them

    def context(report: Reporter) -> pykka.ActorRef[Any]:
        return ContextBuilder.start(
            clock=w.clock,
            feed=w.feed_view,
            sense=w.sense_view,
            llm=hs.llm,
            events=events,
            sent_images=w.sent_images,
            report=report,
            matrix=w.matrix,
        )

    def llm(report: Reporter) -> pykka.ActorRef[Any]:
        return LLMCaller.start(
            clock=w.clock,
            digest=hs.digest,
            events=events,
            transport=w.llm_transport,
            formats=w.formats,
            sent_images=w.sent_images,
            judged=w.judged,
            local=w.local_models,
            report=report,
            redact=w.redactor.enabled,
        )

    def ticker(report: Reporter) -> pykka.ActorRef[Any]:
        return Ticker.start(
            clock=w.clock,
            config=config,
            context=hs.context,
            me=hs.ticker,
            news=news,
            events=events,
            privacy=w.privacy,
            report=report,
        )

    llm_ping_s = w.settings.agent.timeout_ms / 1000 + PING_TIMEOUT_S
    children = [
        ChildSpec("context", context, hs.context, ping_timeout_s=PING_TIMEOUT_S),
        # Holds nothing to flush: a stop behind a hung request abandons its thread after 1 s.
        ChildSpec(
            "llm",
            llm,
            hs.llm,
            backoff=LLM_BACKOFF,
            shutdown_timeout_s=1.0,
            ping_timeout_s=llm_ping_s,
        ),
        ChildSpec("ticker", ticker, hs.ticker, ping_timeout_s=PING_TIMEOUT_S),
        *situation_children(w.settings.situation_file, w.outbox, hs.situation, events),
    ]

    # A request in flight is abandoned at stop, not awaited.
    return (_supervised(w, hs.agent, children),)


def situation_outbox(
    settings: Settings, handle: ChildHandle[SituationWriter]
) -> SituationOutbox | None:
    """The SITUATION.md writer's outbox, or None without ``RELAY_SITUATION_FILE``
    (:func:`actors.agent.subtree.situation_outbox`)."""
    return agent_outbox(settings.situation_file, handle)


def settings_problem(settings: Settings) -> str | None:
    """What a feature finds wrong in settings that parsed, in one line, before anything
    starts: an audio source that names no device or file it can open. ``None``: nothing."""
    try:
        check_sources(settings.audio)
    except SourceError as exc:
        return str(exc)
    return None


def audio(w: Wiring) -> tuple[ChildSpec, ...]:
    """The audio path under a supervisor of its own: the transcriber, and a capture for each
    configured source (:mod:`actors.audio.subtree`); restarted on their own. At stop each
    capture's process ends, and requests in flight are abandoned."""
    hs = w.handles.audio
    children = audio_children(
        w.settings.audio,
        w.clock,
        w.handles.feed,
        hs,
        w.audio_views,
        ping_timeout_s=PING_TIMEOUT_S,
        privacy=w.privacy,
    )

    return (_supervised(w, hs.audio, children),)


SUBTREES: tuple[Subtree, ...] = (privacy, buffers, digest, agent, audio)
"""Each feature's subtree, in start order: a subtree may need those before it (the privacy
controls are in force before anything is captured or kept, the digest store pushes huds to
the feed, the LLM path reports to the digest store, transcripts go to the feed)."""


def start_subtrees(root: pykka.ActorRef[Any], w: Wiring) -> tuple[str, ...]:
    """Add every subtree's children to the root, in order, each once it answers; the names
    of the children added, in start order."""
    names: list[str] = []
    for subtree in SUBTREES:
        specs = subtree(w)
        _add(root, *specs)
        names += [spec.name for spec in specs]
    return tuple(names)


def stop_subtrees(
    root: pykka.ActorRef[Any], names: tuple[str, ...], left: Callable[[], float]
) -> None:
    """Stop the children ``names`` (:func:`start_subtrees`') in reverse start order, each
    within the time ``left`` says is left (a buffer after its last commit)."""
    for name in reversed(names):
        _remove(root, left(), name)


def start_frontend(root: pykka.ActorRef[Any], w: Wiring, frontend: Frontend) -> None:
    """The frontend's actor, last: it serves what the others hold."""
    # The HTTP transport's actor thread only starts and stops the server; its event loop runs
    # on a thread of its own, so a ping of the actor says nothing of the loop.
    _add(root, ChildSpec("http", frontend.starter(w), w.handles.http))


def stop_frontend(root: pykka.ActorRef[Any], timeout_s: float) -> None:
    """Stop the frontend first: no request reaches an actor that has stopped."""
    _remove(root, timeout_s, "http")
