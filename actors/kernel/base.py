"""What every relay actor shares: supervision hooks, typed messages, stable handles.

* :class:`RelayActor` tells its supervisor when it dies (an error in a told message, or
  in ``on_start``, which Pykka reports to no hook), answers :class:`Call` messages, and
  binds ``actor=<name>`` to its log lines.
* :class:`Call` carries a ``concurrent.futures.Future`` for the reply, so the event loop can
  ``await asyncio.wrap_future(reply)`` without parking its thread (awaiting a Pykka future
  would block it).
* :class:`ChildHandle` is the stable address of a supervised child: peers keep the handle,
  never a ref, and the supervisor points it at each new incarnation.

Messages between actors are typed: ``handle.tell(FeedBuffer.push_agent, hud)`` runs a method
of the actor without waiting, ``handle.ask(DigestStore.stats)`` runs it and answers in a
:class:`Reply`. Both take the actor class's own method, so mypy checks its name, its
arguments and its result; a renamed method fails the type check, not a request.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
import weakref
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ClassVar, Concatenate, Generic, Literal, ParamSpec, TypeVar

import pykka
import structlog
from pykka.messages import ProxyCall
from structlog.contextvars import bound_contextvars

from actors.kernel.errors import ActorUnavailable
from actors.kernel.pykka_compat import HookedActor
from actors.kernel.scrubber import error_text

P = ParamSpec("P")
R = TypeVar("R")
A = TypeVar("A", bound="RelayActor")
M = TypeVar("M")

CURRENT_REQUEST: ContextVar[str | None] = ContextVar("relay_request_id", default=None)
"""The id of the HTTP request being handled, when the transport traces requests: an ask made
meanwhile carries it, and the actor binds it to its log lines while it answers."""


class InjectedFault(Exception):
    """Raised by :meth:`RelayActor.inject_fault` to crash an actor on purpose."""


_LIVE: weakref.WeakValueDictionary[str, RelayActor] = weakref.WeakValueDictionary()
"""Every relay actor by URN, for :func:`release_abandoned` (weakly: a gone one is dropped)."""

ChildState = Literal["running", "backoff", "stopped"]
"""A supervised child's state: alive, waiting to be restarted, or stopped."""


@dataclass(frozen=True, slots=True)
class Call:
    """Run ``method(*args)`` on the actor and put the result (or error) in ``reply``."""

    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    reply: concurrent.futures.Future[Any]
    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class ChildExited:
    """A child tells its supervisor that it died (sent with ``tell``, from the dying thread)."""

    name: str
    urn: str
    reason: str
    """``normal``, or what killed it as :func:`~actors.kernel.scrubber.error_text` puts it
    (the supervisor logs it)."""


NORMAL_EXIT = "normal"
"""The reason a child gives when it stopped on request (OTP's ``normal``)."""

Reporter = Callable[[ChildExited], None]
"""How a child reaches its supervisor: a function that ``tell``s it a :class:`ChildExited`."""


class RelayActor(HookedActor):
    """Base of the relay's actors.

    Subclasses set :attr:`name`, put start-up work in :meth:`started` (not ``on_start``),
    and clean-up in :meth:`stopped` (called on a normal stop and after a failure alike); what
    must also be let go by an abandoned incarnation whose call came back goes in
    :meth:`~actors.kernel.pykka_compat.HookedActor.loop_ended`.
    """

    use_daemon_thread = True
    """A hung actor that is abandoned must not keep the process alive."""
    name: ClassVar[str] = "actor"

    def __init__(self, *, report: Reporter | None = None) -> None:
        super().__init__()
        self._report = report
        self._log = structlog.get_logger("relay").bind(actor=self.name)
        self._answering: concurrent.futures.Future[Any] | None = None
        """The reply of the :class:`Call` being run, which its caller waits for."""
        self._exited = False
        """Its clean-up is over and its exit reported (see :func:`still_exiting`)."""
        self._drill_over = threading.Event()
        """Set when its supervisor stops it on purpose: a hang drill ends (:func:`end_drills`)."""
        _LIVE[self.actor_urn] = self

    # -- lifecycle ---------------------------------------------------------------------------

    def on_start(self) -> None:
        """Run :meth:`started`; a failure there is reported, since Pykka calls no hook for it."""
        self._log = self._log.bind(urn=self.actor_urn[-8:])
        try:
            self.started()
        except Exception as exc:
            try:
                self.stopped()  # release whatever the failed start had taken
            finally:
                self._fail_queued_calls()
                self._report_exit(f"on_start failed: {error_text(exc)}")
            raise

    def on_stop(self) -> None:
        """Normal stop: clean up, and tell the supervisor it was a ``normal`` exit."""
        try:
            self.stopped()
        finally:
            self._fail_queued_calls()
            self._report_exit(NORMAL_EXIT)

    def on_failure(
        self,
        exception_type: type[BaseException] | None,  # noqa: ARG002 - Pykka's hook signature
        exception_value: BaseException | None,
        traceback: TracebackType | None,  # noqa: ARG002
    ) -> None:
        """A told message raised and killed the actor: clean up, tell the supervisor."""
        try:
            self.stopped()
        finally:
            self._fail_queued_calls()
            self._report_exit(
                error_text(exception_value) if exception_value is not None else "failure"
            )

    def started(self) -> None:
        """Start-up work, in the actor's thread. Raising here is a failed start."""

    def abandoned(self) -> None:
        """Its supervisor gave up on this incarnation (hung: no answer to a ping, or to a
        stop), before it starts the next one: release at once what two incarnations must not
        hold together (a capture's process). Runs on the supervisor's thread while this
        actor's own thread is stuck, so it may touch only what is safe from another thread;
        :meth:`stopped` never runs for an abandoned actor. Nothing by default."""

    def stopped(self) -> None:
        """Release what :meth:`started` took; runs after a normal stop and after a crash."""

    def let_callers_go(self) -> None:
        """Its supervisor abandoned this incarnation while it may be running a call: fail
        that call, whose caller waits for it once begun (``transport.shell.bridge``), with
        :class:`ActorUnavailable`. Runs on the supervisor's thread, before :meth:`abandoned`;
        durable actors also fail the answers held for their commit and never commit again.
        """
        reply = self._answering
        if reply is not None:
            _fail(reply, ActorUnavailable(f"actor {self.name} hung; retry"))

    def _tell_peer(
        self,
        peer: ChildHandle[A],
        method: Callable[Concatenate[A, P], object],
        /,
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> bool:
        """``peer.tell(method, ...)``; False (and a log line) if the peer is restarting."""
        try:
            peer.tell(method, *args, **kwargs)
        except ActorUnavailable:
            self._log.warning("actor.peer_unavailable", peer=peer.name, method=method.__name__)
            return False
        return True

    def _reply(self, reply_to: Callable[[M], object], message: M) -> bool:
        """``reply_to(message)``, a reply a request carried; False (and a log line) if the
        actor waiting for it is restarting."""
        try:
            reply_to(message)
        except ActorUnavailable:
            self._log.warning("actor.reply_undelivered", message=type(message).__name__)
            return False
        return True

    def _fail_queued_calls(self) -> None:
        """Answer the :class:`Call` messages still queued with :class:`ActorUnavailable` at once.

        Pykka fails only its own queued asks when an actor stops; a ``Call`` is a tell with a
        reply future of ours, which would be dropped and leave its caller waiting for its whole
        timeout. None of them has run, so the caller may simply retry. The other messages stay
        queued: Pykka's own teardown answers them.
        """
        for call in self._take_queued(lambda message: isinstance(message, Call)):
            if call.reply.set_running_or_notify_cancel():
                call.reply.set_exception(
                    ActorUnavailable(f"actor {self.name} stopped before answering; retry")
                )

    def _report_exit(self, reason: str) -> None:
        self._exited = True
        if self._report is None:
            return
        try:
            # tell, never ask: this runs in the dying actor's thread, and the supervisor
            # may be busy stopping this very actor.
            self._report(ChildExited(name=self.name, urn=self.actor_urn, reason=reason))
        except pykka.ActorDeadError:
            self._log.debug("actor.exit_unreported", reason=reason)

    # -- messages ----------------------------------------------------------------------------

    def ping(self) -> str:
        """Liveness check: answered only when the actor is alive and its mailbox moves."""
        return "pong"

    def inject_fault(self, kind: str, seconds: float = 0.0) -> None:
        """Fault drill: ``crash`` raises here (fatal when told); ``hang`` blocks the mailbox.

        A hang holds this actor's thread for ``seconds``, as a stuck call would: nothing else
        in its mailbox moves meanwhile, and its supervisor's pings go unanswered. It ends
        early when the actor is stopped on purpose (the relay stopping): a drill never holds
        a stop.
        """
        self._log.warning("actor.fault_injected", kind=kind, seconds=seconds)
        if kind == "crash":
            raise InjectedFault(f"injected crash in {self.name}")
        if kind == "hang":
            self._hang(seconds)
            return
        msg = f"unknown fault kind {kind!r}; use crash or hang"
        raise ValueError(msg)

    def _hang(self, seconds: float) -> None:
        """Block the calling thread for ``seconds``, or until :func:`end_drills` ends this
        actor's drills (callable from any thread this actor owns, its event loop's too)."""
        self._drill_over.wait(seconds)

    def on_receive(self, message: Any) -> Any:
        """Answer :class:`Call` messages; an error goes to the caller, the actor lives on."""
        if isinstance(message, Call):
            self._answer(message)
            return None
        return super().on_receive(message)

    def _answer(self, call: Call) -> None:
        # Claim the future first: if the caller already gave up (timed out), skip the work,
        # and a late set_result cannot raise InvalidStateError and kill this actor.
        # Once claimed, the caller waits for the answer past its timeout: see let_callers_go.
        if not call.reply.set_running_or_notify_cancel():
            return
        self._answering = call.reply
        try:
            if call.request_id is None:
                result = getattr(self, call.method)(*call.args, **call.kwargs)
            else:
                with bound_contextvars(request_id=call.request_id):
                    result = getattr(self, call.method)(*call.args, **call.kwargs)
        except Exception as exc:  # the caller gets the error; this actor keeps serving
            _fail(call.reply, exc)
        else:
            self._deliver(call.reply, result)
        finally:
            self._answering = None

    def _deliver(self, reply: concurrent.futures.Future[Any], result: Any) -> None:
        """Hand a :class:`Call`'s result to its caller (durable actors wait for the commit)."""
        _answer(reply, result)


def _answer(reply: concurrent.futures.Future[Any], result: Any) -> None:
    """``reply.set_result(result)``, unless the caller was let go already (abandoned)."""
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        reply.set_result(result)


def _fail(reply: concurrent.futures.Future[Any], error: BaseException) -> None:
    """``reply.set_exception(error)``, unless it was answered or let go already."""
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        reply.set_exception(error)


def still_exiting(urn: str) -> bool:
    """Whether the relay actor ``urn`` is dead to Pykka but still cleaning up: Pykka marks an
    actor that crashed dead before :meth:`RelayActor.stopped` runs, and until that returns the
    actor may hold what a new incarnation would take (a port, a file). Its exit report follows
    once it is done."""
    actor = _LIVE.get(urn)
    return actor is not None and not actor._exited


def end_drills(urn: str) -> None:
    """End a hang drill the relay actor ``urn`` is in, so that stopping it is not held by
    one: called before a supervisor stops a child on purpose (the relay stopping, a subtree
    removed), never when it gives up on a hung child (that is what the drill rehearses)."""
    actor = _LIVE.get(urn)
    if actor is not None:
        actor._drill_over.set()


def release_abandoned(ref: pykka.ActorRef[Any]) -> None:
    """Fail the calls the actor behind ``ref`` was answering (:meth:`RelayActor.let_callers_go`)
    and run its :meth:`RelayActor.abandoned`, if it is a relay actor.

    Raises:
        Exception: whatever the actor's hook raised.
    """
    actor = _LIVE.get(ref.actor_urn)
    if actor is not None:
        actor.let_callers_go()
        actor.abandoned()


@dataclass(slots=True)
class _Current:
    ref: pykka.ActorRef[Any] | None
    proxy: Any


class Reply(concurrent.futures.Future[R]):
    """The answer of :meth:`ChildHandle.ask`, completed by the actor from its thread.

    A ``concurrent.futures.Future``: a thread waits with ``result(timeout)``, the event loop
    with ``asyncio.wrap_future`` (see ``transport.shell.bridge``) without parking its thread.
    """

    def __init__(self, actor: str) -> None:
        super().__init__()
        self.actor = actor
        """The name of the actor asked (for the message of a timeout)."""


class ChildHandle(Generic[A]):
    """The stable address of a supervised child, whatever incarnation is running.

    Only the supervisor writes it (:meth:`bind`, the counters); any thread may read it.
    Each write replaces one immutable pair or one int, so readers see a consistent value.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._current = _Current(ref=None, proxy=None)
        self.restarts = 0
        """How many times the supervisor started a new incarnation after the first."""
        self.last_restart_ms: int | None = None
        self.last_exit: tuple[int, str] | None = None
        """When the newest incarnation that ended unasked ended (the clock's milliseconds), and
        why: what killed it, as :func:`~actors.kernel.scrubber.error_text` puts it, or a hang."""
        self.state: ChildState = "stopped"
        """``running``, ``backoff`` (waiting to be restarted) or ``stopped``."""

    def bind(self, ref: pykka.ActorRef[Any] | None) -> None:
        """Point the handle at ``ref`` (supervisor only)."""
        proxy = None
        if ref is not None:
            try:
                proxy = ref.proxy()
            except pykka.ActorDeadError:
                proxy = None
        self._current = _Current(ref=ref, proxy=proxy)

    @property
    def ref(self) -> pykka.ActorRef[Any] | None:
        """The current incarnation's ref (may be dead); do not keep it."""
        return self._current.ref

    @property
    def alive(self) -> bool:
        """Whether the current incarnation is running."""
        ref = self._current.ref
        return ref is not None and ref.is_alive()

    def proxy(self) -> Any:
        """A Pykka proxy of the current incarnation: for tests and a debugging console. The
        relay's own code sends with :meth:`tell` and :meth:`ask`, which mypy checks.

        Raises:
            ActorUnavailable: no incarnation is running.
        """
        current = self._current
        if current.proxy is None or current.ref is None or not current.ref.is_alive():
            raise ActorUnavailable(f"actor {self.name} is not running")
        return current.proxy

    def send(self, message: object) -> None:
        """Send a message object the actor handles in ``on_receive``, without waiting.

        Raises:
            ActorUnavailable: no incarnation is running.
        """
        ref = self._current.ref
        if ref is None:
            raise ActorUnavailable(f"actor {self.name} is not running")
        try:
            ref.tell(message)
        except pykka.ActorDeadError as exc:
            raise ActorUnavailable(f"actor {self.name} is not running") from exc

    def tell(
        self, method: Callable[Concatenate[A, P], object], /, *args: P.args, **kwargs: P.kwargs
    ) -> None:
        """Run ``method`` (the actor class's own) on the actor without waiting.

        An error in it kills the incarnation, and its supervisor restarts it.

        Raises:
            ActorUnavailable: no incarnation is running.
        """
        self.send(ProxyCall(attr_path=(method.__name__,), args=args, kwargs=kwargs))

    def ask(
        self, method: Callable[Concatenate[A, P], R], /, *args: P.args, **kwargs: P.kwargs
    ) -> Reply[R]:
        """Run ``method`` (the actor class's own) on the actor; its answer, or its error,
        arrives in the returned :class:`Reply`. An error goes to the asker; the actor lives on.

        Raises:
            ActorUnavailable: no incarnation is running.
        """
        reply: Reply[R] = Reply(self.name)
        call = Call(method.__name__, args, kwargs, reply, CURRENT_REQUEST.get())
        self.send(call)
        return reply
