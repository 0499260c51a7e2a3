"""How throughput, p99 and memory grow with OCR size, connections and an hour of events: per
sweep a relay (a fake LLM ticking every second) driven by wrk, ``--rounds`` runs per step, then
a verdict and its rule (docs/benchmarks.md says how to read them)."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from actors.core.bodies import SENSE_BODY_LIMIT
from actors.ingest.feed_buffer import FEED_RING
from actors.ingest.sense_buffer import PRUNE_SLACK, SENSE_RING
from actors.kernel.schemas import MIGRATIONS
from bench.figures import Table, at_least
from bench.load import Round, Row, post, rows_args, wrk_round
from bench.runner import arg, choose, exit_on_sigterm, flags
from bench.stats import percentile, ratio
from tests.support import harness as h
from tests.support.meter import Meter, load_1min, rss_mb

SWEEPS = ("ocr", "conns", "hour")
CONNS = 16
"""Connections of the ``ocr`` and ``hour`` sweeps, and of the GETs."""
STEP_WARMUP = SENSE_RING + PRUNE_SLACK + CONNS
BUSY_OTHER = 0.25
CHUNK_MAX_S = 600.0
DB_PARTS = tuple(MIGRATIONS)
MIB = 1024 * 1024
GROWTH_LIMIT, QUEUE_LIMIT, CPU_FLAT_LIMIT = 1.2, 2.0, 1.3
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
    rss: float = math.nan
    disk: dict[str, int] = field(default_factory=dict)

    def cores(self) -> str:
        cpu = [self.median(a) for a in ("relay_cpu", "gen_cpu", "other_cpu")]
        return f"{cpu[0]:.2f}/{cpu[1]:.2f}/{cpu[2]:+.2f}"


def disk_usage(data_dir: str) -> dict[str, int]:
    """Bytes of each database file (``feed.db``, ``feed.db-wal``, ...; absent files are 0)."""
    names = (f"{part}.db{suffix}" for part in DB_PARTS for suffix in ("", "-wal", "-shm"))
    return {n: p.stat().st_size if (p := Path(data_dir) / n).exists() else 0 for n in names}


def total_mib(sizes: dict[str, int], suffix: str = "") -> float:
    return sum(v for k, v in sizes.items() if k.endswith(suffix)) / MIB


class Running(NamedTuple):
    """A sweep's relay, its data directory and its RSS after start."""

    relay: h.Server
    data_dir: str
    start_rss: float

    def step(
        self, label: int, path: str, conns: int, args: argparse.Namespace, body: bytes
    ) -> Step:
        rounds = [
            wrk_round(self.relay, path, conns, args.seconds, body=body, warmup_s=0)
            for _ in range(args.rounds)
        ]
        rss, disk = rss_mb(self.relay.pid), disk_usage(self.data_dir)
        return Step("", path, conns, rounds, label, rss, disk)


@contextlib.contextmanager
def sweep_relay(name: str) -> Iterator[Running]:
    """A fake LLM and a relay on a fresh data directory."""
    with (
        h.agent_setup(f"growth-{name}") as (llm, data_dir, log_path),
        h.relay_process(data_dir, log_path, h.agent_env(llm.base_url)) as relay,
    ):
        start = rss_mb(relay.pid)
        print(
            f"  relay pid {relay.pid} at {relay.base_url}; {h.where(data_dir)}; RSS after start "
            f"{start:.1f} MB; 1-min load {load_1min():.2f}"
        )
        yield Running(relay, data_dir, start)
        print(f"  fake LLM got {llm.calls} calls")


def print_errors(steps: Sequence[Step], unit: str) -> None:
    for step in (s for s in steps if s.errors()):
        print(f"  errors at {step.label} {unit}: {dict(step.errors())}")


def run_ocr(args: argparse.Namespace) -> None:
    sizes: tuple[int, ...] = (1, 16, 256, 1024) if args.quick else (1, 4, 16, 64, 256, 1024)
    print(f"\n== sweep ocr: POST /sense, OCR {', '.join(map(str, sizes))} KiB, {CONNS} connections")
    bodies = {kib: h.sense_body(kib * 1024) for kib in sizes}
    too_big = [kib for kib, body in bodies.items() if len(body) > SENSE_BODY_LIMIT]
    if too_big:
        print(f"  skipped (body above the /sense limit of {SENSE_BODY_LIMIT} bytes): {too_big}")
    steps: list[Step] = []
    with sweep_relay("ocr") as run:
        wrk_round(run.relay, "/sense", CONNS, 1, body=bodies[sizes[0]], warmup_s=0)
        for kib in (kib for kib in sizes if kib not in too_big):
            warm = post(run.relay.base_url, [("/sense", bodies[kib])] * STEP_WARMUP, CONNS)
            if warm.errors:
                print(f"  warm-up errors at {kib} KiB: {dict(warm.errors)}")
            steps.append(step := run.step(kib, "/sense", CONNS, args, bodies[kib]))
            print(
                f"  {kib:>5} KiB: {step.median('rps'):8.0f} req/s p99 {step.median('p99'):8.2f} ms "
                f"cpu {step.median('cpu_us'):8.0f} us/req RSS {step.rss:6.1f} MB "
                f"per round req/s {[round(r.rps) for r in step.rounds]}; "
                f"warm-up {STEP_WARMUP} posts in {warm.wall_s:.1f} s"
            )
        if steps:
            print_ocr(steps, {kib: len(body) for kib, body in bodies.items()}, run.start_rss)


def print_ocr(steps: Sequence[Step], sizes: dict[int, int], start_rss: float) -> None:
    table = Table(
        "ocr KiB >7|body KiB >8.1f|req/s >7.0f|MiB/s >7.1f|p50 ms >8.2f|p99 ms >8.2f|"
        "cpu us/req >10.0f|us/KiB >7.1f|cores rel/wrk/oth >17|RSS MB >7.1f|ring MiB >8.2f|"
        "RSS/ring >8.2f|disk MiB >8.1f|wal MiB >7.1f"
    )
    table.head(blank=True)
    for step in steps:
        size, cpu, rps = sizes[step.label], step.median("cpu_us"), step.median("rps")
        ring = SENSE_RING * size / MIB
        copies = (step.rss - start_rss) / ring if ring >= 1 else math.nan
        table.row(
            step.label, size / 1024, rps, rps * size / MIB, step.median("p50"), step.median("p99"),
            cpu, cpu / (size / 1024), step.cores(), step.rss, ring, copies, total_mib(step.disk),
            total_mib(step.disk, "-wal"),
        )  # fmt: skip
    print_errors(steps, "KiB")
    base, last = steps[0], steps[-1]
    print(f"\nGrowth against the {base.label} KiB step (<= 1: at most linear):")
    table = Table(
        "ocr KiB >7|size x >7.1f|cpu x >7.2f|cpu x/size x >12.3f|p99 x/size x >12.3f|step exp >8.2f"
    )
    table.head(blank=True)
    worst: list[str] = []
    cost = {s.label: s.median("cpu_us") for s in steps}
    for before, step in zip([None, *steps], steps, strict=False):
        kib, p99_x = step.label, step.median("p99") / base.median("p99")
        size_x, cpu_x = sizes[kib] / sizes[base.label], cost[kib] / cost[base.label]
        exponent = math.nan
        if before:
            exponent = math.log(cost[kib] / cost[before.label], sizes[kib] / sizes[before.label])
        table.row(step.label, size_x, cpu_x, cpu_x / size_x, p99_x / size_x, exponent)
        if cpu_x / size_x > GROWTH_LIMIT:
            worst.append(f"cpu/request at {step.label} KiB is {cpu_x / size_x:.2f} x linear")
        if p99_x / size_x > GROWTH_LIMIT:
            worst.append(f"p99 at {step.label} KiB is {p99_x / size_x:.2f} x linear")
        if step.label >= 64 and exponent > GROWTH_LIMIT:
            worst.append(f"cpu/request grows as size^{exponent:.2f} into {step.label} KiB")
    per_kib = [s.median("cpu_us") / (sizes[s.label] / 1024) for s in steps]
    print(
        f"verdict ocr: {'SUPER-LINEAR: ' + '; '.join(worst) if worst else 'at most linear'} "
        f"(cpu per KiB {per_kib[0]:.1f} us at {base.label} KiB, {per_kib[-1]:.1f} us at "
        f"{last.label} KiB; RSS {last.rss:.1f} MB with a "
        f"{SENSE_RING * sizes[last.label] / MIB:.0f} MiB sense ring; "
        f"disk {total_mib(last.disk):.1f} MiB of which -wal {total_mib(last.disk, '-wal'):.1f})"
    )


def run_conns(args: argparse.Namespace) -> None:
    conns_list: tuple[int, ...] = (1, 16, 256) if args.quick else (1, 4, 16, 64, 128, 256)
    print(f"\n== sweep conns: POST /feed at {', '.join(map(str, conns_list))} connections")
    steps: list[Step] = []
    with sweep_relay("conns") as run:
        wrk_round(run.relay, "/feed", CONNS, 1, body=h.feed_body(), warmup_s=0)
        for conns in conns_list:
            steps.append(step := run.step(conns, "/feed", conns, args, h.feed_body()))
            print(
                f"  {conns:>4} conns: {step.median('rps'):8.0f} req/s p99 "
                f"{step.median('p99'):7.2f} ms cpu {step.median('cpu_us'):5.0f} us/req "
                f"RSS {step.rss:6.1f} MB per round req/s {[round(r.rps) for r in step.rounds]}"
            )
    table = Table(
        "conns >5|req/s >7.0f|p50 ms >8.2f|p99 ms >8.2f|little ms >9.2f|p50/L >6.2f|"
        "p99/L >6.2f|cpu us/req >10.0f|cpu x >6.2f|cores rel/wrk/oth >17|RSS MB >7.1f"
    )
    table.head(blank=True)
    ratios: dict[int, float] = {}
    for s in steps:
        little = 1000 * s.label / s.median("rps")
        ratios[s.label] = s.median("p99") / little
        table.row(
            s.label, s.median("rps"), s.median("p50"), s.median("p99"), little,
            s.median("p50") / little, ratios[s.label], s.median("cpu_us"),
            s.median("cpu_us") / steps[0].median("cpu_us"), s.cores(), s.rss,
        )  # fmt: skip
    print_errors(steps, "connections")
    if loaded := [s.label for s in steps if s.label >= CONNS]:
        ref, worst = loaded[0], max(loaded, key=ratios.__getitem__)
        at_ref, at_worst = f"{ratios[ref]:.2f} at {ref}", f"{ratios[worst]:.2f} at {worst}"
        if ratios[worst] > QUEUE_LIMIT * ratios[ref]:
            verdict = f"GROWS BEYOND QUEUEING: p99/L {at_worst} connections against {at_ref}"
        else:
            verdict = f"grows only by queueing (p99/L {at_ref} connections, at most {at_worst})"
        print(f"verdict conns latency: {verdict}")
    cpus = [(s.label, s.median("cpu_us")) for s in steps]
    growth = [(c / min(x for _, x in cpus[: n + 1]), label) for n, (label, c) in enumerate(cpus)]
    worst_x, worst_at = max(growth)
    print(
        f"verdict conns cpu: {'does not grow' if worst_x <= CPU_FLAT_LIMIT else 'GROWS'} with "
        f"connections (cpu us/req {cpus[0][1]:.0f} at {cpus[0][0]}, {cpus[-1][1]:.0f} at "
        f"{cpus[-1][0]}; the most above the lowest at fewer connections: {worst_x:.2f} x at "
        f"{worst_at})"
    )


HOUR_TABLE = Table(
    "sim min >7|posts >5|err >4|post/s >6.0f|post p99 >8.2f|cpu us/post >11.0f|other >+5.2f|"
    "RSS MB >7.1f|feed >6.2f|sense >6.2f|agent >6.2f|wal >6.2f|GET /feed ms >13|"
    "GET /sense ms >13|rings >7",
    indent="  ",
)


class HourRow(NamedTuple):
    """What was read after a chunk of the hour (its label and errors): RSS, file sizes and
    ``GET /feed?after=0`` and ``GET /sense?after=0``."""

    label: str
    errors: Counter[str]
    rss: float
    disk: dict[str, int]
    gets: tuple[Round, ...]


def hour_row(run: Running, label: str, errors: Counter[str], *posting: float) -> HourRow:
    """Read RSS, file sizes, the two GETs' latency and the ring sizes after a chunk (``posting``:
    its posts, post/s, p99, CPU per post and other CPU); print its row."""
    rss, disk = rss_mb(run.relay.pid), disk_usage(run.data_dir)
    paths = ("/feed?after=0", "/sense?after=0")
    gets = tuple(wrk_round(run.relay, p, CONNS, 1, warmup_s=0) for p in paths)
    status, body = h.health(run.relay)
    rings = (body.get("messages"), body.get("senseEvents")) if status == 200 else (None, None)
    got = [
        f"{s.p50:.2f}/{s.p99:.2f}{'~' if s.other_cpu > BUSY_OTHER else ''}{'!' if s.errors else ''}"
        for s in gets
    ]
    sizes = [disk.get(f"{p}.db", 0) / MIB for p in DB_PARTS]
    posts, *figures = posting
    HOUR_TABLE.row(
        label, posts, errors.total(), *figures, rss, *sizes, total_mib(disk, "-wal"), *got,
        f"{rings[0]}/{rings[1]}",
    )  # fmt: skip
    return HourRow(label, errors, rss, disk, gets)


def run_hour(args: argparse.Namespace) -> None:
    base_ts = int(time.time() * 1000) - int(args.hour_seconds * 1000)
    feeds = int(args.hour_seconds / args.feed_every)
    senses = int(args.hour_seconds / args.sense_every)
    events = [(n * args.feed_every, "/feed", h.feed_body(n + 1)) for n in range(feeds)]
    for n, t in enumerate(k * args.sense_every for k in range(senses)):
        body = h.sense_body(args.sense_kib * 1024, n + 1, base_ts + int(t * 1000))
        events.append((t, "/sense", body))
    events.sort(key=lambda e: e[0])
    print(
        f"\n== sweep hour: {args.hour_seconds:g} simulated s, a transcript every "
        f"{args.feed_every:g} s and a {args.sense_kib} KiB screen event every "
        f"{args.sense_every:g} s: {feeds} /feed + {senses} /sense posts in {args.chunks} chunks "
        f"at {CONNS} connections (rings: feed {FEED_RING}, sense {SENSE_RING})"
    )
    chunk_s = args.hour_seconds / args.chunks
    with sweep_relay("hour") as run:
        wrk_round(run.relay, "/feed?after=0", CONNS, 1, warmup_s=0)
        HOUR_TABLE.head(blank=True)
        rows = [hour_row(run, "start", Counter(), 0, *[math.nan] * 4)]
        for k in range(args.chunks):
            lo, hi, last = k * chunk_s, (k + 1) * chunk_s, k == args.chunks - 1
            posts = [(p, b) for t, p, b in events if lo <= t < hi or (last and t >= hi)]
            meter = Meter(run.relay.pid)
            result = post(run.relay.base_url, posts, CONNS, max_s=CHUNK_MAX_S)
            used, took = meter.read(), result.latencies_ms
            rate, cpu_us = ratio(len(posts), result.wall_s), 1e6 * ratio(used.server, len(posts))
            chunk = (len(took), rate, percentile(took, 99), cpu_us, used.other(0))
            rows.append(hour_row(run, f"{hi / 60:.0f}", result.errors, *chunk))
        sizes = disk_usage(run.data_dir).items()
        print("  files at the end: " + ", ".join(f"{k} {v / 1024:.0f} KiB" for k, v in sizes))
    for row in (r for r in rows if r.errors):
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
        "\n  (a -wal file is bounded by SQLite's autocheckpoint: 1000 frames of 4096 + 24 bytes "
        f"plus the commit that crosses it, counted as 25% more: {WAL_MARK / MIB:.2f} MiB per file)"
    )
    unbounded: list[str] = []

    def check(name: str, a: float, b: float, slack: float, share: float, unit: str) -> None:
        ok = b - a < max(slack, share * a)
        note = "" if ok else "  GROWS"
        if not ok and name.endswith("-wal"):
            ok = b * MIB <= WAL_MARK
            note = "  " + ("still filling up to" if ok else "GROWS beyond") + " the checkpoint mark"
        print(f"  {name:<12} {a:8.2f} -> {b:8.2f} {unit} ({b - a:+.2f}){note}")
        if not ok:
            unbounded.append(f"{name} {a:.2f} -> {b:.2f} {unit}")

    check("RSS", mid.rss, end.rss, RSS_SLACK_MB, RSS_SLACK_SHARE, "MB")
    for name in ("feed.db", "sense.db", *(f"{p}.db-wal" for p in DB_PARTS)):
        a, b = mid.disk.get(name, 0) / MIB, end.disk.get(name, 0) / MIB
        check(name, a, b, DISK_SLACK_MIB, DISK_SLACK_SHARE, "MiB")
    gets = zip(("GET /feed p99", "GET /sense p99"), mid.gets, end.gets, strict=True)
    for name, a, b in ((name, a_get.p99, b_get.p99) for name, a_get, b_get in gets):
        ok = b < P99_SLACK * a
        print(f"  {name:<12} {a:8.2f} -> {b:8.2f} ms ({b / a:.2f} x){'' if ok else '  GROWS'}")
        if not ok:
            unbounded.append(f"{name} {a:.2f} -> {b:.2f} ms")
    agent_a, agent_b = (row.disk.get("agent.db", 0) / MIB for row in (mid, end))
    print(
        f"  {'agent.db':<12} {agent_a:8.2f} -> {agent_b:8.2f} MiB ({agent_b - agent_a:+.2f}; "
        "one history entry per tick, by wall time, pruned after the retention)\nverdict hour: "
        + ("GROWS over the second half: " + "; ".join(unbounded) if unbounded else "bounded")
    )


_POSITIVE = at_least(0, float, above=True)
OPTIONS = [
    *flags(quick=(bool, None, "smoke run: 1 s, 1 round, OCR 1/16/256/1024 KiB, 1/16/256 "
                  "connections, 4 chunks")),
    arg("--seconds", type=at_least(1), help="wrk run per round (default 3)"),
    arg("--rounds", type=at_least(1), help="rounds per step; medians shown (default 3)"),
    arg("--sweeps", help=f"comma-separated, from {','.join(SWEEPS)} (default all)"),
    arg("--chunks", type=at_least(1), help="chunks of the hour sweep (default 12)"),
    arg("--hour-seconds", type=_POSITIVE, default=3600.0, help="simulated s (3600)"),
    arg("--feed-every", type=_POSITIVE, default=2.0, help="s between transcripts (2)"),
    arg("--sense-every", type=_POSITIVE, default=1.0, help="s between screens (1)"),
    arg("--sense-kib", type=at_least(0), default=4, help="OCR KiB per screen (4)"),
]  # fmt: skip


def run(args: argparse.Namespace) -> int:
    rows_args(args, chunks=(4, 12))
    args.sweep_list = choose(args.sweeps, SWEEPS)
    exit_on_sigterm()
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        secure = db.execute("PRAGMA secure_delete").fetchone()[0]
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
