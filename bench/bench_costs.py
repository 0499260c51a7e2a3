"""What the relay costs when little happens: the CPU of an idle ``python3 run.py``, its start-up
time and a tick's own cost (:mod:`bench.tick_cost`), each against its target. A part waits for
a quiet machine and is retried when the rest of the machine got busy, since a fraction of a
core is the figure. docs/benchmarks.md says how each part is measured.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager as ContextManager
from pathlib import Path
from typing import Any, NamedTuple

from actors.agent.core.prompt import build_prompt
from actors.kernel.clock import SystemClock
from bench import tick_cost as tc
from bench.figures import Table, at_least
from bench.runner import arg, choose, exit_on_sigterm, fill_defaults, flags
from bench.stats import median, percentile
from config.logs import configure_logging
from tests.support import harness as h
from tests.support.meter import CLK_TCK, Meter, Usage, load_1min
from transport.agent.fake_llm import FakeLLM

PARTS = ("idle", "startup", "tick")
TICK_LIMIT_MS, IDLE_LIMIT_PCT, START_LIMIT_S = 2.0, 0.5, 1.0
QUIET_LOAD, QUIET_OTHER_CORES, ATTEMPTS = 0.5, 0.25, 3
BENCHES = ("-m bench ", "bench_", "bench.chaos", "bench/chaos")  # not to run beside this one
SETTLE_S, THREADS_SHOWN, DISK_REPS = 5.0, 12, 300
FLOORS = {
    "interpreter": "pass",
    "dependencies": "import aiohttp, pykka, structlog, httpx, orjson",
    "relay modules": "import run",
}

Row = tuple[str, str, str, str, str]  # a target's row: target, measured, limit, result, part


def table_rows(part: str, limit: str, values: dict[str, float | None], unit: str) -> list[Row]:
    """A row per target: ``pass`` when its value is under ``limit``; not measured when None."""
    bound = float(limit.split(maxsplit=1)[0])
    return [
        (name, "not measured", limit, "n/a", part)
        if value is None
        else (name, f"{value:.3f} {unit}", limit, "pass" if value < bound else "FAIL", part)
        for name, value in values.items()
    ]


def busy_reasons() -> list[str]:
    """Why the machine is not quiet now (empty when it is)."""
    load = load_1min()
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


def busy_during(part: str, attempt: int, used: Usage) -> float | None:
    """The cores the rest of the machine used; None (and say so) when too many."""
    if (other := used.other(used.children)) <= QUIET_OTHER_CORES:
        return other
    print(
        f"  {part} attempt {attempt}: the rest of the machine used {other:.2f} cores "
        f"(> {QUIET_OTHER_CORES}); discarded, retrying"
    )
    return None


def default_relay(llm: h.Server, data_dir: str, log: Path) -> ContextManager[h.Server]:
    """``python3 run.py --data-dir <data_dir>`` with a key and the fake LLM, its defaults else."""
    env = h.relay_env(OPENROUTER_API_KEY="x", AGENT_BASE_URL=llm.base_url + "/v1")
    return h.relay_process(data_dir, log, env, log_level=None)


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
        vol, invol = (int(status[f"{k}_ctxt_switches"]) for k in ("voluntary", "nonvoluntary"))
        stats[int(task.name)] = ThreadStat(vol, invol, cpu_ns)
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
    threads0, meter = thread_stats(pid), Meter(pid, idle=(llm.pid,))
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
        f"(/proc/<pid>/stat granularity {100 / CLK_TCK / seconds:.3f} %); "
        f"from the threads' schedstat (ns) {exact:.3f} %; rest of the machine {other:.2f} cores"
    )
    main_thread = "main thread (/proc/<pid>/status)"
    for label, ids in ((main_thread, {pid}), (f"all {len(deltas)} threads", threads0 | threads1)):
        a, b = (sum(s.voluntary for t, s in ts.items() if t in ids) for ts in (threads0, threads1))
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
        f"\n== idle CPU: python3 run.py, agent on (fake LLM), default interval; settle "
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
    names = (f"idle CPU, {args.idle_seconds:g} s (stat)", "idle CPU (schedstat, all threads)")
    values: dict[str, float | None] = dict(zip(names, pct or (None, None), strict=True))
    return table_rows("idle", f"{IDLE_LIMIT_PCT} %", values, "%")


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
        f"\n== start-up: spawn -> first GET /health 200 of python3 run.py, {args.starts} starts "
        "(one data dir: the first start creates it), each with the floors after it"
    )
    ready: float | None = None
    with h.log_file("start", "relay logs (level info)") as log_path:
        for attempt in quiet_attempts("startup", args.max_wait):
            meter = Meter(idle=(llm.pid,))
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


def run_tick(args: argparse.Namespace) -> list[Row]:
    print(
        f"\n== a tick's own cost: in-process relay (:memory:, SystemClock, fake LLM in-process, "
        f"interval 1 h); {args.reps} pure calls, {args.actor_reps} actor calls per figure"
    )
    values: dict[str, float | None] = {"tick own cost, median": None, "tick own cost, p99": None}
    log = io.StringIO()
    configure_logging("json", "info", stream=log)
    for attempt in quiet_attempts("tick", args.max_wait):
        stopped: list[bool] = []
        with FakeLLM() as llm, tc.in_process_relay(llm, h.MEMORY, stopped) as relay:
            feed, sense = tc.fill_rings(relay)
            meter = Meter()
            pure = tc.measure_pure(feed, sense, args.reps)
            actor, window = tc.measure_actors(relay, args.actor_reps)
            actor += tc.measure_records(relay, window, args.actor_reps)
        with (
            FakeLLM() as llm,
            h.data_directory(None, "relay-bench-tick-") as data_dir,
            tc.in_process_relay(llm, data_dir, stopped) as relay,
        ):
            fs = h.filesystem(data_dir)
            disk = tc.measure_records(relay, window, min(args.actor_reps, DISK_REPS), " on disk")
        if (other := busy_during("tick", attempt, meter.read())) is None:
            continue
        now_ms = SystemClock().now_ms()
        prompt = build_prompt(window, now_ms=now_ms)
        transcripts = sum(1 for item in feed.items if "openrouter]" in item.text)
        ocr = sorted({len(e.ocr) for e in sense.events})
        print(
            f"  rings: feed {len(feed.items)} items ({transcripts} transcripts), sense "
            f"{len(sense.events)} events (OCR {ocr[0]}-{ocr[-1]} chars, apps "
            f"{sorted({e.app for e in sense.events})}); window: audio {window.audio_count} "
            f"(kept {len(window.audio)}), screen {window.screen_count} (kept "
            f"{len(window.screen)} after dedup), {len(window.app_history)} app switches; prompt "
            f"{len(prompt)} chars; rest of the machine {other:.2f} cores; relays stopped "
            f"cleanly: {stopped}"
        )
        on_disk = f"not in the sum: the same on disk ({fs}, RELAY_SYNC=full: a commit is an fsync):"
        for title, figures in (
            ("(a) pure, on the snapshots:", pure),
            ("(b) through the actors (wall time of the caller; CPU/call: whole process):", actor),
            (on_disk, disk),
        ):
            print(f"  {title}\n" + "\n".join(figure.line() for figure in figures))
        parts = [f for f in pure + actor if f.name in tc.TICK_PARTS]
        median_ms = sum(median(f.ns) for f in parts) / 1e6
        p99_ms = sum(percentile(f.ns, 99) for f in parts) / 1e6
        print(
            f"  tick own cost = window (actor) + prompt + judgement + record with commit: median "
            f"{median_ms:.3f} ms, p99 {p99_ms:.3f} ms (sum of the p99s, pessimistic)"
        )
        values = {"tick own cost, median": median_ms, "tick own cost, p99": p99_ms}
        break
    h.print_log_summary(log.getvalue().splitlines(), "in-process relay log", above_info=True)
    return table_rows("tick", f"{TICK_LIMIT_MS:g} ms", values, "ms")


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
        f"Python {sys.version.split()[0]}, 1-min load {load_1min():.2f}"
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
    table = Table("target <40|measured >12|limit >8|result >7|command <")
    table.head(blank=True)
    for *cells, part in rows:
        table.row(*cells, f"python3 -m bench costs --only {part}")
    return 0
