"""Events an actor tells whoever listens, without knowing who that is.

An actor that has something to report which another keeps (a skipped tick, a failed write)
sends an event, a frozen value, to its :class:`Listeners`; the composition root decides who
listens. The emitter imports neither the listener's module nor its methods, so two actor
modules never need each other, and a new listener (a counter, a log, a test) is one more
handle here, not a change to the emitter.

Events are told, never asked: an emitter never waits for whoever counts (a listener busy
with a commit, or hung, would hold up a tick), and a listener that asked its emitter back
could not deadlock with it. A listener handles them in ``on_receive``, in order with
everything else the same emitter sent it. An event sent while a listener restarts is lost
for it, and logged.
"""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

import structlog

from actors.kernel.errors import ActorUnavailable

E = TypeVar("E")

log = structlog.get_logger("relay")


class Mailbox(Protocol):
    """Where an event goes: a stable handle (:class:`~actors.kernel.base.ChildHandle`)."""

    @property
    def name(self) -> str:
        """The listener's name, for the log line of an undelivered event."""
        ...

    def send(self, message: object) -> None:
        """Tell the listener ``message``; raises ``ActorUnavailable`` if it is not running."""
        ...


class Listeners(Generic[E]):
    """The listeners of one kind of event, told each event in the order they subscribed.

    Subscribed by the composition root before anything emits; read from the emitters'
    threads afterwards.
    """

    def __init__(self, *listeners: Mailbox) -> None:
        self._listeners = listeners

    def send(self, event: E) -> bool:
        """Tell every listener ``event``; False (and a log line) if one was not running."""
        delivered = True
        for listener in self._listeners:
            try:
                listener.send(event)
            except ActorUnavailable:
                log.warning("event.undelivered", listener=listener.name, kind=type(event).__name__)
                delivered = False
        return delivered
