"""Chaos soak: steady ingestion and hearing while actors crash or hang and the fake LLM fails in
every way it knows, against a relay with faults on; an acknowledged post lost or changed, or any
other correctness problem, makes the exit code 1. docs/benchmarks.md says what it prints."""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import itertools
import math
import multiprocessing
import random
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from actors.core.shapes import AUDIO_SOURCES, AudioSource
from bench.figures import Table
from bench.runner import flags
from bench.stats import percentile
from tests.support import harness, meter
from tests.support.chaos import (
    ACTORS,
    AGENT,
    CATCH_UP_S,
    ENDPOINTS,
    ITEMS_KEY,
    LEAD_S,
    QUIET_END_S,
    REQUEST_TIMEOUT_S,
    START_TIMEOUT_S,
    Fault,
    Reader,
    Record,
    acked_by_id,
    catch_up,
    inject_faults,
    labels,
    longest_failing_run,
    run_load,
)
from tests.support.chaos_hearing import AUDIO_ACTORS, Hearing, VariedStt, outcomes, stored
from tests.support.chaos_llm import LLMDrill

Rings = dict[str, list[dict[str, Any]] | None]
"""Each endpoint's ring as read at the end (``None``: it could not be read)."""
Drilled = Counter[tuple[str, str]] | None

OPTIONS = flags(
    minutes=(float, 10.0, "length of the run"),
    quick=(bool, None, "a 1-minute run"),
    rate=(float, 200.0, "posts/s to each endpoint"),
    baseline=(float, 0.1, "fault-free share"),
    seed=(int, None, "seed of the fault schedule"),
    keep=(bool, None, "keep the data dir and the logs"),
    audio_speed=(float, 4.0, "how many times real time the capture programs write"),
)


def _start(
    stack: contextlib.ExitStack, workdir: Path, seed: int, audio_speed: float
) -> tuple[harness.Server, Hearing, harness.Server]:
    """The fake LLM, the speech stand-in and the relay (faults on, both sources captured)."""
    llm = stack.enter_context(harness.fake_llm_process(workdir / "fake_llm.log"))
    hearing = Hearing(stack.enter_context(VariedStt(seed=seed)), audio_speed)
    settings = {"RELAY_FAULTS": "1", "OPENROUTER_API_KEY": "unused", "LOG_FORMAT": "json"}
    env = harness.relay_env(
        AGENT_BASE_URL=f"{llm.base_url}/v1", **settings, **AGENT, **hearing.env()
    )
    data, log = str(workdir / "data"), workdir / "relay.log"
    relay = stack.enter_context(harness.relay_process(data, log, env, log_level=None))
    return llm, hearing, relay


def _reread(relay: harness.Server, drill: LLMDrill) -> tuple[Rings, Drilled]:
    """Both rings read again from the start, and the drill's requests as the relay counted."""
    rings: Rings = dict.fromkeys(ENDPOINTS)
    with httpx.Client(timeout=5.0) as client:
        for e in ENDPOINTS:
            with contextlib.suppress(httpx.HTTPError, ValueError, KeyError):
                got = client.get(relay.base_url + e, params={"after": 0})
                rings[e] = got.json()[ITEMS_KEY[e]]
        return rings, drill.requests(client)


def run(args: argparse.Namespace) -> int:
    minutes = 1.0 if args.quick else args.minutes
    duration_s = minutes * 60
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    workdir = Path(tempfile.mkdtemp(prefix="sinain-chaos-"))
    stop_reading = threading.Event()
    pool = concurrent.futures.ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("spawn")
    )
    try:
        with contextlib.ExitStack() as stack:
            llm, hearing, relay = _start(stack, workdir, seed, args.audio_speed)
            hearing.start_sampling(relay.pid)
            rss_start = meter.rss_mb(relay.pid)
            print(
                f"chaos: {minutes:g} min, {args.rate:g} posts/s to each of /feed and /sense, "
                f"baseline {args.baseline:.0%}, seed {seed}\n  relay pid {relay.pid} on "
                f"{relay.base_url}, fake LLM on {llm.base_url}, data in {workdir}"
            )
            pool.submit(time.monotonic).result(timeout=START_TIMEOUT_S)  # the worker is up
            start_at = time.monotonic() + LEAD_S
            end_at = start_at + duration_s
            faults_at = start_at + duration_s * args.baseline
            rates = dict.fromkeys(ENDPOINTS, args.rate)
            load = pool.submit(run_load, relay.base_url, rates, start_at, end_at)
            readers = {e: Reader(relay.base_url, e, stop_reading).start() for e in ENDPOINTS}
            drill = LLMDrill(llm.base_url, relay.base_url, faults_at, end_at - QUIET_END_S)
            drill.start()

            def alive() -> bool:
                return relay.proc.poll() is None

            rng = random.Random(seed)
            faults = inject_faults(relay.base_url, alive, rng, faults_at, end_at - QUIET_END_S)
            heard_before_quiet = stored(labels(readers["/feed"]))
            if not alive():
                print(f"  the relay exited with {relay.proc.returncode} during the run")
            records = load.result(timeout=duration_s + LEAD_S + REQUEST_TIMEOUT_S + 60)
            acked = {e: acked_by_id(records, e) for e in ENDPOINTS}
            catch_up(readers, acked, CATCH_UP_S)
            drill.join(timeout=2 * REQUEST_TIMEOUT_S)
            was_alive = alive()
            status, health = harness.health(relay)
            if status != 200:
                print(f"  final /health answered {status}: {health}")
            rings, drilled = _reread(relay, drill)
            rss_end = meter.rss_mb(relay.pid)
            hearing.stop_sampling()
            at_end = hearing.processes(relay.pid)
            problems = report(records, acked, readers, rings, faults_at)
            print_faults(faults, drill.modes, health)
            drill.print(drilled)
            state = "yes" if was_alive else f"NO (exit {relay.proc.returncode})"
            print(
                f"relay RSS: {rss_start:.1f} MB at start, {rss_end:.1f} MB at the end\n"
                f"relay alive at the end: {state}"
            )
            _took, code = harness.timed_stop(relay)
            log_lines = (workdir / "relay.log").read_text(errors="replace").splitlines()
            heard = stored(labels(readers["/feed"]))
            problems += print_audio(hearing, faults, health, (heard, heard_before_quiet), at_end)
            print(
                f"  transcriber outcomes (log): {shown(outcomes(log_lines))}; "
                f"speech service requests: {hearing.stt.calls}"
            )
            print(f"relay exit code after SIGTERM: {code}")
        harness.print_log_summary(log_lines, "relay log", 50, above_info=True, first_lines=False)
        print(f"correctness problems: {problems}")
        return 0 if was_alive and problems == 0 and code == 0 else 1
    finally:  # stop the readers and the load's process; remove the data dir and logs, unless kept
        stop_reading.set()
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in multiprocessing.active_children():
            proc.kill()
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def shown(counts: Mapping[Any, int]) -> str:
    """``key count, ...`` in the keys' order, or ``none``."""
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"


def report(
    records: list[Record],
    acked: dict[str, dict[int, Record]],
    readers: dict[str, Reader],
    rings: Rings,
    faults_at: float,
) -> int:
    """Print the ingestion figures; the number of correctness problems found."""
    problems = 0
    print("\ningestion")
    table = Table(
        "endpoint <9|sent >8|acked >8|missing >8|changed >8|behind >7|longest failing run >22",
        indent="  ",
    )
    table.head()
    for e in ENDPOINTS:
        reader, sent = readers[e], [r for r in records if r.endpoint == e]
        state = reader.state
        missing, changed = reader.unseen_and_changed(acked[e])
        behind = sum(any(i not in state.seen for i in range(a, b + 1)) for a, b in state.behind)
        span, count, _statuses = longest_failing_run(sent)
        failing = f"{span:.2f} s ({count:3d})"
        table.row(e, *map(len, (sent, acked[e], missing, changed)), behind, failing)
        problems += len(missing) + len(changed) + len(state.violations) + (len(state.epochs) != 1)
        if missing:
            in_gap = [r for r in missing if any(a <= r.id <= b for a, b in state.behind)]
            print(f"    MISSING acknowledged ids (first 10): {sorted(r.id for r in missing)[:10]}")
            print(f"    of which {len(in_gap)} in ranges the reader fell behind on")
        for r in changed[:10]:
            print(f"    CHANGED id {r.id}: posted seq {r.seq}, seen {state.seen[r.id].label!r}")
        for v in state.violations[:10]:
            print(f"    ORDER {e}: {v}")
        if len(state.violations) > 10:
            print(f"    ... {len(state.violations)} order violations in all")
        if len(state.epochs) != 1:
            print(f"    EPOCH changed: {sorted(state.epochs)}")
        if reader.errors:
            problems += 1
            print(f"    a poller died: {reader.errors!r}")
        if (ring := rings[e]) is None:
            print("    the ring could not be re-read after the run")
        else:
            absent, other, not_as_read = reader.ring_differences(ring, acked[e])
            verdict = "matches" if not absent and not other else "DIFFERS"
            ids = f"ids {ring[0]['id']}..{ring[-1]['id']}" if ring else "empty"
            print(
                f"    final ring: {ids} ({len(ring)} items) {verdict}: {len(absent)} acknowledged "
                f"ids absent, {len(other)} with other content ({len(not_as_read)} not as read)"
            )
            problems += len(absent) + len(other)
        failures = shown(state.failures) if state.failures else "0"
        print(f"    reader: {state.polls} polls, {len(state.seen)} items, failures: {failures}")
    print("\ningestion latency of acknowledged posts (ms)")
    table = Table(
        "endpoint <9|phase <9|n >7|p50 >8.2f|p99 >8.2f|max >8.2f|errors by status <1", "  "
    )
    table.head()
    for e, (phase, in_faults) in itertools.product(
        ENDPOINTS, (("baseline", False), ("faults", True))
    ):
        rows = [r for r in records if r.endpoint == e and (r.started >= faults_at) == in_faults]
        ok = [r.latency_ms for r in rows if r.id >= 0]
        errors = shown(Counter(r.status for r in rows if r.id < 0))
        cells = (percentile(ok, 50), percentile(ok, 99), max(ok, default=math.nan))
        table.row(e, phase, len(ok), *cells, errors)
    return problems


def print_actors(names: Sequence[str], faults: Sequence[Fault], actors: Mapping[str, Any]) -> None:
    """Per actor: the crashes and hangs delivered, and its restarts, liveness and state as
    ``/health`` reported them at the end (flagged when restarts differ from crashes)."""
    delivered = Counter((f.actor, f.kind) for f in faults if f.outcome == "ok")
    width = max(8, *map(len, names))
    table = Table(f"actor <{width}|crash >6|hang >6|restarts >9|alive >6|state <1", indent="  ")
    table.head()
    for name in names:
        info, crashes = actors.get(name, {}), delivered[name, "crash"]
        restarts = info.get("restarts")
        flag = "" if restarts == crashes else "   <- restarts differ from crashes injected"
        alive, state = str(info.get("alive")), f"{info.get('state')}{flag}"
        table.row(name, crashes, delivered[name, "hang"], str(restarts), alive, state)


def print_faults(faults: list[Fault], modes: Counter[str], health: dict[str, Any]) -> None:
    print("\nfaults injected (actor: kind count)")
    print_actors(ACTORS, faults, health.get("actors", {}))
    undelivered = [f for f in faults if f.outcome != "ok"]
    print(f"  {len(faults) - len(undelivered)} faults delivered, {len(undelivered)} not delivered")
    for f in undelivered:
        print(f"    not delivered: {f.actor} {f.kind} ({f.outcome})")
    hangs = [f.seconds for f in faults if f.kind == "hang" and f.outcome == "ok"]
    if hangs:
        print(f"  hangs: {min(hangs):.2f} to {max(hangs):.2f} s, {sum(hangs):.1f} s in all")
    print(f"  fake LLM modes set: {dict(modes)}")
    if "agent" in health:
        keys = ("totalCalls", "failures", "parseFailures", "busySkips", "idleSkips", "state")
        print("  agent: " + ", ".join(f"{k} {health['agent'].get(k)}" for k in keys))
        print(f"  vision: {health['agent'].get('vision')}")


def print_audio(
    hearing: Hearing,
    faults: Sequence[Fault],
    health: dict[str, Any],
    heard: tuple[Counter[AudioSource], Counter[AudioSource]],
    at_end: Mapping[AudioSource, list[int]],
) -> int:
    """Print the audio actors' faults and restarts, and per source the transcripts stored
    (``heard``: in all, and before the quiet end) and capture processes; the problems found."""
    problems = 0
    print("\naudio path (two captures and the transcriber under the drills)")
    print_actors(AUDIO_ACTORS, faults, health.get("actors", {}))
    table = Table(
        "source <8|stored >7|after last fault >17|processes >10|most at once >13|"
        "samples with none >18|left after exit >16",
        indent="  ",
    )
    table.head()
    after_exit = hearing.processes(None)
    for source in AUDIO_SOURCES:
        now, left = at_end[source], after_exit[source]
        quiet, most = heard[0][source] - heard[1][source], hearing.most[source]
        none = f"{hearing.none[source]:12d}/{hearing.samples:<5d}"
        table.row(source, heard[0][source], quiet, len(now), most, none, len(left))
        for problem, what in (
            (len(now) != 1, f"{len(now)} capture processes at the end, not 1: {now}"),
            (most > 1, f"{most} capture processes at once during the run"),
            (bool(left), f"capture processes left after the relay exited: {left}"),
            (quiet == 0, "no transcript stored after the last fault"),
        ):
            if problem:
                problems += 1
                print(f"    PROBLEM {source}: {what}")
    return problems
