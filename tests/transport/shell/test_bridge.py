"""Asking an actor from the event loop: its answer, or a 503 that means it never ran."""

from __future__ import annotations

import asyncio
import threading

import pytest

from actors.core.errors import ActorUnavailable
from actors.kernel.clock import FakeClock
from tests.support.actor_calls import Held, held
from transport.shell.bridge import Asker


def test_an_actor_that_does_not_begin_in_time_never_runs_the_call(clock: FakeClock) -> None:
    begun, release = threading.Event(), threading.Event()
    handle = held(clock, begun, release)
    handle.tell(Held.double, 1)  # holds the actor: the next call waits in its mailbox

    async def go() -> None:
        await Asker(0.05)(handle, Held.double, 2)

    try:
        assert begun.wait(5)
        with pytest.raises(ActorUnavailable, match=r"did not answer within 0\.05 s"):
            asyncio.run(go())
    finally:
        release.set()
    assert handle.ask(Held.double, 3).result(timeout=5) == 6
    assert handle.proxy().done.get(timeout=5) == [1, 3]


def test_a_call_the_actor_has_begun_is_answered_with_its_result_not_a_503(
    clock: FakeClock,
) -> None:
    begun, release = threading.Event(), threading.Event()
    handle = held(clock, begun, release)
    timeout_s = 0.05

    async def go() -> int:
        asked = asyncio.ensure_future(Asker(timeout_s)(handle, Held.double, 21))
        assert await asyncio.to_thread(begun.wait, 5)
        await asyncio.sleep(timeout_s)  # the ask's timeout, due earlier, has passed
        assert not asked.done()
        release.set()
        return await asyncio.wait_for(asked, 5)

    try:
        assert asyncio.run(go()) == 42
    finally:
        release.set()
