"""What a test watches: a condition polled until it holds or a deadline passes, the
relay's structlog events as the test's log sink collects them, and its log as production
renders it."""

from __future__ import annotations

import contextlib
import io
import logging
import threading
import time
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import pytest
import structlog

from config.logs import QUIET_LOGGERS, configure_logging


def wait_until(predicate: Callable[[], Any], timeout_s: float = 5.0, what: str = "") -> Any:
    """Poll ``predicate`` until it returns something truthy; fail the test after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout_s} s waiting for {what or predicate}")
        time.sleep(0.01)


@contextlib.contextmanager
def rendered_logs() -> Iterator[io.StringIO]:
    """The relay's log as production writes it (:func:`config.logs.configure_logging`, JSON,
    level info), into the yielded buffer: what would fail to render shows here, as it would
    on stdout. The standard library's logging is put back after (the ``logs`` fixture puts
    structlog back for the next test)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {name: logging.getLogger(name).level for name in QUIET_LOGGERS}
    buffer = io.StringIO()
    configure_logging("json", "info", stream=buffer, cache=False)
    try:
        yield buffer
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        for name, was in levels.items():
            logging.getLogger(name).setLevel(was)


class LogSink:
    """Every structlog event of the test, as dicts (thread-safe, unlike capture_logs)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: list[dict[str, Any]] = []

    def __call__(self, _logger: Any, method: str, event: MutableMapping[str, Any]) -> Any:
        with self._lock:
            self.events.append({**event, "level": method})
        raise structlog.DropEvent

    def named(self, name: str) -> list[dict[str, Any]]:
        """Events whose name is ``name``."""
        with self._lock:
            return [e for e in self.events if e.get("event") == name]

    def clear(self) -> None:
        with self._lock:
            self.events.clear()
