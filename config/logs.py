"""structlog set-up: one JSON object per line in production, a console renderer on a TTY.

The standard library's loggers (pykka, aiohttp, httpx) go through the same processors, so
every line of the process has one shape.

A logged exception shows its frames (file, line, function) and its message, never the frames'
local variables: those hold what the code was handling (an ``api_key`` argument, the headers
of a request). Every string of every line, an exception's message included, is then scrubbed
of the secrets the relay was configured with (:func:`config.secrets.scrub`).
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import orjson
import structlog

from config.secrets import scrub_event

QUIET_LOGGERS = ("pykka", "httpx", "httpcore", "aiohttp.access")
"""Libraries whose lines below warning are left out (pykka logs an exception returned to a
caller at info: noise, the caller handles it)."""


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


def configure_logging(
    fmt: str = "json", level: str = "info", *, stream: TextIO | None = None, cache: bool = True
) -> None:
    """Configure structlog and route the standard library's logging through it.

    Args:
        fmt: ``"json"`` or ``"console"``.
        level: the lowest level written (``debug`` ... ``error``).
        stream: where lines go (standard output by default).
        cache: cache loggers on first use (fast; tests turn it off to re-configure).
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
            colors=out.isatty(), exception_formatter=structlog.dev.plain_traceback
        )
        tail = [structlog.processors.format_exc_info, scrub_event]
    else:
        renderer = structlog.processors.JSONRenderer(serializer=_orjson_text)
        tail = [_DICT_TRACEBACKS, scrub_event]
    structlog.configure(
        processors=[*shared, *tail, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.WriteLoggerFactory(file=out),
        cache_logger_on_first_use=cache,
    )

    handler = logging.StreamHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name, *tail],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    for noisy in QUIET_LOGGERS:
        logging.getLogger(noisy).setLevel(max(numeric, logging.WARNING))
