"""What a tree's start says when it fails: one line, with Pykka's tracebacks held back.

Pykka reports an actor whose start raised to its logger only, as an error with a traceback,
and the supervisor above it sees a dead child. :func:`watching_start` holds those reports while
a tree starts. After a failed start the first held exception (the deepest actor fails first) is
the one line a user reads (:meth:`StartWatch.cause`), and the reports, tracebacks and all, are
logged at ``debug``. After a successful start they are logged as they came: a crash the
supervisors recovered from is no start failure. Failures after the start never pass through it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import pykka

START_TIMEOUT_S = 15.0
"""How long a tree's start may wait for one of its subtrees to answer."""


class StartWatch(logging.Filter):
    """Pykka's failure reports while the tree starts: held, then logged by how the start ended.

    Attached to Pykka's logger for the start alone (see the module's docstring).
    """

    def __init__(self) -> None:
        super().__init__()
        self.held: list[logging.LogRecord] = []
        """The error reports with an exception, in order (appended from any actor's thread)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Hold an error report with an exception; pass anything else on."""
        if record.levelno < logging.ERROR or not record.exc_info or record.exc_info[1] is None:
            return True
        self.held.append(record)
        return False

    def cause(self, failure: BaseException) -> str:
        """One line on why the start failed; ``failure`` is what the wait for the tree raised."""
        for record in self.held:
            first = record.exc_info[1] if record.exc_info else None
            if isinstance(first, RuntimeError):  # ours say what happened in words
                return str(first)
            if first is not None:
                return f"{type(first).__name__}: {first}"
        if isinstance(failure, pykka.Timeout | TimeoutError):
            return f"the supervision tree did not answer within {START_TIMEOUT_S} s of its start"
        if isinstance(failure, RuntimeError):  # a supervisor's, naming the child that failed
            return str(failure)
        return f"the supervision tree failed to start: {failure!r}"

    def release(self, *, failed: bool) -> None:
        """Log the held reports, at ``debug`` after a failed start (call once detached)."""
        pykka_log = logging.getLogger("pykka")
        # Pykka's own logger is kept at warning or above: a debug line goes where the root does
        debug = logging.getLogger().isEnabledFor(logging.DEBUG)
        for record in self.held:
            if failed:
                if not debug:
                    continue
                record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            pykka_log.handle(record)
        self.held.clear()


@contextlib.contextmanager
def watching_start() -> Iterator[StartWatch]:
    """A :class:`StartWatch` on Pykka's logger for the block; a raise means a failed start."""
    watch = StartWatch()
    pykka_log = logging.getLogger("pykka")
    pykka_log.addFilter(watch)
    failed = True
    try:
        yield watch
        failed = False
    finally:
        pykka_log.removeFilter(watch)
        watch.release(failed=failed)
