"""A supervisor for Pykka actors, modelled on OTP's ``one_for_one``.

Pykka has no supervision; this module is ours. A :class:`Supervisor` starts its children in
order (each confirmed alive with a ping before the next), notices a dead child at once (the
child reports its own death, and a poll on the injected clock catches the rest), starts a new
incarnation after a backoff delay and points the child's :class:`ChildHandle` at it. More than
``max_restarts`` restarts within ``period_s`` seconds escalate: the supervisor stops its
children and dies, and its own supervisor (or, for the root, ``run.py``) takes over.
Stopping is in reverse order, each child bounded by its shutdown timeout; a child that does
not stop in time is abandoned (its daemon thread is left behind).
"""

from __future__ import annotations

import contextlib
import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pykka
import structlog
from pykka.messages import ProxyCall

from actors.common.backoff import backoff
from actors.kernel.base import (
    NORMAL_EXIT,
    ChildExited,
    ChildHandle,
    RelayActor,
    Reporter,
    end_drills,
    release_abandoned,
    still_exiting,
)
from actors.kernel.clock import Cancel, Clock
from actors.kernel.scrubber import error_text

_log = structlog.get_logger("relay").bind(actor="supervisor")

RestartType = Literal["permanent", "transient", "temporary"]
"""OTP's restart types: ``permanent`` always restarts, ``transient`` only after a failure
(not after a ``normal`` stop), ``temporary`` never."""


@dataclass(frozen=True, slots=True)
class Backoff:
    """Delay before restarting a child that keeps dying (Pekko's ``calculateDelay``).

    The first restart after a healthy run is immediate; the n-th in a row (n >= 2) waits
    :func:`~actors.common.backoff.backoff` of step ``n - 2``: ``min_s`` doubled each time up to
    ``max_s``, stretched by up to ``random_factor`` at random. The count resets once the child
    has run ``reset_after_s`` without dying.
    """

    min_s: float = 0.0
    max_s: float = 0.0
    random_factor: float = 0.0
    reset_after_s: float = 30.0

    def delay(self, consecutive: int, rng: Callable[[], float] = random.random) -> float:
        """Seconds to wait before restart number ``consecutive`` (1-based) of a crash run."""
        if consecutive <= 1 or self.max_s <= 0:
            return 0.0
        return backoff(
            consecutive - 2, base=self.min_s, cap=self.max_s, jitter=self.random_factor, rng=rng
        )


IMMEDIATE = Backoff()
"""In-process buffers: restart at once, every time."""


@dataclass(frozen=True, slots=True)
class ChildSpec:
    """How to start one child and what to do when it dies."""

    name: str
    start: Callable[[Reporter], pykka.ActorRef[Any]]
    """Starts a new incarnation; the reporter is how it announces its death."""
    handle: ChildHandle[Any]
    restart: RestartType = "permanent"
    backoff: Backoff = IMMEDIATE
    shutdown_timeout_s: float = 5.0
    ping_timeout_s: float | None = None
    """A child that leaves a ping unanswered this long is hung: it is abandoned and replaced.
    Must exceed the longest call the child may legitimately be busy with."""


PING_GRACE_S = 0.5
"""Real time a ping past its deadline is still given before its child counts as hung. A
process that was paused (Ctrl-Z, a debugger, a suspended machine) or a clock run ahead in a
test finds every ping old at once; a healthy child answers within this."""


@dataclass(frozen=True, slots=True)
class _Poll:
    """Time to look for children that died without reporting it."""


@dataclass(frozen=True, slots=True)
class _Restart:
    name: str


@dataclass(slots=True)
class _ChildState:
    spec: ChildSpec
    consecutive: int = 0
    """Restarts in the current crash run (reset after a healthy spell)."""
    started_at: float = 0.0
    pending: Cancel | None = None
    ping: pykka.Future[Any] | None = None
    ping_sent_at: float = 0.0
    dead_since: float | None = None
    """When the poll first found the current incarnation dead while it still cleaned up."""


@dataclass(frozen=True, slots=True)
class Intensity:
    """At most ``max_restarts`` restarts in ``period_s`` seconds, then escalate."""

    max_restarts: int = 10
    period_s: float = 30.0


class Supervisor(RelayActor):
    """Starts, watches and restarts its children (one_for_one)."""

    def __init__(
        self,
        *,
        name: str,
        children: Sequence[ChildSpec],
        clock: Clock,
        report: Reporter | None = None,
        intensity: Intensity = Intensity(),
        poll_interval_s: float = 0.5,
        start_timeout_s: float = 5.0,
    ) -> None:
        self.name = name  # type: ignore[misc]  # the class default is only a placeholder
        super().__init__(report=report)
        self._clock = clock
        self._children = {spec.name: _ChildState(spec=spec) for spec in children}
        self._order = [spec.name for spec in children]
        self._intensity = intensity
        self._restart_times: deque[float] = deque()
        self._poll_interval_s = poll_interval_s
        self._start_timeout_s = start_timeout_s
        self._poll_timer: Cancel | None = None
        self._closing = False

    # -- lifecycle ---------------------------------------------------------------------------

    def started(self) -> None:
        """Start every child in order; any that does not answer a ping fails the start."""
        for name in self._order:
            self._start_confirmed(self._children[name])
        self._schedule_poll()
        self._log.info("supervisor.started", children=self._order)

    def start_child(self, spec: ChildSpec) -> None:
        """Add a child after the others and start it, as :meth:`started` starts the first
        ones (OTP's ``start_child``): a tree can be started subtree by subtree. A child that
        fails its start is not kept.

        Raises:
            RuntimeError: the child did not answer a ping (it failed its start).
            ValueError: a child of that name is already here.
        """
        if spec.name in self._children or self._closing:
            msg = f"supervisor {self.name} cannot add child {spec.name}"
            raise ValueError(msg)
        state = _ChildState(spec=spec)
        self._children[spec.name] = state
        self._order.append(spec.name)
        try:
            self._start_confirmed(state)
        except RuntimeError:
            self._forget(spec.name)
            spec.handle.state = "stopped"
            raise
        self._log.info("supervisor.child_started", child=spec.name)

    def stop_child(self, name: str) -> None:
        """Stop a child and forget it (OTP's ``terminate_child`` and ``delete_child``),
        bounded by its shutdown timeout; a name not here (never started, or already stopped)
        is nothing to do."""
        state = self._children.get(name)
        if state is None:
            return
        self._forget(name)
        if state.pending is not None:
            state.pending()
        self._stop_child(state)

    def children(self) -> tuple[ChildHandle[Any], ...]:
        """Each child's handle, in start order: what a picture of the running tree is drawn
        from."""
        return tuple(self._children[name].spec.handle for name in self._order)

    def stopped(self) -> None:
        """Stop the children in reverse order (also after this supervisor crashed)."""
        self._closing = True
        if self._poll_timer is not None:
            self._poll_timer()
        for name in reversed(self._order):
            state = self._children[name]
            if state.pending is not None:
                state.pending()
            self._stop_child(state)

    def _stop_child(self, state: _ChildState) -> None:
        spec = state.spec
        ref = spec.handle.ref
        spec.handle.state = "stopped"
        if ref is None:
            return
        end_drills(ref.actor_urn)
        try:
            ref.stop(block=True, timeout=spec.shutdown_timeout_s)
        except pykka.Timeout:
            abandon(ref)
            self._log.error(
                "supervisor.child_abandoned",
                child=spec.name,
                reason="shutdown timeout",
                timeout_s=spec.shutdown_timeout_s,
            )
        except pykka.ActorDeadError:
            pass

    # -- messages ----------------------------------------------------------------------------

    def on_receive(self, message: Any) -> Any:
        """Handle child exits, polls and scheduled restarts."""
        if isinstance(message, ChildExited):
            self._on_exit(message.name, message.urn, message.reason)
            return None
        if isinstance(message, _Poll):
            self._poll()
            return None
        if isinstance(message, _Restart):
            self._restart(message.name)
            return None
        return super().on_receive(message)

    # -- internals ---------------------------------------------------------------------------

    def _reporter(self, child: str) -> Reporter:
        ref = self.actor_ref

        def report(exited: ChildExited) -> None:
            ref.tell(ChildExited(name=child, urn=exited.urn, reason=exited.reason))

        return report

    def _start_confirmed(self, state: _ChildState) -> None:
        """Start a child and wait for its answer to a ping: a start that failed is an error."""
        ref = self._spawn(state)
        try:
            ref.proxy().ping().get(timeout=self._start_timeout_s)
        except (pykka.ActorDeadError, pykka.Timeout) as exc:
            msg = f"child {state.spec.name} failed to start: {error_text(exc)}"
            raise RuntimeError(msg) from exc

    def _forget(self, name: str) -> None:
        del self._children[name]
        self._order.remove(name)

    def _spawn(self, state: _ChildState) -> pykka.ActorRef[Any]:
        spec = state.spec
        ref = spec.start(self._reporter(spec.name))
        spec.handle.bind(ref)
        spec.handle.state = "running"
        state.started_at = self._clock.monotonic()
        state.dead_since = None
        return ref

    def _schedule_poll(self) -> None:
        ref = self.actor_ref
        self._poll_timer = self._clock.call_later(
            self._poll_interval_s, lambda: _tell(ref, _Poll())
        )

    def _poll(self) -> None:
        if self._closing:
            return
        now = self._clock.monotonic()
        for name, state in self._children.items():
            handle = state.spec.handle
            ref = handle.ref
            if handle.state != "running" or ref is None:
                continue
            if not ref.is_alive():
                self._found_dead(name, state, ref.actor_urn, now)
            elif state.spec.ping_timeout_s is not None:
                self._check_ping(name, state, ref, now)
        self._schedule_poll()

    def _found_dead(self, name: str, state: _ChildState, urn: str, now: float) -> None:
        """A child the poll finds dead is restarted once it has cleaned up (its exit report
        then restarts it anyway), or once it has taken longer than its shutdown timeout."""
        if still_exiting(urn):
            state.dead_since = state.dead_since if state.dead_since is not None else now
            if now - state.dead_since < state.spec.shutdown_timeout_s:
                return
        state.dead_since = None
        self._on_exit(name, urn, "found dead by poll")

    def _check_ping(
        self, name: str, state: _ChildState, ref: pykka.ActorRef[Any], now: float
    ) -> None:
        """Send a ping if none is out; a ping out for longer than the deadline means a hang."""
        if state.ping is None:
            try:
                state.ping = ref.ask(PING, block=False)
            except pykka.ActorDeadError:
                return  # the next poll restarts it
            state.ping_sent_at = now
            return
        waited = now - state.ping_sent_at
        deadline = state.spec.ping_timeout_s
        late = deadline is not None and waited > deadline
        try:
            state.ping.get(timeout=PING_GRACE_S if late else 0)
        except pykka.Timeout:
            if late:
                state.ping = None
                abandon(ref)
                self._log.error(
                    "supervisor.child_abandoned",
                    child=name,
                    reason="hung",
                    waited_s=round(waited, 3),
                    deadline_s=deadline,
                )
                self._on_exit(name, ref.actor_urn, f"hung: no answer to a ping in {waited:.1f} s")
            return
        except Exception:  # an answer, even an error or a death, is not a hang
            state.ping = None
            return
        state.ping = None

    def _on_exit(self, name: str, urn: str, reason: str) -> None:
        state = self._children.get(name)
        if state is None or self._closing:
            return
        handle = state.spec.handle
        if handle.ref is None or handle.ref.actor_urn != urn or handle.state != "running":
            return  # an older incarnation, or already being restarted
        if reason != NORMAL_EXIT:
            handle.last_exit = (self._clock.now_ms(), reason)
        if state.spec.restart == "temporary" or (
            state.spec.restart == "transient" and reason == NORMAL_EXIT
        ):
            handle.state = "stopped"
            self._log.info("supervisor.child_exited", child=name, reason=reason, restarted=False)
            return

        now = self._clock.monotonic()
        if now - state.started_at >= state.spec.backoff.reset_after_s:
            state.consecutive = 0
        state.consecutive += 1
        self._restart_times.append(now)
        while self._restart_times and now - self._restart_times[0] > self._intensity.period_s:
            self._restart_times.popleft()
        if len(self._restart_times) > self._intensity.max_restarts:
            self._log.error(
                "supervisor.escalate",
                child=name,
                reason=reason,
                restarts=len(self._restart_times),
                period_s=self._intensity.period_s,
            )
            msg = f"restart intensity exceeded by child {name}"
            raise RuntimeError(msg)

        delay = state.spec.backoff.delay(state.consecutive)
        handle.state = "backoff"
        state.ping = None
        self._log.warning(
            "supervisor.child_died",
            child=name,
            reason=reason,
            attempt=state.consecutive,
            restart_in_s=round(delay, 3),
        )
        if delay <= 0:
            self._restart(name)
        else:
            ref = self.actor_ref
            state.pending = self._clock.call_later(delay, lambda: _tell(ref, _Restart(name)))

    def _restart(self, name: str) -> None:
        state = self._children[name]
        state.pending = None
        if self._closing:
            return
        handle = state.spec.handle
        try:
            self._spawn(state)
        except Exception as exc:  # a failing start is retried by the next poll, never in a loop
            handle.state = "running"  # the poll sees it dead and counts another restart
            self._log.error("supervisor.restart_failed", child=name, error=error_text(exc))
            return
        handle.restarts += 1
        handle.last_restart_ms = self._clock.now_ms()
        self._log.warning("supervisor.child_restarted", child=name, attempt=state.consecutive)


PING = ProxyCall(attr_path=("ping",), args=(), kwargs={})


def abandon(ref: pykka.ActorRef[Any]) -> None:
    """Give up on a hung actor: it is unregistered and, should its thread ever come back, it
    stops without handling another message (Python cannot kill the thread itself). What it
    holds that its successor will take again (a capture's process) is released now, by its
    :meth:`~actors.kernel.base.RelayActor.abandoned`; a hook that fails is logged, never
    fatal to the supervisor."""
    ref.actor_stopped.set()
    pykka.ActorRegistry.unregister(ref)
    try:
        release_abandoned(ref)
    except Exception as exc:
        _log.error("supervisor.abandon_failed", child=str(ref), error=error_text(exc))


def _tell(ref: pykka.ActorRef[Any], message: Any) -> None:
    with contextlib.suppress(pykka.ActorDeadError):  # a stopped supervisor's timers do nothing
        ref.tell(message)
