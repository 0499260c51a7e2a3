"""What a benchmark reads of the CPU and memory a process or the machine used, from ``/proc``
and ``getrusage``: a process's resident memory and CPU seconds, the load average, and
:class:`Meter`, the CPU each party used over a window."""

from __future__ import annotations

import contextlib
import os
import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    """VmRSS of a process, in MB (NaN when it is gone)."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds (NaN when it is gone)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return float("nan")
    fields = raw[raw.rindex(")") + 2 :].split()  # fields from 3 (state) on
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def load_1min() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


@dataclass(frozen=True, slots=True)
class Usage:
    """CPU seconds over a window: the server, this process (a fake LLM, the sampling), its
    children waited for (a ``wrk`` run), the bench's ``idle`` servers, the machine; ``wall``."""

    server: float
    me: float
    children: float
    idle: float
    machine: float
    wall: float

    def other(self, gen: float) -> float:
        """The rest of the machine, as a share of one core (``gen``: the load generator's s);
        within about +-0.08 of 0 is the 10 ms granularity of the counters."""
        return (self.machine - self.server - gen - self.me - self.idle) / self.wall


class Meter:
    """Reads the CPU of a server, of ``idle`` processes, of this process and of the machine."""

    def __init__(self, server: int | None = None, idle: Sequence[int] = ()) -> None:
        self.server, self.idle = server, tuple(idle)
        self.start = self._read()

    def _read(self) -> tuple[float, ...]:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)  # a finished wrk run counts
        # /proc/stat: user nice system idle iowait irq softirq steal; busy is all but idle, iowait
        ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
        return (
            cpu_s(self.server) if self.server is not None else 0.0,
            time.process_time(),
            children.ru_utime + children.ru_stime,
            sum(cpu_s(pid) for pid in self.idle),
            (sum(ticks) - ticks[3] - ticks[4]) / CLK_TCK,
            time.monotonic(),
        )

    def read(self) -> Usage:
        return Usage(*(b - a for a, b in zip(self.start, self._read(), strict=True)))
