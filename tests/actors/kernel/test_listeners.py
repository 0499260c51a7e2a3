"""Events told to whoever listens: each listener in order, a listener restarting is logged."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from actors.kernel.base import ChildHandle, RelayActor
from actors.kernel.listeners import Listeners
from tests.support.observe import LogSink


@dataclass(frozen=True, slots=True)
class Counted:
    n: int


class Tally(RelayActor):
    """A listener: remembers the events it was told, in order."""

    name = "tally"

    def __init__(self, seen: list[int]) -> None:
        super().__init__()
        self._seen = seen

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, Counted):
            self._seen.append(message.n)
            return None
        return super().on_receive(message)


def test_every_listener_hears_each_event_in_the_order_it_was_sent() -> None:
    first: ChildHandle[Tally] = ChildHandle("first")
    second: ChildHandle[Tally] = ChildHandle("second")
    seen_first: list[int] = []
    seen_second: list[int] = []
    first.bind(Tally.start(seen_first))
    second.bind(Tally.start(seen_second))
    events: Listeners[Counted] = Listeners(first, second)

    assert all(events.send(Counted(n)) for n in range(50))
    first.ask(Tally.ping).result(timeout=5)
    second.ask(Tally.ping).result(timeout=5)
    assert seen_first == seen_second == list(range(50))


def test_an_event_for_a_listener_that_is_not_running_is_logged_and_the_rest_hear_it(
    logs: LogSink,
) -> None:
    gone: ChildHandle[Tally] = ChildHandle("gone")
    here: ChildHandle[Tally] = ChildHandle("here")
    seen: list[int] = []
    here.bind(Tally.start(seen))
    events: Listeners[Counted] = Listeners(gone, here)

    assert events.send(Counted(7)) is False
    here.ask(Tally.ping).result(timeout=5)
    assert seen == [7]
    [line] = logs.named("event.undelivered")
    assert (line["listener"], line["kind"], line["level"]) == ("gone", "Counted", "warning")
