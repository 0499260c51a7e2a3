"""Asking actors from the event loop without parking the loop's thread."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from actors.core.errors import ActorUnavailable
from actors.kernel.base import ChildHandle, RelayActor

A = TypeVar("A", bound=RelayActor)
P = ParamSpec("P")
R = TypeVar("R")


class Asker:
    """Asks an actor from the event loop, and awaits its answer for at most ``timeout_s``
    (``RELAY_ACTOR_TIMEOUT_MS``).

    ``await ask(peers.digest, DigestStore.stats)``: the method is the actor class's own, so
    mypy checks its arguments and its result. The actor completes the reply from its thread;
    ``asyncio.wrap_future`` hands it to the loop with ``call_soon_threadsafe``.
    """

    __slots__ = ("timeout_s",)

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s

    async def __call__(
        self,
        handle: ChildHandle[A],
        method: Callable[Concatenate[A, P], R],
        /,
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        """``method(*args, **kwargs)``'s answer.

        Raises:
            ActorUnavailable: the actor is down, or did not answer within the timeout.
            Exception: whatever the actor's method raised.
        """
        reply = handle.ask(method, *args, **kwargs)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(reply), self.timeout_s)
        except TimeoutError:
            msg = f"actor {handle.name} did not answer within {self.timeout_s:g} s"
            raise ActorUnavailable(msg) from None
