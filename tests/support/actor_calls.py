"""What a test asks a relay's actors, answers waited for: the buffers' writes published, a
tick run by hand, the digest store's newest entry, the agent's schedule moved on by an injected
clock; and :class:`Held`, an actor whose calls wait until the test releases them."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

import msgspec

from actors.agent.core.completion import Analysis
from actors.agent.core.ticks import LLMAttempt, TickResult
from actors.agent.digest_store import DigestStore
from actors.agent.ticker import Ticker
from actors.core.window import build_context_window
from actors.ingest.feed_buffer import FeedBuffer
from actors.ingest.sense_buffer import SenseBuffer
from actors.kernel.base import ChildHandle, RelayActor, Reporter
from actors.kernel.clock import FakeClock
from actors.kernel.supervisor import ChildSpec, Supervisor
from actors.tree import Relay
from tests.support.observe import LogSink, wait_until
from tests.support.posts import TRANSCRIPT, sense

Act = TypeVar("Act", bound=RelayActor)
Params = ParamSpec("Params")
Result = TypeVar("Result")


def asked(
    handle: ChildHandle[Act],
    method: Callable[Concatenate[Act, Params], Result],
    /,
    *args: Params.args,
    **kwargs: Params.kwargs,
) -> Result:
    """``handle.ask(method, ...)``, its answer waited for; for a buffer, also wait until what
    it wrote is published.

    Ticks read what the buffers published after their commits. An ask's answer is already
    held until the commit that publishes it
    (:meth:`~actors.kernel.durable.DurableActor._deliver`); the ping, which queues behind that
    commit, keeps the wait explicit should a write ever answer before it.
    """
    result = handle.ask(method, *args, **kwargs).result(timeout=5)
    if handle.name in ("feed", "sense"):
        handle.ask(RelayActor.ping).result(timeout=5)
    return result


def last_entry(relay: Relay) -> dict[str, Any]:
    """The digest store's newest entry (``/agent/last``'s ``result``); fails if there is none."""
    last = asked(relay.handles["digest"], DigestStore.last)
    assert last is not None, "the digest store has no entry yet"
    shown: dict[str, Any] = msgspec.to_builtins(last)
    return shown


def answered_tick(model: str, *, cost: float | None = None, fallback: bool = False) -> TickResult:
    """A tick that ``model`` answered (after a failed request to another model), as the LLM
    caller hands it to the digest store: 1,000 tokens in, 100 out."""
    return TickResult(
        tick_id=1,
        analysis=Analysis(hud="h", digest="d", parsed_ok=True),
        window=build_context_window([], [], now_ms=0, max_age_ms=1),
        model=model,
        latency_ms=1,
        tokens_in=1_000,
        tokens_out=100,
        push_to_feed=False,
        cost_usd=cost,
        fallback=fallback,
        attempts=(LLMAttempt("first", 2.0, ok=False), LLMAttempt(model, 0.4, ok=True)),
    )


def tick(relay: Relay, logs: LogSink, clock: FakeClock | None = None) -> str:
    """Run one tick by hand and return its outcome (``inactive``/``busy`` if none ran). An
    ``ok`` tick's entry is recorded by then (stamped with the clock's time before the test
    moves it on): the LLM caller tells the digest store before the ticker. With ``clock``,
    the clock is moved past each retry the tick's chain schedules (a 429, a 5xx)."""
    before, retries = len(logs.named("tick")), len(logs.named("llm.retry"))

    def moved_on(seen: int) -> bool:
        ended = len(logs.named("tick")) > before
        return ended or (clock is not None and len(logs.named("llm.retry")) > seen)

    started = asked(relay.handles["ticker"], Ticker.tick)
    if started != "started":
        return str(started)
    while True:
        wait_until(functools.partial(moved_on, retries), what="the tick to finish")
        if len(logs.named("tick")) > before:
            break
        assert clock is not None  # only a clock's test waits for a retry
        clock.advance(logs.named("llm.retry")[retries]["in_s"] + 0.01)
        retries += 1
    outcome = str(logs.named("tick")[-1]["outcome"])
    if outcome == "ok":
        asked(relay.handles["digest"], DigestStore.stats)  # queued behind the record
    return outcome


def restarted(handle: ChildHandle[Any], count: int) -> bool:
    """Whether the child behind ``handle`` was restarted ``count`` times and is up again."""
    return bool(handle.restarts == count and handle.alive)


class Held(RelayActor):
    """An actor whose calls begin, then wait until the test releases them: a call the actor
    has taken and not yet answered (a slow commit, a long batch)."""

    name = "held"

    def __init__(
        self, *, begun: threading.Event, release: threading.Event, report: Reporter | None = None
    ) -> None:
        super().__init__(report=report)
        self._begun = begun
        self._release = release
        self.done: list[int] = []

    def double(self, n: int) -> int:
        self._begun.set()
        self._release.wait(10)
        self.done.append(n)
        return 2 * n

    def append_many(self, items: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(self.double(n) for n in items)


def held(clock: FakeClock, begun: threading.Event, release: threading.Event) -> ChildHandle[Held]:
    """A supervised :class:`Held` actor, started (stopped by the ``_stop_all_actors`` fixture)."""
    handle: ChildHandle[Held] = ChildHandle("held")
    spec = ChildSpec("held", lambda r: Held.start(begun=begun, release=release, report=r), handle)
    Supervisor.start(name="t", children=[spec], clock=clock).proxy().ping().get(timeout=5)
    return handle


# -- the agent's schedule ------------------------------------------------------------------------


def ticker_status(relay: Relay) -> dict[str, Any]:
    """The Ticker's status, answered after every message already in its mailbox."""
    return asked(relay.handles["ticker"], Ticker.status)


def show(relay: Relay, ocr: str = "def tick():", app: str = "code") -> None:
    """A screen event, stored, published and seen by the Ticker."""
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr=ocr, app=app))
    ticker_status(relay)


def hear(relay: Relay) -> None:
    """A transcript, stored, published and seen by the Ticker."""
    asked(relay.handles["feed"], FeedBuffer.append, TRANSCRIPT, "normal")
    ticker_status(relay)


def advance(relay: Relay, clock: FakeClock, seconds: float) -> dict[str, Any]:
    """Move the clock; return the Ticker's status once it has handled what came due."""
    clock.advance(seconds)
    return ticker_status(relay)


def settled(relay: Relay, logs: LogSink, ticks: int) -> list[dict[str, Any]]:
    """Wait until ``ticks`` ticks have ended and the tick slot is free; their log lines."""
    wait_until(lambda: len(logs.named("tick")) >= ticks, what=f"{ticks} tick(s) to end")
    wait_until(lambda: not ticker_status(relay)["inFlight"], what="the tick slot to free")
    return logs.named("tick")
