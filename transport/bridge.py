"""Asking an actor from the event loop without parking the loop's thread."""

from __future__ import annotations

import asyncio
from typing import Any

from actors.core.errors import ActorUnavailable
from actors.kernel.base import ChildHandle


async def ask(
    handle: ChildHandle, method: str, *args: Any, timeout_s: float, request_id: str | None = None
) -> Any:
    """Run ``method(*args)`` on the actor behind ``handle`` and await its answer.

    The reply travels in a ``concurrent.futures.Future`` that the actor completes from its
    thread; ``asyncio.wrap_future`` hands it to the loop with ``call_soon_threadsafe``.

    Raises:
        ActorUnavailable: the actor is down or did not answer within ``timeout_s``.
    """
    reply = handle.call(method, *args, request_id=request_id)
    try:
        return await asyncio.wait_for(asyncio.wrap_future(reply), timeout_s)
    except TimeoutError:
        msg = f"actor {handle.name} did not answer within {timeout_s:g} s"
        raise ActorUnavailable(msg) from None
