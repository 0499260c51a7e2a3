"""The doorbell: the newest news only, one ring until the actor takes, across restarts."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from actors.kernel.base import ChildHandle, RelayActor
from actors.kernel.doorbell import Doorbell
from tests.support.observe import wait_until


@dataclass(frozen=True, slots=True)
class Rang:
    """The ring these tests use."""


class Reader(RelayActor):
    """Takes the news when rung, and remembers what it took and how often it was rung."""

    name = "reader"

    def __init__(self, bell: Doorbell[int], taken: list[int | None]) -> None:
        super().__init__()
        self._bell = bell
        self.taken = taken

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, Rang):
            self.taken.append(self._bell.take())
            return None
        return super().on_receive(message)

    def hold(self, entered: threading.Event, release: threading.Event) -> None:
        entered.set()
        release.wait(10)


def start_reader(bell: Doorbell[int], handle: ChildHandle[Reader]) -> list[int | None]:
    taken: list[int | None] = []
    handle.bind(Reader.start(bell, taken))
    return taken


def test_a_busy_actor_is_rung_once_and_takes_the_newest_news() -> None:
    handle: ChildHandle[Reader] = ChildHandle("reader")
    bell: Doorbell[int] = Doorbell(handle, Rang())
    taken = start_reader(bell, handle)
    bell.post(1)
    wait_until(lambda: taken == [1], what="the first news taken")

    entered, release = threading.Event(), threading.Event()
    handle.tell(Reader.hold, entered, release)
    assert entered.wait(5)
    for news in range(2, 102):
        bell.post(news)
    assert bell.waiting == 101
    release.set()
    wait_until(lambda: taken == [1, 101], what="the newest news taken")
    handle.ask(Reader.ping).result(timeout=5)
    assert taken == [1, 101], "one ring for the hundred posts"
    assert bell.waiting is None


def test_merge_keeps_what_the_waiting_news_said_first() -> None:
    handle: ChildHandle[Reader] = ChildHandle("reader")  # not running: nobody takes
    bell: Doorbell[tuple[int, int]] = Doorbell(handle, Rang(), merge=lambda w, c: (w[0], c[1]))
    bell.post((1, 1))
    bell.post((2, 2))
    bell.post((3, 3))
    assert bell.take() == (1, 3)
    assert bell.take() is None


def test_news_posted_while_no_incarnation_runs_waits_and_the_next_post_rings() -> None:
    handle: ChildHandle[Reader] = ChildHandle("reader")
    bell: Doorbell[int] = Doorbell(handle, Rang())
    bell.post(1)  # the ring finds nobody: not counted
    assert bell.waiting == 1
    taken = start_reader(bell, handle)
    bell.post(2)
    wait_until(lambda: taken == [2], what="the newest news taken after the restart")


def test_news_put_back_waits_behind_nothing_newer_and_rings_nobody() -> None:
    handle: ChildHandle[Reader] = ChildHandle("reader")
    bell: Doorbell[tuple[int, int]] = Doorbell(handle, Rang(), merge=lambda w, c: (w[0], c[1]))
    taken = start_reader_of_pairs(bell, handle)
    bell.post((1, 1))
    wait_until(lambda: taken == [(1, 1)], what="the news taken")
    bell.post((2, 2))  # came while the taker could not act on (1, 1)
    wait_until(lambda: len(taken) == 2, what="the second ring")
    assert taken[1] == (2, 2)
    bell.put_back((2, 2))
    bell.post((3, 3))
    handle.ask(Reader.ping).result(timeout=5)
    assert len(taken) == 2, "the taker knows what it put back: no ring"
    assert bell.take() == (2, 3)


def start_reader_of_pairs(
    bell: Doorbell[tuple[int, int]], handle: ChildHandle[Reader]
) -> list[Any]:
    taken: list[Any] = []
    handle.bind(Reader.start(bell, taken))
    return taken
