"""Published: the newest committed snapshot of an actor's state, readable from any thread.

A read of the rings from the HTTP transport used to be a message: a crossing from the event
loop into the buffer's thread and back for every ``GET /feed``, which cost more than the rest
of the request. Instead the owning buffer publishes an immutable snapshot after each commit,
and readers take the newest one. Ownership does not change: the buffer is the only writer,
its state is still touched only on its thread, and a snapshot is a frozen value that no one
can change. Rebinding one attribute is atomic in Python, so a reader sees either the old
snapshot or the new one, whole.

Order: the buffer publishes before it answers the writes that the commit made durable, so a
client that got its ``200`` and then reads sees its own item. A snapshot holds committed data
only. The cell outlives the actors that publish into it: a restarted buffer publishes what it
restored, and until then readers keep getting the last snapshot, which is still on disk.
"""

from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")


class Published(Generic[T]):
    """One cell, written by one owner (:meth:`publish`), read by anyone (:attr:`value`)."""

    __slots__ = ("_value",)

    def __init__(self, initial: T) -> None:
        self._value = initial

    @property
    def value(self) -> T:
        """The newest snapshot."""
        return self._value

    def publish(self, value: T) -> None:
        """Replace the snapshot; call it from the owning actor's thread only."""
        self._value = value
