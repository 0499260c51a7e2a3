"""The supervision tree of the relay: every actor, who starts it, and what it is given.

::

    root (Supervisor)
    ├── feed      FeedBuffer      the feed ring, its ids and table
    ├── sense     SenseBuffer     the sense ring, its ids and table
    ├── digest    DigestStore     agent entries, counters, the hud pushed to the feed
    ├── agent     Supervisor      the LLM path, restarted on its own
    │   ├── context   ContextBuilder  window and prompt from the published rings
    │   ├── llm       LLMCaller       the chat-completions request (backs off when it keeps dying)
    │   ├── ticker    Ticker          the schedule, the configuration, the breaker
    │   └── situation SituationWriter SITUATION.md after each tick (with RELAY_SITUATION_FILE)
    └── http      HttpTransport   the aiohttp server (its event loop on a thread of its own)

Children start in this order and stop in reverse. Peers reach each other through stable
handles (:class:`~actors.kernel.base.ChildHandle`), which the supervisors point at each new
incarnation; the buffers and the digest store publish their committed state in cells that
outlive their incarnations. This module is the composition root: the only one of ``actors``
that knows the HTTP transport.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pykka
import pykka.debug
import structlog

from actors import (
    ChildExited,
    ChildHandle,
    ChildSpec,
    Clock,
    ContextBuilder,
    DigestStore,
    FeedBuffer,
    LLMCaller,
    SenseBuffer,
    SituationWriter,
    Supervisor,
    Ticker,
)
from actors.core.entries import EMPTY_AGENT
from actors.core.error_text import safe_text
from actors.core.exclusion import ExclusionRule, Exclusions
from actors.core.records import EMPTY_FEED, EMPTY_SENSE
from actors.core.redactor import Redactor
from actors.core.response_format import NO_LEVELS
from actors.kernel.base import NORMAL_EXIT, Reporter
from actors.kernel.file_modes import situation_risks
from actors.kernel.published import Published
from actors.kernel.schemas import StorageError
from actors.kernel.storage import (
    MEMORY,
    StorageInfo,
    close_storage,
    open_storage,
    with_problem,
)
from actors.kernel.supervisor import Backoff, Intensity
from actors.situation_outbox import SituationOutbox
from actors.ticker_cells import ConfigCell, News
from config import Settings
from config.prices import PriceTable, load_prices
from config.secrets import remember_secret
from transport import HttpTransport, Peers, Policy
from transport.connections import ConnectionLimits
from transport.http_transport import CannotServe, check_port

if TYPE_CHECKING:
    import httpx


START_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 10.0
LLM_BACKOFF = Backoff(min_s=0.5, max_s=30.0, random_factor=0.2, reset_after_s=30.0)
"""The LLM path backs off when it keeps dying; in-process actors restart at once."""
PING_TIMEOUT_S = 10.0
"""An actor that leaves a ping unanswered this long is hung and replaced. The LLM caller
gets ``AGENT_TIMEOUT_MS`` on top, the longest it may legitimately be busy."""

log = structlog.get_logger("relay")


@dataclass(frozen=True, slots=True)
class Relay:
    """A running relay: the root supervisor, every actor's stable handle, the storage."""

    root: pykka.ActorRef[Any]
    handles: dict[str, ChildHandle[Any]]
    storage: StorageInfo

    def address(self, timeout_s: float = 5.0) -> tuple[str, int]:
        """Where the HTTP transport listens."""
        http: ChildHandle[HttpTransport] = self.handles["http"]
        return http.ask(HttpTransport.address).result(timeout=timeout_s)

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> bool:
        """Stop the tree (children in reverse start order); False if it did not finish in time."""
        try:
            self.root.stop(block=True, timeout=timeout_s)
        except pykka.Timeout:
            log.error("relay.stop_timeout", actor="root", timeout_s=timeout_s)
            return False
        finally:
            close_storage(self.storage)
        return True


def prepare_storage(settings: Settings) -> StorageInfo:
    """Open the databases; if the data directory is unusable, serve from memory and say so.

    A directory another relay holds is not unusable: its data is being served, so the start
    stops there.

    Raises:
        DataDirInUse: another relay (or another open in this process) holds the directory.
    """
    try:
        return open_storage(settings.data_dir, settings.sync)
    except StorageError as exc:
        log.critical(
            "storage.unusable_serving_from_memory",
            actor="root",
            data_dir=settings.data_dir,
            error=safe_text(str(exc)),
        )
        return with_problem(open_storage(MEMORY, settings.sync), safe_text(str(exc)))


def claim_resources(settings: Settings) -> StorageInfo:
    """What a start needs before any actor starts: the data directory, locked and opened
    (:func:`prepare_storage`), and the HTTP port, checked free. A start refused here has
    said nothing else yet, so its one line is all a user reads.

    Raises:
        DataDirInUse: another relay holds the data directory.
        CannotServe: the HTTP address cannot be bound.
    """
    storage = prepare_storage(settings)
    try:
        check_port(settings.host, settings.port)
    except CannotServe:
        close_storage(storage)
        raise
    return storage


class StartFailed(RuntimeError):
    """The supervision tree did not start; the message is the cause, in one line."""


class StartWatch(logging.Filter):
    """Pykka's failure reports while the tree starts: held, then logged by how the start ended.

    Pykka reports an actor whose start raised to its logger only, as an error with a
    traceback; the supervisor above it sees a dead child, and its own failed start is reported
    the same way. Attached to Pykka's logger for the start alone, this holds each such report.
    After a failed start the first held exception (the deepest actor fails first) is the one
    line a user reads, and the reports, tracebacks and all, are logged at ``debug``. After a
    successful start they are logged as they came: a crash the supervisors recovered from is
    no start failure. Failures after the start never pass through it.
    """

    def __init__(self) -> None:
        super().__init__()
        self.held: list[logging.LogRecord] = []
        """The error reports with an exception, in order (appended from any actor's thread)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Hold an error report with an exception; pass anything else on."""
        if record.levelno < logging.ERROR or not record.exc_info or record.exc_info[1] is None:
            return True
        self.held.append(record)
        return False

    def cause(self, failure: BaseException) -> str:
        """One line on why the start failed; ``failure`` is what the wait for the root raised."""
        for record in self.held:
            first = record.exc_info[1] if record.exc_info else None
            if isinstance(first, RuntimeError):  # ours say what happened in words
                return str(first)
            if first is not None:
                return f"{type(first).__name__}: {first}"
        if isinstance(failure, pykka.Timeout):
            return f"the supervision tree did not answer within {START_TIMEOUT_S} s of its start"
        return f"the supervision tree failed to start: {failure!r}"

    def release(self, *, failed: bool) -> None:
        """Log the held reports, at ``debug`` after a failed start (call once detached)."""
        pykka_log = logging.getLogger("pykka")
        # Pykka's own logger is kept at warning or above: a debug line goes where the root does
        debug = logging.getLogger().isEnabledFor(logging.DEBUG)
        for record in self.held:
            if failed:
                if not debug:
                    continue
                record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            pykka_log.handle(record)
        self.held.clear()


@contextlib.contextmanager
def watching_start() -> Iterator[StartWatch]:
    """A :class:`StartWatch` on Pykka's logger for the block; a raise means a failed start."""
    watch = StartWatch()
    pykka_log = logging.getLogger("pykka")
    pykka_log.addFilter(watch)
    failed = True
    try:
        yield watch
        failed = False
    finally:
        pykka_log.removeFilter(watch)
        watch.release(failed=failed)


@dataclass(frozen=True, slots=True)
class Handles:
    """The stable address of every actor of the tree, typed by its actor class."""

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
    http: ChildHandle[HttpTransport] = field(default_factory=lambda: ChildHandle("http"))

    def by_name(self, *, situation: bool = False) -> dict[str, ChildHandle[Any]]:
        """Every handle by its actor's short name, in start order; the SITUATION.md
        writer's only when it runs (``situation``)."""
        handles = (self.feed, self.sense, self.digest, self.context, self.llm, self.ticker)
        writer = (self.situation,) if situation else ()
        return {handle.name: handle for handle in (*handles, *writer, self.agent, self.http)}


def situation_writer(
    settings: Settings, hs: Handles
) -> tuple[SituationOutbox | None, tuple[ChildSpec, ...]]:
    """The SITUATION.md writer's outbox and child spec, or nothing without
    ``RELAY_SITUATION_FILE``."""
    path = settings.situation_file
    if not path:
        return None, ()
    outbox = SituationOutbox(hs.situation)

    def situation(report: Reporter) -> pykka.ActorRef[Any]:
        return SituationWriter.start(path=path, outbox=outbox, digest=hs.digest, report=report)

    log.info("situation.file", actor="root", path=path)
    for risk in situation_risks(path):
        log.warning(
            "situation.file_replaceable_by_others",
            actor="root",
            path=path,
            directory=risk.directory,
            mode=risk.mode,
            why=risk.why,
            fix=risk.fix,
            note="the plugin reads SITUATION.md as its context: a file another user puts there "
            "would speak to it in the user's name",
        )
    # No ping deadline: a write stuck on a dead disk holds only this actor, and the outbox
    # keeps just the newest situation meanwhile (see actors.situation_writer).
    return outbox, (ChildSpec("situation", situation, hs.situation, shutdown_timeout_s=1.0),)


def privacy(settings: Settings) -> Redactor:
    """The redactor as configured (a warning when it is off), and the configured secrets
    remembered, so that no error text or log line shows them (:mod:`config.secrets`)."""
    remember_secret(settings.agent.api_key)
    remember_secret(settings.token, "token")
    if not settings.redact:
        log.warning(
            "privacy.redaction_off",
            actor="root",
            note="RELAY_REDACT=off: keys, tokens, passwords, card numbers and <private> text "
            "are stored, served and sent to the LLM as they came",
        )
    return Redactor(enabled=settings.redact)


def start_relay(
    settings: Settings,
    clock: Clock,
    *,
    on_escalate: Callable[[ChildExited], None] | None = None,
    llm_transport: httpx.AsyncBaseTransport | None = None,
    poll_interval_s: float = 1.0,
    prices: PriceTable | None = None,
) -> Relay:
    """Start the supervision tree and wait until every actor answers.

    ``prices``: the price table; by default the built-in one with ``RELAY_PRICES`` applied.

    A failed start is not logged as an error here: the exception says why in one line (the
    first actor that failed, e.g. ``port 18791 on 127.0.0.1 is in use``), and Pykka's reports
    with their tracebacks are lowered to ``debug`` (:class:`StartWatch`).

    Raises:
        DataDirInUse: another relay holds the data directory.
        CannotServe: the HTTP address cannot be bound (checked before any actor starts).
        StartFailed: an actor failed to start; the message is its error.
        ConfigError: ``RELAY_PRICES`` is not a valid prices file (only without ``prices``).
    """
    if prices is None:
        prices = load_prices(settings.prices_file)
    hs = Handles()
    feed_h, sense_h, digest_h, context_h = hs.feed, hs.sense, hs.digest, hs.context
    llm_h, ticker_h, agent_h, http_h = hs.llm, hs.ticker, hs.agent, hs.http
    h = hs.by_name(situation=bool(settings.situation_file))
    storage = claim_resources(settings)
    stores = storage.stores
    redactor = privacy(settings)
    config = ConfigCell(settings.agent)
    feed_view, sense_view = Published(EMPTY_FEED), Published(EMPTY_SENSE)
    agent_view, formats = Published(EMPTY_AGENT), Published(NO_LEVELS)
    news = News(feed_view, sense_view, ticker_h, clock)
    intensity = Intensity(settings.max_restarts, settings.restart_window_s)
    llm_ping_s = settings.agent.timeout_ms / 1000 + PING_TIMEOUT_S
    outbox, writer = situation_writer(settings, hs)

    def context(report: Reporter) -> pykka.ActorRef[Any]:
        return ContextBuilder.start(
            clock=clock,
            feed=feed_view,
            sense=sense_view,
            agent=agent_view,
            llm=llm_h,
            digest=digest_h,
            report=report,
        )

    def llm(report: Reporter) -> pykka.ActorRef[Any]:
        return LLMCaller.start(
            clock=clock,
            digest=digest_h,
            transport=llm_transport,
            formats=formats,
            report=report,
        )

    def ticker(report: Reporter) -> pykka.ActorRef[Any]:
        return Ticker.start(
            clock=clock,
            config=config,
            context=context_h,
            me=ticker_h,
            news=news,
            digest=digest_h,
            report=report,
        )

    agent_children = [
        ChildSpec("context", context, context_h, ping_timeout_s=PING_TIMEOUT_S),
        # Holds nothing to flush: a stop behind a hung request abandons its thread after 1 s.
        ChildSpec(
            "llm",
            llm,
            llm_h,
            backoff=LLM_BACKOFF,
            shutdown_timeout_s=1.0,
            ping_timeout_s=llm_ping_s,
        ),
        ChildSpec("ticker", ticker, ticker_h, ping_timeout_s=PING_TIMEOUT_S),
        *writer,
    ]

    def feed(report: Reporter) -> pykka.ActorRef[Any]:
        return FeedBuffer.start(
            clock=clock,
            store=stores["feed"],
            published=feed_view,
            report=report,
            redactor=redactor,
        )

    def sense(report: Reporter) -> pykka.ActorRef[Any]:
        return SenseBuffer.start(
            clock=clock,
            store=stores["sense"],
            published=sense_view,
            report=report,
            redactor=redactor,
        )

    def digest(report: Reporter) -> pykka.ActorRef[Any]:
        return DigestStore.start(
            clock=clock,
            store=stores["agent"],
            feed=feed_h,
            retention_days=settings.retention_days,
            published=agent_view,
            prices=prices,
            situation=outbox,
            report=report,
        )

    def agent(report: Reporter) -> pykka.ActorRef[Any]:
        return Supervisor.start(
            name="agent",
            children=agent_children,
            clock=clock,
            report=report,
            intensity=intensity,
            poll_interval_s=poll_interval_s,
        )

    peers = Peers(
        feed=feed_h,
        sense=sense_h,
        feed_view=feed_view,
        sense_view=sense_view,
        agent_view=agent_view,
        digest=digest_h,
        context=context_h,
        ticker=ticker_h,
        actors=h,
        timeout_s=settings.actor_timeout_ms / 1000,
        storage=storage,
        clock=clock,
        formats=formats,
    )
    policy = Policy(
        token=settings.token,
        faults=settings.faults,
        max_streams=settings.max_streams,
        trace_requests=settings.log_level == "debug",
        cors_origins=settings.cors_origins,
        allowed_hosts=settings.allowed_hosts,
        exclusions=Exclusions(ExclusionRule.of(settings.exclude_apps, settings.exclude_titles)),
        redactor=redactor,
    )

    def http(report: Reporter) -> pykka.ActorRef[Any]:
        return HttpTransport.start(
            host=settings.host,
            port=settings.port,
            peers=peers,
            policy=policy,
            limits=ConnectionLimits(
                header_timeout_s=settings.header_timeout_s,
                body_timeout_s=settings.body_timeout_s,
                keepalive_timeout_s=settings.keepalive_timeout_s,
                max_connections=settings.max_connections,
            ),
            report=report,
        )

    root_children = [
        ChildSpec("feed", feed, feed_h, ping_timeout_s=PING_TIMEOUT_S),
        ChildSpec("sense", sense, sense_h, ping_timeout_s=PING_TIMEOUT_S),
        ChildSpec("digest", digest, digest_h, ping_timeout_s=PING_TIMEOUT_S),
        ChildSpec("agent", agent, agent_h, shutdown_timeout_s=STOP_TIMEOUT_S),
        # The transport's actor thread only starts and stops the server; its event loop runs
        # on a thread of its own, so a ping of the actor says nothing of the loop.
        ChildSpec("http", http, http_h),
    ]

    started = threading.Event()

    def escalate(exited: ChildExited) -> None:
        if exited.reason == NORMAL_EXIT:
            return  # the root stopped because we asked it to
        if started.is_set():
            log.critical("relay.root_gave_up", actor="root", reason=exited.reason)
        else:  # the caller learns it from start_relay's exception
            log.debug("relay.root_failed_to_start", actor="root", reason=exited.reason)
        if on_escalate is not None:
            on_escalate(exited)

    with watching_start() as watch:
        root = Supervisor.start(
            name="root",
            children=root_children,
            clock=clock,
            report=escalate,
            intensity=intensity,
            poll_interval_s=poll_interval_s,
        )
        try:
            root.proxy().ping().get(timeout=START_TIMEOUT_S)
        except (pykka.ActorDeadError, pykka.Timeout) as exc:
            with contextlib.suppress(pykka.ActorDeadError):
                root.stop(block=False)  # a root still starting stops once it is done
            close_storage(storage)
            raise StartFailed(watch.cause(exc)) from exc
        started.set()
    return Relay(root=root, handles=h, storage=storage)
