"""How throughput, p99 and memory change as the work grows: OCR size, connections, an hour.

Run from the repository root::

    python -m bench.bench_growth                 # 3 s x 3 rounds per step, 12 hour chunks
    python -m bench.bench_growth --quick         # 1 s x 1 round, fewer steps: a smoke run
    python -m bench.bench_growth --sweeps hour   # some sweeps (ocr, conns, hour; comma-separated)
    python -m bench.bench_growth --sweeps hour --feed-every 1 --sense-every 0.5 --sense-kib 16

Nothing should grow faster than linearly, and nothing without bound. Each sweep starts its own
relay (``python run.py --data-dir <temp dir>``, ``RELAY_SYNC=full``, a fake LLM ticking every
second) and a 1 s wrk warm-up. Every load is one wrk run (``bench/load.py``; ``wrk`` must be
installed), each step ``--rounds`` runs shown as medians, with the CPU of the relay, of wrk
and of the rest of the machine (``cores rel/wrk/oth``). RSS is the relay's VmRSS in MB.

``ocr``    ``POST /sense`` with 1, 4, 16, 64, 256 and 1024 KiB of OCR at 16 connections; each
           step first posts 146 events of its size (the ring, the rows the sense buffer keeps
           before it prunes, and 16), so it measures the steady state. It prints req/s, MiB/s,
           p50, p99, relay CPU per request and per KiB, RSS, RSS over the ring's size (copies
           kept of each event) and the database files; then each step against the 1 KiB one.
           Verdict: super-linear when CPU per request or p99 grows more than 1.2 x the size,
           or CPU grows as size^e with e above 1.2 into a step of 64 KiB or more.
``conns``  ``POST /feed`` at 1, 4, 16, 64, 128 and 256 connections: req/s, p50, p99, Little's
           law (conns / req/s) and the latencies over it, CPU per request. Verdicts: latency
           grows only by queueing when p99/L stays within 2 x its value at 16 connections; CPU
           per request does not grow when no step is above 1.3 x the lowest at fewer.
``hour``   an hour of events posted as fast as the relay takes them (an aiohttp client, 16
           connections): a transcript every ``--feed-every`` s and a screen event of
           ``--sense-kib`` KiB every ``--sense-every`` s over ``--hour-seconds``, in
           ``--chunks`` chunks. After each: posts, errors, rate, p99, CPU per post, RSS, the
           database and ``-wal`` files, ``GET /feed?after=0`` and ``GET /sense?after=0`` p50/p99
           (``~``: other CPU above 0.25 core meanwhile, ``!``: errors) and the ring sizes.
           Verdict, over the second half of the chunks: bounded when RSS grew less than
           max(2 MB, 3 %), each file less than max(0.25 MiB, 5 %) or a ``-wal`` stays under
           SQLite's autocheckpoint mark, and the GETs' p99 less than 1.5 x. ``agent.db`` grows
           by one entry per tick, by wall time: its growth is printed, not judged.

It prints figures and verdicts, and asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from actors.core.bodies import SENSE_BODY_LIMIT
from actors.feed_buffer import FEED_RING
from actors.kernel.storage import MIGRATIONS
from actors.sense_buffer import PRUNE_SLACK, SENSE_RING
from bench.harness import (
    Meter,
    Server,
    agent_env,
    agent_setup,
    choose,
    feed_body,
    fill_defaults,
    health,
    load_1min,
    percentile,
    relay_process,
    rss_mb,
    sense_body,
    where,
)
from bench.load import WRK_INSTALL_HINT, Round, Row, post, print_head, wrk_available, wrk_round

SWEEPS = ("ocr", "conns", "hour")
OCR_CONNS = 16
STEP_WARMUP = SENSE_RING + PRUNE_SLACK + OCR_CONNS
GET_CONNS = 16
HOUR_CONNS = 16
BUSY_OTHER = 0.25
CHUNK_MAX_S = 600.0
DB_PARTS = tuple(MIGRATIONS)
MIB = 1024 * 1024
GROWTH_LIMIT = 1.2
QUEUE_LIMIT = 2.0
CPU_FLAT_LIMIT = 1.3
RSS_SLACK_MB, RSS_SLACK_SHARE = 2.0, 0.03
DISK_SLACK_MIB, DISK_SLACK_SHARE = 0.25, 0.05
P99_SLACK = 1.5
WAL_MARK = 1000 * (4096 + 24) * 1.25
"""SQLite's autocheckpoint (1000 frames of a 4 KiB page and its header; the relay sets
neither) and a quarter more for the commit that crosses it."""


@dataclass(slots=True)
class Step(Row):
    """The rounds of one step of a sweep, and what was read after them."""

    label: int = 0
    rss: float = float("nan")
    disk: dict[str, int] = field(default_factory=dict)

    def cores(self) -> str:
        cpu = [self.median(a) for a in ("relay_cpu", "gen_cpu", "other_cpu")]
        return f"{cpu[0]:.2f}/{cpu[1]:.2f}/{cpu[2]:+.2f}"


def disk_usage(data_dir: str) -> dict[str, int]:
    """Bytes of each database file (``feed.db``, ``feed.db-wal``, ...; absent files are 0)."""
    sizes: dict[str, int] = {}
    for name in (f"{part}.db{suffix}" for part in DB_PARTS for suffix in ("", "-wal", "-shm")):
        path = Path(data_dir) / name
        sizes[name] = path.stat().st_size if path.exists() else 0
    return sizes


def total_mib(sizes: dict[str, int], suffix: str = "") -> float:
    return sum(v for k, v in sizes.items() if k.endswith(suffix)) / MIB


def fmt(value: float, spec: str, width: int) -> str:
    """``value`` formatted, or ``-`` when it is NaN."""
    return f"{'-' if math.isnan(value) else format(value, spec):>{width}}"


@dataclass(slots=True)
class Running:
    relay: Server
    data_dir: str
    start_rss: float


@contextlib.contextmanager
def sweep_relay(name: str) -> Iterator[Running]:
    """A fake LLM and a relay on a fresh data directory."""
    with (
        agent_setup(f"growth-{name}") as (llm, data_dir, log_path),
        relay_process(data_dir, log_path, agent_env(llm.base_url)) as relay,
    ):
        start = rss_mb(relay.pid)
        print(
            f"  relay pid {relay.pid} at {relay.base_url}; {where(data_dir)}; RSS after start "
            f"{start:.1f} MB; 1-min load {load_1min():.2f}"
        )
        yield Running(relay, data_dir, start)
        print(f"  fake LLM got {llm.calls} calls")


def measure_step(
    run: Running, label: int, path: str, conns: int, args: argparse.Namespace, body: bytes | None
) -> Step:
    step = Step("", path, conns, label=label)
    for _ in range(args.rounds):
        step.rounds.append(wrk_round(run.relay, path, conns, args.seconds, body=body, warmup_s=0))
    step.rss = rss_mb(run.relay.pid)
    step.disk = disk_usage(run.data_dir)
    return step


def print_errors(steps: Sequence[Step], unit: str) -> None:
    for step in steps:
        if step.errors():
            print(f"  errors at {step.label} {unit}: {dict(step.errors())}")


# -- OCR size ------------------------------------------------------------------------------------


def run_ocr(args: argparse.Namespace) -> None:
    sizes: tuple[int, ...] = (1, 16, 256, 1024) if args.quick else (1, 4, 16, 64, 256, 1024)
    print(
        f"\n== sweep ocr: POST /sense, OCR {', '.join(map(str, sizes))} KiB at {OCR_CONNS} "
        f"connections, {args.seconds:g} s x {args.rounds} rounds per step"
    )
    bodies = {kib: sense_body(kib * 1024) for kib in sizes}
    too_big = [kib for kib, body in bodies.items() if len(body) > SENSE_BODY_LIMIT]
    if too_big:
        print(f"  skipped (body above the /sense limit of {SENSE_BODY_LIMIT} bytes): {too_big}")
    steps: list[Step] = []
    with sweep_relay("ocr") as run:
        wrk_round(run.relay, "/sense", OCR_CONNS, 1, body=bodies[sizes[0]], warmup_s=0)
        for kib in (kib for kib in sizes if kib not in too_big):
            warm = post(run.relay.base_url, [("/sense", bodies[kib])] * STEP_WARMUP, OCR_CONNS)
            if warm.errors:
                print(f"  warm-up errors at {kib} KiB: {dict(warm.errors)}")
            step = measure_step(run, kib, "/sense", OCR_CONNS, args, bodies[kib])
            steps.append(step)
            print(
                f"  {kib:>5} KiB: {step.median('rps'):8.0f} req/s p99 {step.median('p99'):8.2f} ms "
                f"cpu {step.median('cpu_us'):8.0f} us/req RSS {step.rss:6.1f} MB "
                f"per round req/s {[round(s.rps) for s in step.rounds]}; "
                f"warm-up {STEP_WARMUP} posts in {warm.wall_s:.1f} s"
            )
        if steps:
            print_ocr(steps, bodies, run.start_rss)


def print_ocr(steps: Sequence[Step], bodies: dict[int, bytes], start_rss: float) -> None:
    print_head(
        f"{'ocr KiB':>7} {'body KiB':>8} {'req/s':>7} {'MiB/s':>7} {'p50 ms':>8} {'p99 ms':>8}",
        f"{'cpu us/req':>10} {'us/KiB':>7} {'cores rel/wrk/oth':>17} {'RSS MB':>7}",
        f"{'ring MiB':>8} {'RSS/ring':>8} {'disk MiB':>8} {'wal MiB':>7}",
        blank=True,
    )
    for step in steps:
        size = len(bodies[step.label])
        ring = SENSE_RING * size / MIB
        copies = (step.rss - start_rss) / ring if ring >= 1 else float("nan")
        cpu = step.median("cpu_us")
        print(
            f"{step.label:>7} {size / 1024:>8.1f} {step.median('rps'):>7.0f} "
            f"{step.median('rps') * size / MIB:>7.1f} {step.median('p50'):>8.2f} "
            f"{step.median('p99'):>8.2f} {cpu:>10.0f} {cpu / (size / 1024):>7.1f} "
            f"{step.cores():>17} {step.rss:>7.1f} {ring:>8.2f} {fmt(copies, '.2f', 8)} "
            f"{total_mib(step.disk):>8.1f} {total_mib(step.disk, '-wal'):>7.1f}"
        )
    print_errors(steps, "KiB")
    base = steps[0]
    base_size = len(bodies[base.label])
    print(f"\nGrowth against the {base.label} KiB step (<= 1: at most linear):")
    print_head(
        f"{'ocr KiB':>7} {'size x':>7} {'cpu x':>7} {'cpu x/size x':>12} {'p99 x/size x':>12}",
        f"{'step exp':>8}",
        blank=True,
    )
    worst: list[str] = []
    previous: tuple[int, float] | None = None
    for step in steps:
        size = len(bodies[step.label])
        size_x = size / base_size
        cpu_x = step.median("cpu_us") / base.median("cpu_us")
        p99_x = step.median("p99") / base.median("p99")
        exponent = float("nan")
        if previous is not None:
            exponent = math.log(step.median("cpu_us") / previous[1]) / math.log(size / previous[0])
        previous = (size, step.median("cpu_us"))
        print(
            f"{step.label:>7} {size_x:>7.1f} {cpu_x:>7.2f} {cpu_x / size_x:>12.3f} "
            f"{p99_x / size_x:>12.3f} {fmt(exponent, '.2f', 8)}"
        )
        if cpu_x / size_x > GROWTH_LIMIT:
            worst.append(f"cpu/request at {step.label} KiB is {cpu_x / size_x:.2f} x linear")
        if p99_x / size_x > GROWTH_LIMIT:
            worst.append(f"p99 at {step.label} KiB is {p99_x / size_x:.2f} x linear")
        if step.label >= 64 and exponent > GROWTH_LIMIT:
            worst.append(f"cpu/request grows as size^{exponent:.2f} into {step.label} KiB")
    last = steps[-1]
    per_kib = [s.median("cpu_us") / (len(bodies[s.label]) / 1024) for s in steps]
    print(
        f"verdict ocr: {'SUPER-LINEAR: ' + '; '.join(worst) if worst else 'at most linear'} "
        f"(cpu per KiB {per_kib[0]:.1f} us at {base.label} KiB, {per_kib[-1]:.1f} us at "
        f"{last.label} KiB; RSS {last.rss:.1f} MB with a "
        f"{SENSE_RING * len(bodies[last.label]) / MIB:.0f} MiB sense ring; "
        f"disk {total_mib(last.disk):.1f} MiB of which -wal {total_mib(last.disk, '-wal'):.1f})"
    )


# -- connections ---------------------------------------------------------------------------------


def run_conns(args: argparse.Namespace) -> None:
    conns_list: tuple[int, ...] = (1, 16, 256) if args.quick else (1, 4, 16, 64, 128, 256)
    print(
        f"\n== sweep conns: POST /feed at {', '.join(map(str, conns_list))} connections, "
        f"{args.seconds:g} s x {args.rounds} rounds per step"
    )
    steps: list[Step] = []
    with sweep_relay("conns") as run:
        wrk_round(run.relay, "/feed", OCR_CONNS, 1, body=feed_body(), warmup_s=0)
        for conns in conns_list:
            step = measure_step(run, conns, "/feed", conns, args, feed_body())
            steps.append(step)
            print(
                f"  {conns:>4} conns: {step.median('rps'):8.0f} req/s p99 "
                f"{step.median('p99'):7.2f} ms cpu {step.median('cpu_us'):5.0f} us/req "
                f"RSS {step.rss:6.1f} MB per round req/s {[round(s.rps) for s in step.rounds]}"
            )
    print_head(
        f"{'conns':>5} {'req/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'little ms':>9} {'p50/L':>6}",
        f"{'p99/L':>6} {'cpu us/req':>10} {'cpu x':>6} {'cores rel/wrk/oth':>17} {'RSS MB':>7}",
        blank=True,
    )
    ratios: dict[int, float] = {}
    for step in steps:
        little = 1000 * step.label / step.median("rps")
        ratios[step.label] = step.median("p99") / little
        print(
            f"{step.label:>5} {step.median('rps'):>7.0f} {step.median('p50'):>8.2f} "
            f"{step.median('p99'):>8.2f} {little:>9.2f} {step.median('p50') / little:>6.2f} "
            f"{ratios[step.label]:>6.2f} {step.median('cpu_us'):>10.0f} "
            f"{step.median('cpu_us') / steps[0].median('cpu_us'):>6.2f} {step.cores():>17} "
            f"{step.rss:>7.1f}"
        )
    print_errors(steps, "connections")
    loaded = [s for s in steps if s.label >= 16]
    if loaded:
        ref = ratios[loaded[0].label]
        worst = max(loaded, key=lambda s: ratios[s.label])
        grows = ratios[worst.label] > QUEUE_LIMIT * ref
        print(
            "verdict conns latency: "
            + (
                f"GROWS BEYOND QUEUEING: p99/L {ratios[worst.label]:.2f} at {worst.label} "
                f"connections against {ref:.2f} at {loaded[0].label}"
                if grows
                else f"grows only by queueing (p99/L {ref:.2f} at {loaded[0].label} connections, "
                f"at most {ratios[worst.label]:.2f} at {worst.label})"
            )
        )
    cpus = [(s.label, s.median("cpu_us")) for s in steps]
    growth = [(c / min(x for _, x in cpus[: n + 1]), label) for n, (label, c) in enumerate(cpus)]
    worst_x, worst_at = max(growth)
    print(
        f"verdict conns cpu: {'does not grow' if worst_x <= CPU_FLAT_LIMIT else 'GROWS'} with "
        f"connections (cpu us/req {cpus[0][1]:.0f} at {cpus[0][0]}, {cpus[-1][1]:.0f} at "
        f"{cpus[-1][0]}; the most above the lowest at fewer connections: {worst_x:.2f} x at "
        f"{worst_at})"
    )


# -- an hour of events ---------------------------------------------------------------------------


@dataclass(slots=True)
class HourRow:
    label: str
    posts: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    post_rate: float = float("nan")
    post_p99: float = float("nan")
    cpu_us: float = float("nan")
    other: float = float("nan")
    rss: float = float("nan")
    disk: dict[str, int] = field(default_factory=dict)
    gets: tuple[Round, Round] | None = None
    """``GET /feed?after=0`` and ``GET /sense?after=0``."""
    rings: tuple[object, object] = (None, None)


def read_state(run: Running, row: HourRow) -> HourRow:
    """RSS, file sizes, the two GETs' latency and the ring sizes, into ``row``."""
    row.rss = rss_mb(run.relay.pid)
    row.disk = disk_usage(run.data_dir)
    feed, sense = (
        wrk_round(run.relay, p, GET_CONNS, 1, warmup_s=0)
        for p in ("/feed?after=0", "/sense?after=0")
    )
    row.gets = (feed, sense)
    status, body = health(run.relay)
    row.rings = (body.get("messages"), body.get("senseEvents")) if status == 200 else (None, None)
    return row


def print_hour_row(row: HourRow) -> None:
    def get(sample: Round) -> str:
        text = f"{sample.p50:.2f}/{sample.p99:.2f}"
        text += "~" if sample.other_cpu > BUSY_OTHER else ""
        text += "!" if sample.errors else ""
        return f"{text:>13}"

    gets = " ".join(get(s) for s in row.gets) if row.gets else f"{'-':>13} {'-':>13}"
    disk = " ".join(f"{row.disk.get(f'{p}.db', 0) / MIB:>6.2f}" for p in DB_PARTS)
    print(
        f"  {row.label:>7} {row.posts:>5} {row.errors.total():>4} {fmt(row.post_rate, '.0f', 6)} "
        f"{fmt(row.post_p99, '.2f', 8)} {fmt(row.cpu_us, '.0f', 11)} {fmt(row.other, '+.2f', 5)} "
        f"{row.rss:>7.1f} {disk} {total_mib(row.disk, '-wal'):>6.2f} {gets} "
        f"{f'{row.rings[0]}/{row.rings[1]}':>7}"
    )


def run_hour(args: argparse.Namespace) -> None:
    base_ts = int(time.time() * 1000) - int(args.hour_seconds * 1000)
    feeds = int(args.hour_seconds / args.feed_every)
    senses = int(args.hour_seconds / args.sense_every)
    events = [(n * args.feed_every, "/feed", feed_body(n + 1)) for n in range(feeds)]
    for n in range(senses):
        t = n * args.sense_every
        events.append(
            (t, "/sense", sense_body(args.sense_kib * 1024, n + 1, base_ts + int(t * 1000)))
        )
    events.sort(key=lambda e: e[0])
    print(
        f"\n== sweep hour: {args.hour_seconds:g} simulated s, a transcript every "
        f"{args.feed_every:g} s and a {args.sense_kib} KiB screen event every "
        f"{args.sense_every:g} s: {feeds} /feed + {senses} /sense posts in {args.chunks} chunks "
        f"at {HOUR_CONNS} connections (rings: feed {FEED_RING}, sense {SENSE_RING})"
    )
    chunk_s = args.hour_seconds / args.chunks
    with sweep_relay("hour") as run:
        wrk_round(run.relay, "/feed?after=0", GET_CONNS, 1, warmup_s=0)
        print_head(
            f"{'sim min':>7} {'posts':>5} {'err':>4} {'post/s':>6} {'post p99':>8}",
            f"{'cpu us/post':>11} {'other':>5} {'RSS MB':>7} {'feed':>6} {'sense':>6} {'agent':>6}",
            f"{'wal':>6} {'GET /feed ms':>13} {'GET /sense ms':>13} {'rings':>7}",
            indent="  ",
            blank=True,
        )
        rows = [read_state(run, HourRow("start"))]
        print_hour_row(rows[0])
        for k in range(args.chunks):
            lo, hi = k * chunk_s, (k + 1) * chunk_s
            last = k == args.chunks - 1
            posts = [(p, b) for t, p, b in events if lo <= t < hi or (last and t >= hi)]
            meter = Meter(run.relay.pid)
            result = post(run.relay.base_url, posts, HOUR_CONNS, max_s=CHUNK_MAX_S)
            used = meter.read()
            row = HourRow(f"{hi / 60:.0f}", len(result.latencies_ms), result.errors)
            row.other = used.other(0.0)
            row.post_rate = len(posts) / result.wall_s if result.wall_s else float("nan")
            row.post_p99 = percentile(result.latencies_ms, 99)
            row.cpu_us = 1e6 * used.server / len(posts) if posts else float("nan")
            rows.append(read_state(run, row))
            print_hour_row(row)
        final = disk_usage(run.data_dir)
        print(
            "  files at the end: " + ", ".join(f"{k} {v / 1024:.0f} KiB" for k, v in final.items())
        )
    for row in rows:
        if row.errors:
            print(f"  errors in chunk {row.label}: {dict(row.errors)}")
    hour_verdict(rows[1:])


def hour_verdict(chunks: Sequence[HourRow]) -> None:
    if len(chunks) < 2:
        print("verdict hour: needs at least 2 chunks")
        return
    mid, end = chunks[(len(chunks) - 1) // 2], chunks[-1]
    print(
        f"\nSecond half of the hour (from {mid.label} to {end.label} simulated minutes; "
        "bounded = RSS under max(2 MB, 3 %), files under max(0.25 MiB, 5 %), GET p99 under 1.5 x):"
    )
    print(
        "  (a -wal file is bounded by SQLite's autocheckpoint: 1000 frames of 4096 + 24 bytes "
        f"plus the commit that crosses it, counted as 25% more: {WAL_MARK / MIB:.2f} MiB per file)"
    )
    unbounded: list[str] = []

    def check(name: str, a: float, b: float, slack: float, share: float, unit: str) -> None:
        ok, note = b - a < max(slack, share * a), ""
        if not ok and name.endswith("-wal"):
            ok = b * MIB <= WAL_MARK
            note = (
                "  still filling up to the checkpoint mark"
                if ok
                else "  GROWS beyond the checkpoint mark"
            )
        elif not ok:
            note = "  GROWS"
        print(f"  {name:<12} {a:8.2f} -> {b:8.2f} {unit} ({b - a:+.2f}){note}")
        if not ok:
            unbounded.append(f"{name} {a:.2f} -> {b:.2f} {unit}")

    check("RSS", mid.rss, end.rss, RSS_SLACK_MB, RSS_SLACK_SHARE, "MB")
    for name in (*(f"{p}.db" for p in ("feed", "sense")), *(f"{p}.db-wal" for p in DB_PARTS)):
        a, b = mid.disk.get(name, 0) / MIB, end.disk.get(name, 0) / MIB
        check(name, a, b, DISK_SLACK_MIB, DISK_SLACK_SHARE, "MiB")
    if mid.gets and end.gets:
        for name, a_s, b_s in zip(("GET /feed", "GET /sense"), mid.gets, end.gets, strict=True):
            ok = b_s.p99 < P99_SLACK * a_s.p99
            print(
                f"  {name + ' p99':<12} {a_s.p99:8.2f} -> {b_s.p99:8.2f} ms "
                f"({b_s.p99 / a_s.p99:.2f} x){'' if ok else '  GROWS'}"
            )
            if not ok:
                unbounded.append(f"{name} p99 {a_s.p99:.2f} -> {b_s.p99:.2f} ms")
    agent_a, agent_b = (row.disk.get("agent.db", 0) / MIB for row in (mid, end))
    print(
        f"  {'agent.db':<12} {agent_a:8.2f} -> {agent_b:8.2f} MiB ({agent_b - agent_a:+.2f}; "
        "one history entry per tick, by wall time, pruned after the retention)"
    )
    print(
        "verdict hour: "
        + ("GROWS over the second half: " + "; ".join(unbounded) if unbounded else "bounded")
    )


# -- main ----------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=int, help="wrk run per round (default 3)")
    parser.add_argument("--rounds", type=int, help="rounds per step; medians shown (default 3)")
    parser.add_argument("--sweeps", help=f"comma-separated, from {','.join(SWEEPS)} (default all)")
    parser.add_argument("--chunks", type=int, help="chunks of the hour sweep (default 12)")
    parser.add_argument("--hour-seconds", type=float, default=3600.0, help="simulated s (3600)")
    parser.add_argument("--feed-every", type=float, default=2.0, help="s between transcripts (2)")
    parser.add_argument("--sense-every", type=float, default=1.0, help="s between screens (1)")
    parser.add_argument("--sense-kib", type=int, default=4, help="OCR KiB per screen (4)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 1 s, 1 round, OCR 1/16/256/1024 KiB, 1/16/256 connections, 4 chunks",
    )
    args = parser.parse_args(argv)
    fill_defaults(args, seconds=(1, 3), rounds=(1, 3), chunks=(4, 12))
    if min(args.seconds, args.rounds, args.chunks) < 1:
        parser.error("--seconds, --rounds and --chunks must be at least 1")
    if min(args.hour_seconds, args.feed_every, args.sense_every) <= 0 or args.sense_kib < 0:
        parser.error("--hour-seconds, --feed-every, --sense-every above 0; --sense-kib >= 0")
    args.sweep_list = choose(parser, args.sweeps, SWEEPS)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not wrk_available():
        print(WRK_INSTALL_HINT, file=sys.stderr)
        return 2
    # SIGTERM ends the run through the ``finally`` blocks, which stop the relays.
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
    db = sqlite3.connect(":memory:")
    secure = db.execute("PRAGMA secure_delete").fetchone()[0]
    db.close()
    print(
        f"sinain-relay growth bench: {args.seconds:g} s x {args.rounds} rounds per step, sweeps "
        f"{','.join(args.sweep_list)}, {os.cpu_count()} CPUs, 1-min load {load_1min():.2f}; "
        f"SQLite {sqlite3.sqlite_version}, secure_delete {'on' if secure else 'off'} by default "
        "in this build (the relay sets FAST)"
    )
    started = time.monotonic()
    for name in args.sweep_list:
        {"ocr": run_ocr, "conns": run_conns, "hour": run_hour}[name](args)
    print(f"\ndone in {time.monotonic() - started:.0f} s; 1-min load {load_1min():.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
