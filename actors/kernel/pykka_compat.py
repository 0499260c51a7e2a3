"""The private parts of Pykka the kernel relies on, all here, for Pykka 4.5.

Every relay actor is a :class:`HookedActor`. It adds to Pykka's ``ThreadingActor`` what
Pykka keeps private; these are the only private parts of Pykka the relay touches, and
nothing outside this module touches them:

- ``Actor._actor_loop_teardown()``: Pykka's last step on an actor's own thread, whatever
  ended its loop: a stop, a crash, or a loop told to end (``actor_stopped`` set) while a
  call hung, after which neither ``on_stop`` nor ``on_failure`` runs. It is overridden here
  once, to run :meth:`HookedActor.loop_ended` before Pykka's own teardown (which answers the
  asks still queued with ``ActorDeadError``).
- ``ThreadingActor.actor_inbox`` is a ``queue.Queue`` (Pykka types it as a protocol with
  ``put``, ``get`` and ``empty``) of Pykka's envelopes, whose ``message`` is what was sent:
  :meth:`HookedActor._take_queued` reads them so.

It also relies on Pykka's loop reading ``actor_stopped`` before each message, so that a loop
told to end handles no other (:func:`actors.kernel.supervisor.abandon`).

``tests/actors/kernel/test_pykka_compat.py`` checks each on the installed Pykka, with real
actors; ``pyproject.toml`` pins Pykka to :data:`SUPPORTED`, the versions those tests were run
against.
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from typing import Any, cast

import pykka

SUPPORTED = ">=4.5,<4.6"
"""The Pykka versions this module was checked against (``pyproject.toml`` pins the same)."""


class HookedActor(pykka.ThreadingActor):
    """Pykka's threading actor, with a last hook on its thread and a look into its inbox."""

    def loop_ended(self) -> None:
        """The last step on the actor's own thread, whatever ended its loop: after
        ``on_stop`` or ``on_failure`` when one ran, and also when neither did (its loop was
        told to end while a call hung, and the call came back). Nothing by default."""

    def _actor_loop_teardown(self) -> None:
        try:
            self.loop_ended()
        finally:
            super()._actor_loop_teardown()

    def _take_queued(self, wanted: Callable[[Any], bool]) -> list[Any]:
        """Take the messages still queued that ``wanted`` picks, in order, out of the inbox;
        the others stay queued, in their order. Only on the actor's own thread."""
        inbox = cast("queue.Queue[Any]", self.actor_inbox)
        taken: list[Any] = []
        others: list[Any] = []
        while True:
            try:
                envelope = inbox.get_nowait()
            except queue.Empty:
                break
            (taken if wanted(envelope.message) else others).append(envelope)
        for envelope in others:
            inbox.put(envelope)
        return [envelope.message for envelope in taken]
