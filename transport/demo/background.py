"""What the demo's stand-ins share: each runs on a thread of its own, and ``with`` runs it."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class Background:
    """Started with :meth:`start`, stopped with :meth:`stop`; ``with`` does both."""

    def start(self) -> Self:
        """Start the thread; returns ``self``."""
        raise NotImplementedError

    def stop(self) -> None:
        """Stop the thread and wait for it."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
