"""A check's verdict, in one line with the setting to fix: what ``sinain-relay doctor`` prints
and a started relay logs (``doctor.check``), whichever feature made it.

A :class:`Check` is one line: ``ok``, ``FAIL``, ``warn`` or ``skip``, the check's name, what
was found, and (when not ok) the remedy, naming the setting. The process exits 1 when a check
failed (:func:`exit_code`); warnings and skips do not fail it.
"""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from actors.common.http_library import httpx

Verdict = Literal["ok", "FAIL", "warn", "skip"]
EXIT_OK = 0
EXIT_FAILED = 1


@dataclass(frozen=True, slots=True)
class Check:
    """One check's verdict: what was found and, when not ok, what to do."""

    name: str
    verdict: Verdict
    found: str
    remedy: str = ""

    def line(self) -> str:
        """``FAIL llm: <found>: <remedy>`` (the remedy only when there is one)."""
        said = f"{self.verdict} {self.name}: {self.found}"
        return f"{said}: {self.remedy}" if self.remedy else said

    @property
    def worrying(self) -> bool:
        """Whether it is logged as a warning (``FAIL`` and ``warn``), with its remedy."""
        return self.verdict not in ("ok", "skip")

    def log_fields(self) -> dict[str, str]:
        """The fields of its ``doctor.check`` log line (``remedy`` when :attr:`worrying`)."""
        fields = {"check": self.name, "verdict": self.verdict, "found": self.found}
        return {**fields, "remedy": self.remedy} if self.worrying else fields


def exit_code(checks: Sequence[Check]) -> int:
    """0 when nothing failed (warnings and skips are fine), else 1."""
    return EXIT_FAILED if any(check.verdict == "FAIL" for check in checks) else EXIT_OK


def unreachable_reason(error: BaseException) -> str:
    """Why a connection failed, in a few words, from the errors that caused ``error``."""
    seen: BaseException | None = error
    for _ in range(10):  # a chain of causes is short; a cycle is not followed
        if seen is None:
            break
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if isinstance(seen, socket.gaierror):
            return "the host name does not resolve"
        if isinstance(seen, ssl.SSLError):
            return "TLS failed"
        if isinstance(seen, TimeoutError | httpx.ConnectTimeout):
            return "the connection timed out"
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror.lower()
        seen = seen.__cause__ or seen.__context__
    text = str(error)
    return "connection refused" if "connection attempts failed" in text else text


def ms_since(began: float) -> int:
    """Milliseconds since ``began`` (:func:`time.monotonic`), as a check reports a wait."""
    return round((time.monotonic() - began) * 1000)
