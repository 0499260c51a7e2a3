"""The client processes' own figures: the capture client's and the overlay's RSS and uptime.

Sinain's capture client posts ``POST /profiling/sense {rssMb, uptimeS, ts, extra}`` every
60 s; the overlay sends ``{"type": "profiling", rssMb, uptimeS, ts}`` on its WebSocket every
30 s. Either is decoded as :class:`actors.core.bodies.ProcessReport` and made a
:class:`ClientReport` by :func:`report_of`; :class:`ClientReports` keeps the newest
report of each client, which ``/health`` and ``/metrics`` show.

They are live figures, not history: kept in memory on the transport's event loop (the only
thread that writes or reads them), the newest report of each client only, and gone when the
transport restarts until the client's next report.

``/health`` needs no token, so the names of ``extra`` fields are redacted as a report arrives
(:meth:`actors.core.redaction.redactor.Redactor.names`: a secret in a name becomes its
marker), and a caller without the token, when one is set, gets ``extra`` as ``null``: the names of a
client's counters may say what the user does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from actors.core import bodies
from actors.core.redaction.redactor import Redactor
from transport.shell.answers import ClientFigures, Profiling

CLIENTS = ("sense", "overlay")
"""The clients that report their figures: the capture client and the overlay."""


@dataclass(frozen=True, slots=True)
class ClientReport:
    """One client process's figures, as it reported them, and when they arrived."""

    rss_mb: float
    uptime_s: float
    ts: float
    """The client's clock, epoch milliseconds."""
    extra: tuple[tuple[str, float], ...]
    """The client's own counters (``extra``), in the order it sent them."""
    received_at: int = 0
    """The relay's clock, epoch milliseconds."""

    def arrived(self, received_at: int) -> ClientReport:
        """This report, arrived at ``received_at`` (the relay's clock, epoch ms)."""
        return replace(self, received_at=received_at)

    def named(self, names: list[str]) -> ClientReport:
        """This report with its ``extra`` fields named ``names``, in order."""
        values = (value for _, value in self.extra)
        return replace(self, extra=tuple(zip(names, values, strict=True)))

    def shape(self, *, extra: bool = True) -> ClientFigures:
        """``{rssMb, uptimeS, ts, receivedAt, extra}``, as ``/health.profiling`` shows it
        (``extra`` as ``null`` without ``extra``)."""
        return ClientFigures(
            rss_mb=self.rss_mb,
            uptime_s=self.uptime_s,
            ts=self.ts,
            received_at=self.received_at,
            extra=dict(self.extra) if extra else None,
        )


def report_of(body: bodies.ProcessReport) -> ClientReport:
    """A decoded process report (:class:`actors.core.bodies.ProcessReport`, which says what
    one may hold), without its arrival time."""
    return ClientReport(
        rss_mb=body.rss_mb,
        uptime_s=body.uptime_s,
        ts=body.ts,
        extra=tuple((body.extra or {}).items()),
    )


class ClientReports:
    """The newest report of each client (:data:`CLIENTS`); used on the event loop only."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        self._reports: dict[str, ClientReport] = {}
        self._redactor = redactor or Redactor()

    def report(self, client: str, report: ClientReport) -> None:
        """Keep ``report`` as ``client``'s newest, the names of its ``extra`` redacted."""
        if report.extra:
            report = report.named(self._redactor.names([name for name, _ in report.extra]))
        self._reports[client] = report

    def latest(self, client: str) -> ClientReport | None:
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
