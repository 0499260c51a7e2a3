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

    A 503 means the call never ran. At the timeout the reply is cancelled: an actor that has
    not begun the call skips it when it gets to it (it claims each call first,
    :meth:`~actors.kernel.base.RelayActor.on_receive`). An actor that has begun it (a write
    held for its commit, a long batch) will finish it, so its answer is awaited instead: a
    client told 503 that retries would otherwise store its post twice. Should its supervisor
    abandon the actor as hung meanwhile, the call fails then and nothing of it is stored.
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
            ActorUnavailable: the actor is down, did not begin the call within the timeout,
                or was abandoned as hung while it ran it; the call is not stored.
            Exception: whatever the actor's method raised.
        """
        reply = handle.ask(method, *args, **kwargs)
        answer = asyncio.wrap_future(reply)
        try:
            return await asyncio.wait_for(asyncio.shield(answer), self.timeout_s)
        except TimeoutError:
            if reply.cancel():  # not begun: the actor skips it, and the 503 is true
                msg = f"actor {handle.name} did not answer within {self.timeout_s:g} s"
                raise ActorUnavailable(msg) from None
        except asyncio.CancelledError:  # the caller left: a call not begun never runs
            reply.cancel()
            raise
        return await answer  # begun: the actor answers once it is done (or it is abandoned)
