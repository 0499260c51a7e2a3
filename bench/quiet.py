"""A quiet machine for the cost figures: why it is busy now, attempts made once it is quiet,
the cores the rest of the machine used during one, and the rows of the targets' table.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from tests.support import harness as h

QUIET_LOAD, QUIET_OTHER_CORES, ATTEMPTS = 0.5, 0.25, 3
BENCHES = ("-m bench ", "bench_", "bench.chaos", "bench/chaos")
"""Command-line fragments of the benches that must not run beside this one."""


Row = tuple[str, str, str, str, str]
"""A target's row: target, measured, limit, result, part."""


def table_rows(part: str, limit: str, values: dict[str, float | None], unit: str) -> list[Row]:
    """A row per target: ``pass`` when its value is under ``limit``; not measured when None."""
    bound = float(limit.split(maxsplit=1)[0])
    return [
        (name, "not measured", limit, "n/a", part)
        if value is None
        else (name, f"{value:.3f} {unit}", limit, "pass" if value < bound else "FAIL", part)
        for name, value in values.items()
    ]


# -- a quiet machine -----------------------------------------------------------------------------


def busy_reasons() -> list[str]:
    """Why the machine is not quiet now (empty when it is)."""
    load = h.load_1min()
    reasons = [f"1-min load {load:.2f} (>= {QUIET_LOAD})"] if load >= QUIET_LOAD else []
    mine, pid = set(), os.getpid()  # this process and its ancestors (a shell, ``timeout``)
    while pid > 1 and pid not in mine:
        mine.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            pid = int(stat[stat.rindex(")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            break
    others: list[str] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in mine:
            continue
        with contextlib.suppress(OSError):
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if any(pattern in cmdline for pattern in BENCHES):
                others.append(f"{entry.name}: {cmdline.strip()[:80]}")
    return reasons + (["other benches running: " + "; ".join(others)] if others else [])


def quiet_attempts(part: str, max_wait_s: float) -> Iterator[int]:
    """Attempt numbers, each once the machine is quiet; stops (and says why) when it is not."""
    for attempt in range(1, ATTEMPTS + 1):
        deadline, said = time.monotonic() + max_wait_s, 0.0
        while (reasons := busy_reasons()) and time.monotonic() < deadline:
            if time.monotonic() - said >= 30.0:
                left = deadline - time.monotonic()
                print(f"  machine busy ({'; '.join(reasons)}); waiting (up to {left:.0f} s)")
                said = time.monotonic()
            time.sleep(min(5.0, max(0.0, deadline - time.monotonic())))
        if reasons:
            print(f"  {part}: the machine was never quiet ({'; '.join(reasons)}); not measured")
            return
        yield attempt
    print(f"  {part}: other processes were busy in each of {ATTEMPTS} attempts; not measured")


def busy_during(part: str, attempt: int, used: h.Usage) -> float | None:
    """The cores the rest of the machine used; None (and say so) when too many."""
    if (other := used.other(used.children)) <= QUIET_OTHER_CORES:
        return other
    print(
        f"  {part} attempt {attempt}: the rest of the machine used {other:.2f} cores "
        f"(> {QUIET_OTHER_CORES}); discarded, retrying"
    )
    return None
