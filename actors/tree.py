"""The supervision tree of the relay: every actor, who starts it, and what it is given.

The tree is drawn in docs/architecture.md ("The actor tree"), which a test compares with the
tree that runs; :meth:`Relay.tree` draws the running one (:func:`actor_tree`), the supervisors
and their children by name and class, in start order.

This module is the composition root. :func:`start_relay` claims the data directory and checks
the frontend, then starts each feature's subtree in order, buffers, digest, agent, audio
(:data:`actors.subtrees.SUBTREES`), then the frontend; :meth:`Relay.stop` stops them in
reverse. Peers reach each other through stable handles
(:class:`~actors.kernel.base.ChildHandle`), which the supervisors point at each new
incarnation; the buffers and the digest store publish their committed state in cells that
outlive their incarnations. Actors know no HTTP: the entry point assembles the transport and
hands it in as a :class:`~actors.subtrees.Frontend`. The kernel knows no secrets: it is handed
the scrubber its error texts pass through here, before anything starts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pykka
import structlog

from actors.core.error_text import safe_text
from actors.core.errors import ActorUnavailable
from actors.core.redaction.redactor import Redactor
from actors.kernel.base import NORMAL_EXIT, ChildExited, ChildHandle
from actors.kernel.clock import Clock
from actors.kernel.schemas import StorageError
from actors.kernel.scrubber import use_scrubber
from actors.kernel.start_watch import watching_start
from actors.kernel.storage import MEMORY, StorageInfo, close_storage, open_storage
from actors.kernel.storage import with_problem as storage_with_problem
from actors.kernel.supervisor import Supervisor
from actors.subtrees import (
    STOP_TIMEOUT_S,
    Frontend,
    Handles,
    Wiring,
    situation_outbox,
    start_frontend,
    start_root,
    start_subtrees,
    stop_frontend,
    stop_root,
    stop_subtrees,
)
from config.common.secrets import remember_secret, url_secrets
from config.data_home import data_dir
from config.prices import PriceTable, load_prices
from config.privacy import DEFAULT_MODE, Matrix, privacy_matrix, variable
from config.settings import Settings

if TYPE_CHECKING:
    import httpx

log = structlog.get_logger("relay")


class StartFailed(RuntimeError):
    """The supervision tree did not start; the message is the cause, in one line."""


def start_relay(
    settings: Settings,
    clock: Clock,
    *,
    frontend: Frontend,
    on_escalate: Callable[[ChildExited], None] | None = None,
    llm_transport: httpx.AsyncBaseTransport | None = None,
    poll_interval_s: float = 1.0,
    prices: PriceTable | None = None,
) -> Relay:
    """Start the tree subtree by subtree, each once its actors answer; a failed start stops
    what had started and says why in one line. ``prices``: by default the built-in table with
    ``RELAY_PRICES`` applied (a bad file raises ``ConfigError``).

    Raises:
        DataDirInUse: another relay holds the data directory (before any actor starts).
        CannotServe: the frontend cannot serve, e.g. a port in use (likewise).
        StartFailed: an actor failed to start; the message is its error.
    """
    use_scrubber(safe_text)  # the kernel's error texts, from the first (a corrupt file's)
    prices = load_prices(settings.prices_file) if prices is None else prices
    storage = claim_resources(settings, frontend)
    wiring = wire(settings, clock, storage, prices, llm_transport, poll_interval_s=poll_interval_s)
    started = threading.Event()
    with watching_start() as watch:
        root = start_root(wiring, escalation(started, on_escalate))
        try:
            subtrees = start_subtrees(root, wiring)
            start_frontend(root, wiring, frontend)
        except (RuntimeError, TimeoutError, ActorUnavailable, pykka.ActorDeadError) as exc:
            stop_root(root, timeout_s=None)  # what had started stops, in reverse order
            close_storage(storage)
            raise StartFailed(watch.cause(exc)) from exc
        started.set()
    return Relay(
        root=root,
        subtrees=subtrees,
        handles=wiring.actors,
        storage=storage,
        frontend=frontend,
        wiring=wiring,
    )


@dataclass(frozen=True, slots=True)
class Relay:
    """A running relay: the root supervisor, every actor's stable handle, the storage."""

    root: pykka.ActorRef[Any]
    subtrees: tuple[str, ...]
    """The root's children but the frontend, in start order."""
    handles: dict[str, ChildHandle[Any]]
    storage: StorageInfo
    frontend: Frontend
    wiring: Wiring
    """What the subtrees were built from: what they hold beside their actors (the agent's
    model on this machine, whose worker ends with the relay) is closed with it."""

    def address(self, timeout_s: float = 5.0) -> tuple[str, int]:
        """Where the frontend serves."""
        return self.frontend.address(self.handles["http"], timeout_s)

    def tree(self, timeout_s: float = 5.0) -> TreeNode:
        """The tree as it runs now (:func:`actor_tree`)."""
        return actor_tree(self.root, timeout_s)

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> bool:
        """Stop the subtrees in reverse start order, then the root, then close the storage;
        False if that did not finish within ``timeout_s``."""
        end = time.monotonic() + timeout_s

        def left() -> float:
            return max(0.0, end - time.monotonic())

        try:
            stop_frontend(self.root, left())
            stop_subtrees(self.root, self.subtrees, left)
            stop_root(self.root, left())
        except (TimeoutError, pykka.Timeout):
            log.error("relay.stop_timeout", actor="root", timeout_s=timeout_s)
            stop_root(self.root, timeout_s=None)  # the rest stops once the root is free
            return False
        finally:
            close_storage(self.storage)
            self.wiring.close()
        return True


@dataclass(frozen=True, slots=True)
class TreeNode:
    """One actor of a running tree: its short name, its class's name, and its children (in
    start order) when it is a supervisor."""

    name: str
    kind: str
    children: tuple[TreeNode, ...] = ()

    def picture(self) -> str:
        """The tree drawn as docs/architecture.md draws it, without the descriptions."""
        lines = [f"{self.name} ({self.kind})"]

        def draw(children: tuple[TreeNode, ...], prefix: str) -> None:
            for i, child in enumerate(children):
                last = i == len(children) - 1
                lines.append(f"{prefix}{'└── ' if last else '├── '}{child.name}  {child.kind}")
                draw(child.children, prefix + ("    " if last else "│   "))

        draw(self.children, "")
        return "\n".join(lines)


def actor_tree(root: pykka.ActorRef[Any], timeout_s: float = 5.0) -> TreeNode:
    """The running tree as its supervisors hold it: each supervisor is asked for its
    children, so the answer is what runs, not what the code meant to start.

    Raises:
        ActorUnavailable: a supervisor is not running.
        TimeoutError: a supervisor did not answer within ``timeout_s``.
    """
    return _node("root", root, timeout_s)


def _node(name: str, ref: pykka.ActorRef[Any] | None, timeout_s: float) -> TreeNode:
    if ref is None:  # a child between incarnations keeps its name
        return TreeNode(name, "?")
    kind = ref.actor_class
    if not issubclass(kind, Supervisor):
        return TreeNode(name, kind.__name__)
    handle: ChildHandle[Supervisor] = ChildHandle(name)
    handle.bind(ref)
    children = handle.ask(Supervisor.children).result(timeout=timeout_s)
    return TreeNode(name, kind.__name__, tuple(_node(c.name, c.ref, timeout_s) for c in children))


def wire(
    settings: Settings,
    clock: Clock,
    storage: StorageInfo,
    prices: PriceTable,
    llm_transport: httpx.AsyncBaseTransport | None,
    *,
    poll_interval_s: float,
) -> Wiring:
    """What a new tree's subtrees are built from: the redactor (:func:`privacy`), the privacy
    matrix (:func:`config.privacy.privacy_matrix`), fresh
    handles and cells, and the SITUATION.md outbox when the file is set."""
    handles = Handles()
    return Wiring(
        settings=settings,
        clock=clock,
        storage=storage,
        redactor=privacy(settings),
        prices=prices,
        matrix=matrix(settings),
        llm_transport=llm_transport,
        poll_interval_s=poll_interval_s,
        handles=handles,
        outbox=situation_outbox(settings, handles.situation),
    )


def escalation(
    started: threading.Event, on_escalate: Callable[[ChildExited], None] | None
) -> Callable[[ChildExited], None]:
    """What the root's death is told to: a critical line once ``started`` is set (a start
    that fails says why in its exception), then ``on_escalate``; a normal stop is no news."""

    def escalate(exited: ChildExited) -> None:
        if exited.reason == NORMAL_EXIT:
            return  # the root stopped because we asked it to
        if started.is_set():
            log.critical("relay.root_gave_up", actor="root", reason=exited.reason)
        else:  # the caller learns it from start_relay's exception
            log.debug("relay.root_failed_to_start", actor="root", reason=exited.reason)
        if on_escalate is not None:
            on_escalate(exited)

    return escalate


def prepare_storage(settings: Settings) -> StorageInfo:
    """Open the databases; if the data directory is unusable, serve from memory and say so.

    A directory another relay holds is not unusable: its data is being served, so the start
    stops there.

    Raises:
        DataDirInUse: another relay (or another open in this process) holds the directory.
    """
    directory = data_dir(settings.data_dir)
    try:
        return open_storage(directory, settings.sync)
    except StorageError as exc:
        log.critical(
            "storage.unusable_serving_from_memory",
            actor="root",
            data_dir=directory,
            error=safe_text(str(exc)),
        )
        return storage_with_problem(open_storage(MEMORY, settings.sync), safe_text(str(exc)))


def claim_resources(settings: Settings, frontend: Frontend) -> StorageInfo:
    """What a start needs before any actor starts: the data directory, locked and opened
    (:func:`prepare_storage`), and the frontend, checked (its port free). A start refused
    here has said nothing else yet, so its one line is all a user reads.

    Raises:
        DataDirInUse: another relay holds the data directory.
        CannotServe: the frontend cannot serve (a port in use).
    """
    storage = prepare_storage(settings)
    try:
        frontend.check()
    except BaseException:
        close_storage(storage)
        raise
    return storage


def matrix(settings: Settings) -> Matrix:
    """The privacy matrix, built once; a line says which preset and cells set it, when any
    did (unset, the relay does what it always did and says nothing)."""
    privacy_settings = settings.privacy
    built = privacy_matrix(privacy_settings, redact=settings.redact)
    cells = privacy_settings.cells()
    if privacy_settings.mode or cells:
        log.info(
            "privacy.matrix",
            actor="root",
            mode=privacy_settings.mode or DEFAULT_MODE,
            cells={variable(kind, dest): level for (kind, dest), level in cells.items()},
        )
    return built


def privacy(settings: Settings) -> Redactor:
    """The redactor as configured (a warning when it is off), and the configured secrets
    remembered, so that no error text or log line shows them (:mod:`config.common.secrets`)."""
    remember_secret(settings.agent.api_key)
    remember_secret(settings.audio.stt_api_key)
    remember_secret(settings.token, "token")
    for url in (settings.agent.base_url, settings.audio.stt_base_url):
        for secret, kind in url_secrets(url):
            remember_secret(secret, kind)
    if not settings.redact:
        log.warning(
            "privacy.redaction_off",
            actor="root",
            note="RELAY_REDACT=off: keys, tokens, passwords, card numbers and <private> text "
            "are stored, served and sent to the LLM as they came",
        )
    return Redactor(enabled=settings.redact)
