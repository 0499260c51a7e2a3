"""Published: the newest committed snapshot of an actor's state, readable from any thread.

A read of the rings as a message would cross from the event loop into the buffer's thread and
back for every ``GET /feed``, and cost more than the rest of the request. Instead the owning
buffer publishes an immutable snapshot after each commit, and readers take the newest one.
Ownership does not change: the buffer is the only writer, its state is still touched only
on its thread, and a snapshot is a frozen value that no one can change. Rebinding one
attribute is atomic in Python, so a reader sees either the old snapshot or the new one,
whole.

Order: the buffer publishes before it answers the writes that the commit made durable, so a
client that got its ``200`` and then reads sees its own item. A snapshot holds committed data
only. The cell outlives the actors that publish into it: a restarted buffer publishes what it
restored, and until then readers keep getting the last snapshot, which is still on disk.

Listeners (:meth:`Published.subscribe`) are told of each new snapshot on the publisher's
thread. They must only note the change and hand it on (ring a doorbell, schedule a callback
on an event loop): they run inside the owner's commit, and ingestion waits for them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import pykka
import structlog

T = TypeVar("T")
Listener = Callable[[T], None]

log = structlog.get_logger("relay")


class Published(Generic[T]):
    """One cell, written by one owner (:meth:`publish`), read by anyone (:attr:`value`)."""

    __slots__ = ("_listeners", "_value")

    def __init__(self, initial: T) -> None:
        self._value = initial
        self._listeners: tuple[Listener[T], ...] = ()

    @property
    def value(self) -> T:
        """The newest snapshot."""
        return self._value

    def publish(self, value: T) -> None:
        """Replace the snapshot and tell the listeners; call it from the owner's thread only.

        A listener that raises is logged and skipped: the owner's commit is already done.
        """
        self._value = value
        for listener in self._listeners:
            try:
                listener(value)
            except Exception:
                log.exception("published.listener_failed", listener=repr(listener))

    def subscribe(self, listener: Listener[T]) -> Callable[[], None]:
        """Call ``listener(snapshot)`` after each publish; returns the unsubscribe function.

        Subscribing replaces one tuple, so it is safe from any thread.
        """
        self._listeners = (*self._listeners, listener)

        def unsubscribe() -> None:
            self._listeners = tuple(x for x in self._listeners if x is not listener)

        return unsubscribe


def tell_on_publish(
    cell: Published[Any], ref: pykka.ActorRef[Any], message: object
) -> Callable[[], None]:
    """Tell the actor ``ref`` ``message`` after each publish of ``cell``, so that it reads the
    cell on its own thread; the unsubscribe function (call it when the actor stops). An actor
    that is gone is told nothing."""

    def tell(_value: object) -> None:
        with contextlib.suppress(pykka.ActorDeadError):
            ref.tell(message)

    return cell.subscribe(tell)
