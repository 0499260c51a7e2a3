"""Coalescing on the transport's side: one actor call for all posts of a loop iteration.

Crossing from the event loop into an actor's thread and back costs tens of microseconds and a
GIL hand-off, far more than storing one item. A :class:`Batcher` gathers the items that
handlers submit during one iteration of the loop and sends them as one ``append_many`` call:
one crossing, one commit, whatever the concurrency. The owning actor still gives the ids and
stores the items, in arrival order; each handler gets its own result, or the batch's error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from actors.base import ChildHandle
from actors.errors import ActorUnavailable

MAX_BATCH = 256
"""Items in one call at most; a larger burst goes in several calls."""


class Batcher:
    """Submit items to ``handle``'s ``method(items) -> results``; call it from the loop only."""

    def __init__(self, handle: ChildHandle, method: str, timeout_s: float) -> None:
        self._handle = handle
        self._method = method
        self._timeout_s = timeout_s
        self._pending: list[tuple[Any, asyncio.Future[Any]]] = []
        self._scheduled = False

    async def submit(self, item: Any) -> Any:
        """The actor's result for ``item``.

        Raises:
            ActorUnavailable: the actor is down, failed the batch, or did not answer in time.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((item, future))
        if len(self._pending) >= MAX_BATCH:
            self._flush()
        elif not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        self._scheduled = False
        batch, self._pending = self._pending, []
        if batch:
            asyncio.get_running_loop().create_task(self._send(batch))

    async def _send(self, batch: Sequence[tuple[Any, asyncio.Future[Any]]]) -> None:
        items = tuple(item for item, _ in batch)
        try:
            reply = self._handle.call(self._method, items)
            results = await asyncio.wait_for(asyncio.wrap_future(reply), self._timeout_s)
        except TimeoutError:
            error: Exception = ActorUnavailable(
                f"actor {self._handle.name} did not answer within {self._timeout_s:g} s"
            )
        except Exception as exc:  # the batch's callers get the error; the loop goes on
            error = exc
        else:
            for (_, future), result in zip(batch, results, strict=True):
                if not future.done():
                    future.set_result(result)
            return
        for _, future in batch:
            if not future.done():
                future.set_exception(error)
