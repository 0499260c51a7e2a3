"""sinain-relay: settings -> supervision tree -> serve until SIGINT or SIGTERM.

``python run.py --help`` lists every flag. Exit codes: 0 after a signal, 1 when the relay
could not start (one ``relay.start_failed`` line says why: a port in use, a data directory
another relay holds, an actor that failed its start), 2 for an invalid setting (or a host
beyond loopback without RELAY_TOKEN: see :func:`transport.auth.exposure`), 70 when the root
supervisor gave up (restart intensity exceeded), so that a service manager restarts the
process.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from types import FrameType
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
    Supervisor,
    SystemClock,
    Ticker,
)
from actors.core.entries import EMPTY_AGENT
from actors.core.exclusion import ExclusionRule, Exclusions
from actors.core.records import EMPTY_FEED, EMPTY_SENSE
from actors.core.redaction import Redactor
from actors.kernel.base import NORMAL_EXIT, Reporter
from actors.kernel.published import Published
from actors.kernel.storage import (
    MEMORY,
    StorageError,
    StorageInfo,
    close_storage,
    open_storage,
    with_problem,
)
from actors.kernel.supervisor import Backoff, Intensity
from actors.ticker_cells import ConfigCell, News
from config import Settings, configure_logging, settings_or_exit
from config.prices import PriceTable, load_prices, prices_or_exit
from config.settings import build_parser
from transport import HttpTransport, Peers, exposure, refusal, warn_at_start
from transport.http_transport import CannotServe, check_port

if TYPE_CHECKING:
    import httpx

    from transport.demo import Replayer

EXIT_START_FAILED = 1
EXIT_ESCALATED = 70
START_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 10.0
DUPLICATE_SIGNAL_S = 0.1
"""``timeout`` and some supervisors signal the process and its group: one stop, not two."""
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
    handles: dict[str, ChildHandle]
    storage: StorageInfo

    def address(self, timeout_s: float = 5.0) -> tuple[str, int]:
        """Where the HTTP transport listens."""
        result: tuple[str, int] = self.handles["http"].proxy().address().get(timeout=timeout_s)
        return result

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
            error=str(exc),
        )
        return with_problem(open_storage(MEMORY, settings.sync), str(exc))


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
    names = ("feed", "sense", "digest", "context", "llm", "ticker", "agent", "http")
    h = {name: ChildHandle(name) for name in names}
    storage = claim_resources(settings)
    stores = storage.stores
    redactor = Redactor(enabled=settings.redact)
    if not settings.redact:
        log.warning(
            "privacy.redaction_off",
            actor="root",
            note="RELAY_REDACT=off: keys, tokens, passwords, card numbers and <private> text "
            "are stored, served and sent to the LLM as they came",
        )
    config = ConfigCell(settings.agent)
    feed_view = Published(EMPTY_FEED)
    sense_view = Published(EMPTY_SENSE)
    agent_view = Published(EMPTY_AGENT)
    news = News(feed_view, sense_view, h["ticker"], clock)
    intensity = Intensity(settings.max_restarts, settings.restart_window_s)
    llm_ping_s = settings.agent.timeout_ms / 1000 + PING_TIMEOUT_S

    def context(report: Reporter) -> pykka.ActorRef[Any]:
        return ContextBuilder.start(
            clock=clock,
            feed=feed_view,
            sense=sense_view,
            agent=agent_view,
            llm=h["llm"],
            digest=h["digest"],
            ticker=h["ticker"],
            report=report,
        )

    def llm(report: Reporter) -> pykka.ActorRef[Any]:
        return LLMCaller.start(
            clock=clock,
            digest=h["digest"],
            ticker=h["ticker"],
            transport=llm_transport,
            report=report,
        )

    def ticker(report: Reporter) -> pykka.ActorRef[Any]:
        return Ticker.start(
            clock=clock,
            config=config,
            context=h["context"],
            news=news,
            digest=h["digest"],
            report=report,
        )

    agent_children = [
        ChildSpec("context", context, h["context"], ping_timeout_s=PING_TIMEOUT_S),
        # Holds nothing to flush: a stop behind a hung request abandons its thread after 1 s.
        ChildSpec(
            "llm",
            llm,
            h["llm"],
            backoff=LLM_BACKOFF,
            shutdown_timeout_s=1.0,
            ping_timeout_s=llm_ping_s,
        ),
        ChildSpec("ticker", ticker, h["ticker"], ping_timeout_s=PING_TIMEOUT_S),
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
            feed=h["feed"],
            retention_days=settings.retention_days,
            published=agent_view,
            prices=prices,
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
        feed=h["feed"],
        sense=h["sense"],
        feed_view=feed_view,
        sense_view=sense_view,
        agent_view=agent_view,
        digest=h["digest"],
        context=h["context"],
        ticker=h["ticker"],
        actors=h,
        timeout_s=settings.actor_timeout_ms / 1000,
        token=settings.token,
        storage=storage,
        faults=settings.faults,
        max_streams=settings.max_streams,
        trace_requests=settings.log_level == "debug",
        cors_origins=settings.cors_origins,
        exclusions=Exclusions(ExclusionRule.of(settings.exclude_apps, settings.exclude_titles)),
        redactor=redactor,
    )

    def http(report: Reporter) -> pykka.ActorRef[Any]:
        return HttpTransport.start(
            host=settings.host, port=settings.port, peers=peers, report=report
        )

    root_children = [
        ChildSpec("feed", feed, h["feed"], ping_timeout_s=PING_TIMEOUT_S),
        ChildSpec("sense", sense, h["sense"], ping_timeout_s=PING_TIMEOUT_S),
        ChildSpec("digest", digest, h["digest"], ping_timeout_s=PING_TIMEOUT_S),
        ChildSpec("agent", agent, h["agent"], shutdown_timeout_s=STOP_TIMEOUT_S),
        # The transport's actor thread only starts and stops the server; its event loop runs
        # on a thread of its own, so a ping of the actor says nothing of the loop.
        ChildSpec("http", http, h["http"]),
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


TRIM_INTERVAL_S = 10.0
"""How often the main thread hands the allocator's free pages back to the system."""


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.malloc_trim  # noqa: B018 (glibc only: musl and macOS have none)
        libc.mallopt  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()
_M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter for the number of malloc arenas."""
ARENAS = 2
"""glibc makes up to 8 arenas per core for a process's threads; the relay's dozen threads
allocate little, and two arenas keep about 1 MB less resident (53.0 against 53.9 MB at start,
58.0 against 59.1 MB after a burst of posts)."""


def limit_malloc_arenas() -> None:
    """Cap glibc's malloc arenas at :data:`ARENAS`; call before any thread starts."""
    if _LIBC is not None:
        _LIBC.mallopt(_M_ARENA_MAX, ARENAS)


def release_free_memory() -> None:
    """Give the C allocator's free pages back to the system (glibc's ``malloc_trim``).

    A burst of requests leaves freed memory in glibc's arenas, counted in the resident size
    for as long as the process lives: about 2.4 MB after 64 connections of posts (61.5 MB
    against 59.1 MB). The main thread, idle otherwise, calls it every
    :data:`TRIM_INTERVAL_S`; a call takes about a millisecond and releases the GIL.
    """
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


DEMO_API_KEY = "demo-stand-in"
"""The placeholder key of ``--demo``: the stand-in LLM asks for none."""


def _data_dir_given(argv: Sequence[str], environ: Mapping[str, str]) -> bool:
    """Whether ``--data-dir`` or ``RELAY_DATA_DIR`` was given (argparse's abbreviations too)."""
    given = build_parser().parse_args(list(argv)).data_dir is not None
    return given or bool(environ.get("RELAY_DATA_DIR", "").strip())


def _local_url(host: str, port: int) -> str:
    """A URL that reaches a server bound to ``host`` from this machine."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)  # noqa: S104
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def prepare_demo(
    settings: Settings,
    argv: Sequence[str],
    environ: Mapping[str, str],
    cleanup: contextlib.ExitStack,
) -> Settings:
    """Start the stand-in LLM and point the agent at it; state in a temporary directory.

    What it starts and creates is undone by ``cleanup`` (the LLM stopped, the directory
    removed), after the relay has stopped. A data directory given explicitly is kept.
    """
    from transport.fake_llm import STAND_IN_MODEL, FakeLLM  # noqa: PLC0415 - the demo's only

    data_dir = settings.data_dir
    kept = _data_dir_given(argv, environ)
    if not kept:
        data_dir = tempfile.mkdtemp(prefix="sinain-relay-demo-")
        cleanup.callback(shutil.rmtree, data_dir, ignore_errors=True)
    llm = FakeLLM(mode="summarise").start()
    cleanup.callback(llm.stop)
    agent = replace(
        settings.agent,
        base_url=llm.base_url,
        api_key=DEMO_API_KEY,
        model=STAND_IN_MODEL,
        fallback_models=(),
    )
    log.warning(
        "demo.stand_in_llm",
        actor="root",
        llm=llm.base_url,
        model=STAND_IN_MODEL,
        note="demo mode: the LLM is a stand-in that summarises the prompt heuristically "
        "(no model, no key, no network); huds and digests show the relay's plumbing, "
        "not a model's judgement",
    )
    log.info(
        "demo.data_dir",
        actor="root",
        data_dir=data_dir,
        removed_at_exit=not kept,
    )
    return replace(settings, data_dir=data_dir, agent=agent)


def start_demo_replay(host: str, port: int, token: str = "") -> Replayer:
    """Replay the shipped capture session against the relay, in a loop, at real speed."""
    from transport.demo import Replayer, load_session  # noqa: PLC0415 - the demo's only

    url = _local_url(host, port)
    log.info(
        "demo.tour",
        actor="root",
        session="transport/demo_session.jsonl",
        watch=f"curl -s {url}/agent/digest",
        feed=f"curl -s '{url}/feed?after=0'",
        history=f"curl -s '{url}/agent/history?limit=5'",
    )
    return Replayer(url, load_session(), loop=True, token=token).start()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the relay until SIGINT or SIGTERM; a second signal exits at once.

    With ``--demo``: the stand-in LLM and the shipped capture session (:func:`prepare_demo`).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    settings = settings_or_exit(args, os.environ)
    prices = prices_or_exit(settings.prices_file)
    verdict = exposure(settings.host, token=settings.token, allow_insecure=settings.allow_insecure)
    if verdict == "refused":
        build_parser().exit(2, f"run.py: error: {refusal(settings.host)}\n")
    configure_logging(settings.log_format, settings.log_level)
    warn_at_start(
        verdict, host=settings.host, token=settings.token, cors_origins=settings.cors_origins
    )
    signal.signal(signal.SIGUSR1, pykka.debug.log_thread_tracebacks)
    limit_malloc_arenas()

    stop = threading.Event()
    exit_code = [0]
    first_signal: list[tuple[int, float]] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        now = time.monotonic()
        if first_signal:
            first, at = first_signal[0]
            if signum == first and now - at < DUPLICATE_SIGNAL_S:
                return  # one signal delivered twice (to the process and to its group)
            log.warning("relay.forced_exit", actor="root", signal=signal.Signals(signum).name)
            os._exit(128 + signum)
        first_signal.append((signum, now))
        log.info("relay.stopping", actor="root", signal=signal.Signals(signum).name)
        stop.set()

    def on_escalate(_exited: ChildExited) -> None:
        exit_code[0] = EXIT_ESCALATED
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    # the demo's stand-in LLM and temporary directory outlive the relay: undone last
    with contextlib.ExitStack() as demo:
        if settings.demo:
            settings = prepare_demo(settings, args, os.environ, demo)
        try:
            relay = start_relay(settings, SystemClock(), on_escalate=on_escalate, prices=prices)
        except RuntimeError as exc:  # StartFailed, DataDirInUse, StorageError: a line each
            log.error("relay.start_failed", actor="root", error=str(exc))
            return EXIT_START_FAILED
        host, port = relay.address()
        log.info("relay.started", actor="root", url=f"http://{host}:{port}", pid=os.getpid())
        replay = start_demo_replay(host, port, settings.token) if settings.demo else None
        idle_s = 0.0
        while not stop.wait(timeout=1.0):
            idle_s += 1.0
            if idle_s >= TRIM_INTERVAL_S:
                idle_s = 0.0
                release_free_memory()
        if replay is not None:
            replay.stop()
        relay.stop()
    log.info("relay.stopped", actor="root", exit_code=exit_code[0])
    return exit_code[0]


if __name__ == "__main__":
    sys.exit(main())
