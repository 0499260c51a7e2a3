"""The transport's coalescing: one actor call for many posts, each caller its own answer."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from actors.core.errors import ActorUnavailable
from actors.kernel.base import ChildHandle, RelayActor, Reporter
from actors.kernel.clock import FakeClock
from actors.kernel.supervisor import ChildSpec, Supervisor
from actors.tree import Relay
from tests.support.actor_calls import Held, held
from transport.shell.batching import MAX_BATCH, Batcher


class Doubler(RelayActor):
    """Answers each item doubled, and records the size of each call."""

    name = "doubler"

    def __init__(self, *, calls: list[int], report: Reporter | None = None) -> None:
        super().__init__(report=report)
        self._calls = calls

    def append_many(self, items: tuple[int, ...]) -> tuple[int, ...]:
        self._calls.append(len(items))
        if -1 in items:
            msg = "bad batch"
            raise ValueError(msg)
        return tuple(2 * n for n in items)

    def block(self, release: threading.Event) -> None:
        release.wait(10)


def doubler(clock: FakeClock, calls: list[int]) -> ChildHandle[Doubler]:
    handle: ChildHandle[Doubler] = ChildHandle("doubler")
    spec = ChildSpec("doubler", lambda r: Doubler.start(calls=calls, report=r), handle)
    Supervisor.start(name="t", children=[spec], clock=clock).proxy().ping().get(timeout=5)
    return handle


def test_submissions_of_one_loop_iteration_share_one_call(clock: FakeClock) -> None:
    calls: list[int] = []
    handle = doubler(clock, calls)

    async def go() -> list[Any]:
        batcher = Batcher(handle, Doubler.append_many, timeout_s=5)
        return await asyncio.gather(*(batcher.submit(n) for n in range(100)))

    assert asyncio.run(go()) == [2 * n for n in range(100)]
    assert calls == [100]


def test_a_burst_larger_than_the_batch_is_split(clock: FakeClock) -> None:
    calls: list[int] = []
    handle = doubler(clock, calls)

    async def go() -> list[Any]:
        batcher = Batcher(handle, Doubler.append_many, timeout_s=5)
        return await asyncio.gather(*(batcher.submit(n) for n in range(MAX_BATCH + 5)))

    assert asyncio.run(go()) == [2 * n for n in range(MAX_BATCH + 5)]
    assert calls == [MAX_BATCH, 5]


def test_a_failed_batch_fails_each_of_its_callers_and_only_them(clock: FakeClock) -> None:
    calls: list[int] = []
    handle = doubler(clock, calls)

    async def go() -> tuple[list[Any], int]:
        batcher = Batcher(handle, Doubler.append_many, timeout_s=5)
        failed = await asyncio.gather(
            *(batcher.submit(n) for n in (1, -1, 3)), return_exceptions=True
        )
        return failed, await batcher.submit(4)

    failed, later = asyncio.run(go())
    assert all(isinstance(e, ValueError) for e in failed)
    assert later == 8


def test_an_actor_that_does_not_answer_fails_the_batch_in_time(clock: FakeClock) -> None:
    handle = doubler(clock, [])
    release = threading.Event()
    handle.tell(Doubler.block, release)

    async def go() -> None:
        batcher = Batcher(handle, Doubler.append_many, timeout_s=0.2)
        await asyncio.gather(batcher.submit(1), batcher.submit(2))

    with pytest.raises(ActorUnavailable, match="did not answer"):
        asyncio.run(go())
    release.set()


def test_a_batch_the_actor_has_begun_is_answered_with_its_result_not_a_503(
    clock: FakeClock,
) -> None:
    # An actor that has begun a batch stores it: a 503 then would tell a client that retries
    # to store it twice. Its callers wait for the answer instead.
    begun, release = threading.Event(), threading.Event()
    handle = held(clock, begun, release)
    timeout_s = 0.05

    async def go() -> int:
        batcher = Batcher(handle, Held.append_many, timeout_s=timeout_s)
        answer = batcher.submit(21)
        assert await asyncio.to_thread(begun.wait, 5)
        await asyncio.sleep(timeout_s)  # the batch's timer, due earlier, has fired
        assert not answer.done()
        release.set()
        return await asyncio.wait_for(answer, 5)

    try:
        assert asyncio.run(go()) == 42
    finally:
        release.set()


def test_concurrent_posts_get_distinct_ordered_ids(make_relay: Callable[..., Relay]) -> None:
    relay = make_relay()
    host, port = relay.address()

    async def go() -> list[int]:
        async with httpx.AsyncClient(base_url=f"http://{host}:{port}", timeout=5) as client:
            answers = await asyncio.gather(
                *(client.post("/feed", json={"text": f"m{n}"}) for n in range(60))
            )
        return [a.json()["id"] for a in answers]

    ids = asyncio.run(go())
    assert sorted(ids) == list(range(1, 61))
    texts = {m["id"]: m["text"] for m in httpx.get(f"http://{host}:{port}/feed").json()["messages"]}
    assert len(texts) == 60
