"""Coalescing on the transport's side: one actor call for all posts of a loop iteration.

Crossing from the event loop into an actor's thread and back costs tens of microseconds and a
GIL hand-off, far more than storing one item. A :class:`Batcher` gathers the items that
handlers submit during one iteration of the loop and sends them as one ``append_many`` call:
one crossing, one commit, whatever the concurrency. The owning actor still gives the ids and
stores the items, in arrival order; each handler gets its own result, or the batch's error.

A 503 means the batch was never stored. When the timeout passes before the actor has begun
the batch, it is cancelled, and the actor skips it; once the actor has begun it, its callers
wait for its answer (as :class:`transport.shell.bridge.Asker` does).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from actors.core.errors import ActorUnavailable
from actors.kernel.base import ChildHandle, RelayActor

A = TypeVar("A", bound=RelayActor)
T = TypeVar("T")
R = TypeVar("R")

MAX_BATCH = 256
"""Items in one call at most; a larger burst goes in several calls."""


class Batcher(Generic[A, T, R]):
    """Submit items to ``handle``'s ``method(items) -> results``; call it from the loop only."""

    def __init__(
        self,
        handle: ChildHandle[A],
        method: Callable[[A, tuple[T, ...]], tuple[R, ...]],
        timeout_s: float,
    ) -> None:
        self._handle = handle
        self._method = method
        self._timeout_s = timeout_s
        self._pending: list[tuple[T, asyncio.Future[R]]] = []
        self._scheduled = False

    def submit(self, item: T) -> asyncio.Future[R]:
        """A future of the actor's result for ``item``; await it on the loop.

        A plain method, not a coroutine: the handler awaits the future itself, so resuming a
        handler after the commit goes through one frame fewer.

        Raises (from the future):
            ActorUnavailable: the actor is down, failed the batch, or did not begin it in time
                (it is then never stored).
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[R] = loop.create_future()
        self._pending.append((item, future))
        if len(self._pending) >= MAX_BATCH:
            self._flush()
        elif not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._flush)
        return future

    def _flush(self) -> None:
        self._scheduled = False
        batch, self._pending = self._pending, []
        if not batch:
            return
        loop = asyncio.get_running_loop()
        try:
            reply = self._handle.ask(self._method, tuple(item for item, _ in batch))
        except ActorUnavailable as exc:
            _settle(batch, error=exc)
            return
        # No task, wrap_future or wait_for per batch: one timer, and one callback that the
        # actor's thread hands to the loop. This runs once per burst on the loop's thread,
        # which is the relay's busiest.
        timer = loop.call_later(self._timeout_s, self._expire, reply, batch)

        def answered(done: concurrent.futures.Future[Any]) -> None:  # on the actor's thread
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
                loop.call_soon_threadsafe(_answered, done, batch, timer)

        reply.add_done_callback(answered)

    def _expire(self, reply: concurrent.futures.Future[Any], batch: _Batch) -> None:
        if not reply.cancel():  # begun: the actor answers once the batch is stored (or failed)
            return
        # Not begun: the actor skips it when it gets to it, so the 503 says nothing was stored.
        message = f"actor {self._handle.name} did not answer within {self._timeout_s:g} s"
        _settle(batch, error=ActorUnavailable(message))


_Batch = Sequence[tuple[Any, "asyncio.Future[Any]"]]


def _answered(
    reply: concurrent.futures.Future[Any], batch: _Batch, timer: asyncio.TimerHandle
) -> None:
    timer.cancel()
    if reply.cancelled():
        return  # expired: the callers already have their error
    error = reply.exception()
    if error is not None:
        _settle(batch, error=error)
    else:
        _settle(batch, results=reply.result())


def _settle(
    batch: _Batch, *, results: Sequence[Any] | None = None, error: BaseException | None = None
) -> None:
    """Give each caller its result, or the batch's error (callers that left are skipped)."""
    for n, (_, future) in enumerate(batch):
        if future.done():
            continue
        if results is not None:
            future.set_result(results[n])
        else:
            future.set_exception(error or ActorUnavailable("no answer"))
