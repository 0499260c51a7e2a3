"""The client processes' own figures: the capture client's and the overlay's RSS and uptime.

Sinain's capture client posts ``POST /profiling/sense {rssMb, uptimeS, ts, extra}`` every
60 s; the overlay sends ``{"type": "profiling", rssMb, uptimeS, ts}`` on its WebSocket every
30 s. :func:`parse_report` validates either (pure); :class:`ClientFigures` keeps the newest
report of each client, which ``/health`` and ``/metrics`` show.

They are live figures, not history: kept in memory on the transport's event loop (the only
thread that writes or reads them), the newest report of each client only, and gone when the
transport restarts until the client's next report.

``/health`` needs no token, so the names of ``extra`` fields are redacted as a report arrives
(:meth:`actors.core.redactor.Redactor.names`: a secret in a name becomes its marker), and a
caller without the token, when one is set, gets ``extra`` as ``null``: the names of a
client's counters may say what the user does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from actors.core.errors import BadRequest
from actors.core.redactor import Redactor
from transport.answers import ClientFigures as FiguresShape
from transport.answers import Profiling

MAX_EXTRA_FIELDS = 64
"""Fields an ``extra`` object may have at most (the capture client sends 11)."""
MAX_EXTRA_NAME_CHARS = 64
"""Characters of one ``extra`` field's name at most."""
CLIENTS = ("sense", "overlay")
"""The clients that report their figures: the capture client and the overlay."""


@dataclass(frozen=True, slots=True)
class ProcessReport:
    """One client process's figures, as it reported them, and when they arrived."""

    rss_mb: float
    uptime_s: float
    ts: float
    """The client's clock, epoch milliseconds."""
    extra: tuple[tuple[str, float], ...]
    """The client's own counters (``extra``), in the order it sent them."""
    received_at: int = 0
    """The relay's clock, epoch milliseconds."""

    def arrived(self, received_at: int) -> ProcessReport:
        """This report, arrived at ``received_at`` (the relay's clock, epoch ms)."""
        return replace(self, received_at=received_at)

    def named(self, names: list[str]) -> ProcessReport:
        """This report with its ``extra`` fields named ``names``, in order."""
        values = (value for _, value in self.extra)
        return replace(self, extra=tuple(zip(names, values, strict=True)))

    def shape(self, *, extra: bool = True) -> FiguresShape:
        """``{rssMb, uptimeS, ts, receivedAt, extra}``, as ``/health.profiling`` shows it
        (``extra`` as ``null`` without ``extra``)."""
        return FiguresShape(
            rss_mb=self.rss_mb,
            uptime_s=self.uptime_s,
            ts=self.ts,
            received_at=self.received_at,
            extra=dict(self.extra) if extra else None,
        )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def parse_report(body: Any) -> ProcessReport:
    """Check a process report; return it (without its arrival time).

    ``rssMb`` and ``uptimeS`` are numbers at least 0, ``ts`` a number; ``extra``, when present
    (``null`` counts as absent), an object of at most :data:`MAX_EXTRA_FIELDS` numbers whose
    names have at most :data:`MAX_EXTRA_NAME_CHARS` characters. Other fields are ignored.

    Raises:
        BadRequest: what is wrong, by field name.
    """
    if not isinstance(body, dict):
        raise BadRequest("body must be a JSON object")
    for name in ("rssMb", "uptimeS", "ts"):
        if name not in body:
            raise BadRequest(f"{name} is required")
        if not _number(body[name]):
            raise BadRequest(f"{name} must be a number")
    for name in ("rssMb", "uptimeS"):
        if body[name] < 0:
            raise BadRequest(f"{name} must not be negative")
    extra = body.get("extra")
    if extra is None:
        extra = {}
    if not isinstance(extra, dict):
        raise BadRequest("extra must be an object")
    if len(extra) > MAX_EXTRA_FIELDS:
        raise BadRequest(f"extra must have at most {MAX_EXTRA_FIELDS} fields")
    for name, value in extra.items():
        if len(name) > MAX_EXTRA_NAME_CHARS:
            msg = f"extra field names must have at most {MAX_EXTRA_NAME_CHARS} characters"
            raise BadRequest(msg)
        if not _number(value):
            raise BadRequest(f"extra.{name[:MAX_EXTRA_NAME_CHARS]} must be a number")
    return ProcessReport(
        rss_mb=body["rssMb"],
        uptime_s=body["uptimeS"],
        ts=body["ts"],
        extra=tuple(extra.items()),
    )


class ClientFigures:
    """The newest report of each client (:data:`CLIENTS`); used on the event loop only."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        self._reports: dict[str, ProcessReport] = {}
        self._redactor = redactor or Redactor()

    def report(self, client: str, report: ProcessReport) -> None:
        """Keep ``report`` as ``client``'s newest, the names of its ``extra`` redacted."""
        if report.extra:
            report = report.named(self._redactor.names([name for name, _ in report.extra]))
        self._reports[client] = report

    def latest(self, client: str) -> ProcessReport | None:
        """``client``'s newest report, or ``None`` before its first."""
        return self._reports.get(client)

    def shape(self, *, extra: bool = True) -> Profiling:
        """``/health.profiling``: each client's newest report, or ``null`` (``extra`` as
        ``null`` without ``extra``: for a caller without the token)."""
        sense, overlay = (self._reports.get(client) for client in CLIENTS)
        return Profiling(
            sense=sense.shape(extra=extra) if sense else None,
            overlay=overlay.shape(extra=extra) if overlay else None,
        )
