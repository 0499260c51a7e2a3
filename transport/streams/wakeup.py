"""A published cell's listener that wakes an event loop: at most one wake-up scheduled at a
time, nothing done on the publisher's thread but the scheduling.

A cell calls its listeners on the publisher's thread inside its commit, so the listener
only asks the loop to run ``_wake`` soon; the flag keeps a burst of publishes to one
wake-up, and a loop that closed without its owner's cleanup detaches the listener.
"""

from __future__ import annotations

import asyncio


class LoopWakeup:
    """What a hub and the overlay's presence share: ``_published`` is the cell's listener;
    the owner sets ``_loop`` when it attaches, ``_listening`` while anyone waits, clears
    ``_scheduled`` first thing in its ``_wake``, and lets go of the cell in ``detach``."""

    _loop: asyncio.AbstractEventLoop | None
    _listening: bool
    _scheduled: bool

    def detach(self) -> None:
        """Stop listening to the cell."""
        raise NotImplementedError

    def _wake(self) -> None:
        """On the loop: act on what the cell holds now."""
        raise NotImplementedError

    def _published(self, _snapshot: object) -> None:
        """The cell's listener, on the publisher's thread inside its commit: keep it cheap."""
        loop = self._loop
        if loop is None or loop.is_closed():  # the transport died without its cleanup
            self.detach()
            return
        if not self._listening or self._scheduled:
            return
        self._scheduled = True
        try:
            loop.call_soon_threadsafe(self._wake)
        except RuntimeError:  # the loop closed since the check above
            self.detach()
