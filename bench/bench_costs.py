"""What the relay costs when little happens: a tick's own cost, idle CPU and start-up time.

Run from the repository root::

    python -m bench costs               # idle 60 s, 5 starts
    python -m bench costs --quick       # idle 10 s, 2 starts, fewer repetitions
    python -m bench costs --only tick   # some parts (idle, startup, tick; comma-separated)

``idle``: the CPU of an idle ``python run.py`` (target below 0.5 % of a core); ``startup``:
spawn to the first ``GET /health`` 200 (below 1 s) beside the interpreter's floors; ``tick``:
each step of a tick but the LLM call, in-process (below 2 ms). Each waits for a quiet machine.
It prints figures and a table of the targets (docs/benchmarks.md says how each is measured).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from bench.figures import at_least
from bench.quiet import Row, busy_during, quiet_attempts, table_rows
from bench.runner import arg, choose, exit_on_sigterm, fill_defaults, flags
from bench.stats import median
from bench.tick_cost import IDLE_LIMIT_PCT, START_LIMIT_S, run_tick
from tests.support import harness as h

PARTS = ("idle", "startup", "tick")
SETTLE_S = 5.0
THREADS_SHOWN = 12
FLOORS = {
    "interpreter": "pass",
    "dependencies": "import aiohttp, pykka, structlog, httpx, orjson",
    "relay modules": "import run",
}


@contextlib.contextmanager
def default_relay(llm: h.Server, data_dir: str, log_path: Path) -> Iterator[h.Server]:
    """``python run.py --data-dir <data_dir>`` with a key and the fake LLM, its defaults else."""
    env = h.relay_env(OPENROUTER_API_KEY="x", AGENT_BASE_URL=llm.base_url + "/v1")
    with h.relay_process(data_dir, log_path, env, log_level=None) as relay:
        yield relay


# -- idle CPU ------------------------------------------------------------------------------------


class ThreadStat(NamedTuple):
    """One thread's counters from ``/proc/<pid>/task/<tid>/``, or their change."""

    voluntary: int
    involuntary: int
    cpu_ns: int

    def __sub__(self, other: ThreadStat) -> ThreadStat:
        return ThreadStat(*(a - b for a, b in zip(self, other, strict=True)))


def thread_stats(pid: int) -> dict[int, ThreadStat]:
    """Per thread id: context switches (``status``) and CPU nanoseconds (``schedstat``)."""
    stats: dict[int, ThreadStat] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = dict(line.split(":", 1) for line in (task / "status").read_text().splitlines())
            cpu_ns = int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # the thread ended meanwhile
        voluntary, involuntary = (
            int(status[f"{k}_ctxt_switches"]) for k in ("voluntary", "nonvoluntary")
        )
        stats[int(task.name)] = ThreadStat(voluntary, involuntary, cpu_ns)
    return stats


def agent_counters(relay: h.Server) -> dict[str, Any]:
    agent = h.health(relay)[1].get("agent")
    keys = ("emptySkips", "idleSkips", "totalCalls", "failures", "state")
    return {k: agent.get(k) for k in keys} if isinstance(agent, dict) else {}


def measure_idle(
    args: argparse.Namespace, relay: h.Server, llm: h.Server, attempt: int
) -> tuple[float, float] | None:
    """One idle window, printed; the relay's CPU in % of a core from ``stat`` and from the
    threads' ``schedstat`` (None: the machine was busy)."""
    pid, before_agent = relay.pid, agent_counters(relay)
    time.sleep(SETTLE_S)
    threads0, meter = thread_stats(pid), h.Meter(pid, idle=(llm.pid,))
    time.sleep(args.idle_seconds)
    threads1, used = thread_stats(pid), meter.read()
    if (other := busy_during("idle", attempt, used)) is None:
        return None
    deltas = sorted(
        ((tid, s1 - threads0[tid]) for tid, s1 in threads1.items() if tid in threads0),
        key=lambda item: (-item[1].voluntary, item[0]),
    )
    seconds, pct = used.wall, used.server / used.wall * 100
    exact = sum(d.cpu_ns for _, d in deltas) / 1e9 / seconds * 100
    print(
        f"  CPU over {seconds:.1f} s: {used.server:.2f} s = {pct:.3f} % of one core "
        f"(/proc/<pid>/stat granularity {100 / h.CLK_TCK / seconds:.3f} %); "
        f"from the threads' schedstat (ns) {exact:.3f} %; rest of the machine {other:.2f} cores"
    )
    main_thread = "main thread (/proc/<pid>/status)"
    for label, ids in ((main_thread, {pid}), (f"all {len(deltas)} threads", None)):
        a, b = (
            sum(s.voluntary for t, s in ts.items() if ids is None or t in ids)
            for ts in (threads0, threads1)
        )
        rate = (b - a) / seconds
        print(f"  voluntary context switches, {label}: {a} -> {b} (+{b - a}, {rate:.1f}/s)")
    print(f"  agent before/after: {before_agent} / {agent_counters(relay)}")
    print("  busiest threads over the window (tid = pid is the main thread):")
    for tid, d in deltas[:THREADS_SHOWN]:
        print(
            f"    tid {tid:>7}: {d.voluntary:5d} voluntary ({d.voluntary / seconds:5.2f}/s), "
            f"{d.involuntary:4d} involuntary, CPU {d.cpu_ns / 1e6:8.2f} ms"
        )
    if quiet := sum(1 for _, d in deltas if d.voluntary == 0):
        print(f"    ... and {quiet} threads that never woke")
    return pct, exact


def run_idle(args: argparse.Namespace, llm: h.Server) -> list[Row]:
    print(
        f"\n== idle CPU: python run.py, agent on (fake LLM), default interval; settle "
        f"{SETTLE_S:g} s, then {args.idle_seconds:g} s with nothing arriving"
    )
    pct: tuple[float, float] | None = None
    with (
        h.data_directory(None, "relay-bench-idle-") as data_dir,
        h.log_file("idle", "relay log (level info)") as log,
    ):
        for attempt in quiet_attempts("idle", args.max_wait):
            with default_relay(llm, data_dir, log) as relay:
                pct = measure_idle(args, relay, llm, attempt)
            if pct is not None:
                break
    values = {
        f"idle CPU, {args.idle_seconds:g} s (stat)": pct[0] if pct else None,
        "idle CPU (schedstat, all threads)": pct[1] if pct else None,
    }
    return table_rows("idle", f"{IDLE_LIMIT_PCT} %", values, "%")


# -- start-up ------------------------------------------------------------------------------------


def run_to_exit(code: str) -> float:
    """Seconds from spawning ``python -c code`` to its exit."""
    started = time.monotonic()
    command = [sys.executable, "-c", code]
    done = subprocess.run(command, cwd=h.ROOT, capture_output=True, timeout=30, check=False)
    if done.returncode != 0:
        msg = f"python -c {code!r} exited with {done.returncode}: {done.stderr.decode()[-400:]}"
        raise RuntimeError(msg)
    return time.monotonic() - started


def measure_starts(
    args: argparse.Namespace, llm: h.Server, log_path: Path
) -> dict[str, list[float]]:
    """Per start: ``ready`` (spawn to 200), ``stop`` (SIGTERM to exit) and each floor."""
    starts: dict[str, list[float]] = {k: [] for k in ("ready", "stop", *FLOORS)}
    with h.data_directory(None, "relay-bench-start-") as data_dir:
        for n in range(1, args.starts + 1):
            with default_relay(llm, data_dir, log_path) as relay:
                stop_s, code = h.timed_stop(relay)
            starts["ready"].append(relay.ready_s)
            starts["stop"].append(stop_s)
            for name, code_text in FLOORS.items():
                starts[name].append(run_to_exit(code_text))
            floors = ", ".join(f"{k} {starts[k][-1]:.3f} s" for k in FLOORS)
            print(
                f"  start {n}: spawn -> /health 200 {relay.ready_s:.3f} s, SIGTERM -> exit "
                f"{stop_s:.3f} s (code {code}); {floors}"
            )
    return starts


def run_startup(args: argparse.Namespace, llm: h.Server) -> list[Row]:
    print(
        f"\n== start-up: spawn -> first GET /health 200 of python run.py, {args.starts} starts "
        "(one data dir: the first start creates it), each with the floors after it"
    )
    ready: float | None = None
    with h.log_file("start", "relay logs (level info)") as log_path:
        for attempt in quiet_attempts("startup", args.max_wait):
            meter = h.Meter(idle=(llm.pid,))
            starts = measure_starts(args, llm, log_path)
            if (other := busy_during("startup", attempt, meter.read())) is None:
                continue
            ready, ready_all = median(starts["ready"]), starts["ready"]
            floors = {k: median(starts[k]) for k in FLOORS}
            print(
                f"  medians: relay {ready:.3f} s (min {min(ready_all):.3f}, max "
                f"{max(ready_all):.3f}); SIGTERM -> exit {median(starts['stop']):.3f} "
                f"s; rest of the machine {other:.2f} cores"
            )
            for name, value in floors.items():
                print(f"    floor {name:<13} python -c {FLOORS[name]!r}: {value:.3f} s")
            deps = floors["dependencies"]
            print(
                f"  the relay's own share (relay - dependency imports): {ready - deps:.3f} s, "
                f"of which importing its own modules {floors['relay modules'] - deps:.3f} s"
            )
            break
    target = f"start-up to /health 200, median of {args.starts}"
    return table_rows("startup", f"{START_LIMIT_S:g} s", {target: ready}, "s")


# -- a tick's own cost ---------------------------------------------------------------------------


OPTIONS = [
    *flags(quick=(bool, None, "idle 10 s, 2 starts, fewer reps")),
    arg("--only", help=f"comma-separated, from {','.join(PARTS)} (default: all)"),
    arg("--idle-seconds", type=at_least(0, float, above=True), help="idle window (60; quick 10)"),
    arg("--starts", type=at_least(1), help="relay starts (default 5; quick 2)"),
    arg("--reps", type=at_least(1), help="calls per pure figure (default 20000)"),
    arg("--actor-reps", type=at_least(1), help="calls per actor figure (default 2000)"),
    arg("--max-wait", type=at_least(0, float), default=300.0, help="s to wait for quiet (300)"),
]


def run(args: argparse.Namespace) -> int:
    fill_defaults(
        args, idle_seconds=(10, 60), starts=(2, 5), reps=(2000, 20_000), actor_reps=(200, 2000)
    )
    args.parts = choose(args.only, PARTS)
    exit_on_sigterm()
    print(
        f"sinain-relay cost bench: parts {','.join(args.parts)}; {os.cpu_count()} CPUs, "
        f"Python {sys.version.split()[0]}, 1-min load {h.load_1min():.2f}"
    )
    rows: list[Row] = []
    if "idle" in args.parts or "startup" in args.parts:
        with (
            h.log_file("fake-llm", "fake LLM output") as llm_log,
            h.fake_llm_process(llm_log) as llm,
        ):
            if "idle" in args.parts:
                rows += run_idle(args, llm)
            if "startup" in args.parts:
                rows += run_startup(args, llm)
    if "tick" in args.parts:
        rows += run_tick(args)
    head = f"{'target':<40} {'measured':>12} {'limit':>8} {'result':>7}  command"
    print(f"\n{head}\n{'-' * (len(head) + 33)}")
    for target, measured, limit, result, part in rows:
        command = f"python -m bench costs --only {part}"
        print(f"{target:<40} {measured:>12} {limit:>8} {result:>7}  {command}")
    return 0
