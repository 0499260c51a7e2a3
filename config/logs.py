"""structlog set-up: one JSON object per line in production, a console renderer on a TTY.

The standard library's loggers (pykka, aiohttp, httpx) go through the same processors, so
every line of the process has one shape.

A logged exception shows its frames (file, line, function) and its message, never the frames'
local variables: those hold what the code was handling (an ``api_key`` argument, the headers
of a request). Every string of every line, an exception's message included, is then scrubbed
of the secrets the relay was configured with (:func:`config.common.secrets.scrub`).

With a log file (``RELAY_LOG_FILE``, where no journal keeps standard output: a launchd agent),
every line, structlog's own too, goes through one rotating file handler instead: the file is
readable by its owner alone and rotated at :data:`LOG_FILE_BYTES`.
"""

from __future__ import annotations

import errno
import io
import logging
import logging.handlers
import os
import stat
import sys
from pathlib import Path
from typing import Any, TextIO

import orjson
import structlog

from config.common.secrets import scrub_event

QUIET_LOGGERS = ("pykka", "httpx", "httpcore", "aiohttp.access")
"""Libraries whose lines below warning are left out (pykka logs an exception returned to a
caller at info: noise, the caller handles it)."""
LOG_FILE_BYTES = 10 * 1024 * 1024
"""A log file is rotated at this size ..."""
LOG_FILE_BACKUPS = 5
"""... and this many old ones are kept (``relay.log.1`` the newest)."""


def _orjson_text(obj: Any, **_kw: Any) -> str:
    try:
        return orjson.dumps(obj, default=repr).decode()
    except TypeError:  # a string that is no UTF-8 (a client's bytes): still one line
        return orjson.dumps(_writable(obj), default=repr).decode()


def _writable(obj: Any) -> Any:
    """``obj`` with each string written as UTF-8 can be: the bytes of a header aiohttp read
    as ``surrogateescape`` show as ``\\xff``, any other lone surrogate as ``\\udcff``."""
    if isinstance(obj, str):
        try:
            return obj.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:
            return obj.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(obj, dict):
        return {_writable(k): _writable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_writable(v) for v in obj]
    return obj


_DICT_TRACEBACKS = structlog.processors.ExceptionRenderer(
    structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
)
"""``dict_tracebacks`` without the frames' locals (structlog shows them by default)."""


_OPEN_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK
"""A link at the path is not followed (the open fails), and a FIFO there does not hold the
open until someone reads it (it fails too)."""


def open_private(path: str) -> int:
    """A descriptor appending to ``path``, created ``0600`` if missing, else made ``0600``.

    Only a file of the relay's own is written and changed: a symbolic link at ``path`` (which
    another user may have put in a shared directory, to have the relay append to a file of
    their choosing and change its mode), anything but a regular file, a file another user
    owns, or a file with a second name (a hard link to another file) is refused.

    Raises:
        OSError: ``path`` is refused (its message says why) or cannot be opened.
    """
    try:
        descriptor = os.open(path, _OPEN_FLAGS, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            exc.strerror = "it is a symbolic link: name the file itself"
        raise
    why = _not_ours(os.fstat(descriptor))
    if why:
        os.close(descriptor)
        raise OSError(errno.EPERM, why, path)
    os.set_blocking(descriptor, True)
    os.fchmod(descriptor, 0o600)
    return descriptor


def _not_ours(info: os.stat_result) -> str:
    """Why the opened file is not one the relay may write and chmod; empty: it may."""
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    if info.st_uid != os.geteuid():
        return f"it belongs to user id {info.st_uid}"
    if info.st_nlink > 1:
        return "it has another name too (a hard link to another file)"
    return ""


class _PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log file that only its owner may read (0600), each new file too: the
    lines may quote what the user's screen showed. Each file is opened with
    :func:`open_private`."""

    def _open(self) -> io.TextIOWrapper:
        descriptor = open_private(self.baseFilename)
        return open(descriptor, "a", encoding="utf-8", errors="backslashreplace")


def _file_handler(path: str, max_bytes: int, backups: int) -> logging.Handler:
    """The handler writing ``path``, its directory made for the owner alone if missing."""
    folder = Path(path).parent
    if not folder.is_dir():
        folder.mkdir(mode=0o700, parents=True)
    return _PrivateRotatingFileHandler(path, maxBytes=max_bytes, backupCount=backups)


def configure_logging(
    fmt: str = "json",
    level: str = "info",
    *,
    stream: TextIO | None = None,
    cache: bool = True,
    log_file: str = "",
    max_bytes: int = LOG_FILE_BYTES,
    backups: int = LOG_FILE_BACKUPS,
) -> None:
    """Configure structlog and route the standard library's logging through it.

    Args:
        fmt: ``"json"`` or ``"console"``.
        level: the lowest level written (``debug`` ... ``error``).
        stream: where lines go (standard output by default).
        cache: cache loggers on first use (fast; tests turn it off to re-configure).
        log_file: a file that takes every line instead of ``stream``, rotated at ``max_bytes``
            with ``backups`` old files kept.
    """
    out = stream or sys.stdout
    numeric = logging.getLevelNamesMapping()[level.upper()]
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: Any
    tail: list[Any]
    if fmt == "console":
        # the traceback as text before the scrub (with rich or better-exceptions installed the
        # renderer's own formatter would show locals: it is told to use the plain one)
        renderer = structlog.dev.ConsoleRenderer(
            colors=not log_file and out.isatty(), exception_formatter=structlog.dev.plain_traceback
        )
        tail = [structlog.processors.format_exc_info, scrub_event]
    else:
        renderer = structlog.processors.JSONRenderer(serializer=_orjson_text)
        tail = [_DICT_TRACEBACKS, scrub_event]
    handler: logging.Handler
    factory: Any
    if log_file:  # structlog's lines through the standard library's handler, as its own are
        handler = _file_handler(log_file, max_bytes, backups)
        last: Any = structlog.stdlib.ProcessorFormatter.wrap_for_formatter
        factory = structlog.stdlib.LoggerFactory()
    else:
        handler = logging.StreamHandler(out)
        last, factory = renderer, structlog.WriteLoggerFactory(file=out)
    structlog.configure(
        processors=[*shared, *tail, last],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=factory,
        cache_logger_on_first_use=cache,
    )
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name, *tail],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    for old in root.handlers:
        if old is not handler and isinstance(old, logging.FileHandler):
            old.close()  # a log file configured before
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    for noisy in QUIET_LOGGERS:
        logging.getLogger(noisy).setLevel(max(numeric, logging.WARNING))
