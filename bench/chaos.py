"""Chaos soak: steady ingestion and hearing while actors crash or hang at random and the fake
LLM fails in every way it knows; nothing acknowledged may be lost, so any correctness problem
makes the exit code 1. It starts a fake LLM, a relay with faults on capturing two sources, a
process posting to ``/feed`` and ``/sense`` and pollers reading them back; docs/benchmarks.md
says what the figures are.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import itertools
import multiprocessing
import random
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from actors.core.shapes import AUDIO_SOURCES, AudioSource
from bench.runner import flags
from bench.stats import percentile
from tests.support import harness
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
    LLMDrill,
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
    env = harness.relay_env(
        RELAY_FAULTS="1",
        OPENROUTER_API_KEY="unused",
        AGENT_BASE_URL=f"{llm.base_url}/v1",
        LOG_FORMAT="json",
        **AGENT,
        **hearing.env(),
    )
    data, log = str(workdir / "data"), workdir / "relay.log"
    relay = stack.enter_context(harness.relay_process(data, log, env, log_level=None))
    return llm, hearing, relay


def _reread(
    relay: harness.Server, drill: LLMDrill
) -> tuple[dict[str, list[dict[str, Any]] | None], Counter[tuple[str, str]] | None]:
    """Both rings read again from the start, and the drill's requests as the relay counted."""
    rings: dict[str, list[dict[str, Any]] | None] = dict.fromkeys(ENDPOINTS)
    with httpx.Client(timeout=5.0) as client:
        for e in ENDPOINTS:
            with contextlib.suppress(httpx.HTTPError, ValueError, KeyError):
                got = client.get(relay.base_url + e, params={"after": 0})
                rings[e] = got.json()[ITEMS_KEY[e]]
        return rings, drill.requests(client)


def _clean_up(pool: concurrent.futures.Executor, workdir: Path, *, keep: bool) -> None:
    """Stop the load's process and remove the data directory and the logs (unless kept)."""
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in multiprocessing.active_children():
        proc.kill()
    if keep:
        print(f"kept {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)


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
            rss_start = harness.rss_mb(relay.pid)
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
            rss_end = harness.rss_mb(relay.pid)
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
            heard = stored(labels(readers["/feed"]))
            log_lines = (workdir / "relay.log").read_text(errors="replace").splitlines()
            figures = AudioFigures(
                faults=Counter((f.actor, f.kind) for f in faults if f.outcome == "ok"),
                actors=health.get("actors", {}),
                stored=heard,
                stored_quiet=heard - heard_before_quiet,
                outcomes=outcomes(log_lines),
                at_end=at_end,
                left=hearing.processes(None),
            )
            problems += print_audio(hearing, figures)
            print(f"relay exit code after SIGTERM: {code}")
        lines = (workdir / "relay.log").read_text(errors="replace").splitlines()
        harness.print_log_summary(lines, "relay log", 50, above_info=True, first_lines=False)
        print(f"correctness problems: {problems}")
        return 0 if was_alive and problems == 0 and code == 0 else 1
    finally:
        stop_reading.set()
        _clean_up(pool, workdir, keep=args.keep)


def report(
    records: list[Record],
    acked: dict[str, dict[int, Record]],
    readers: dict[str, Reader],
    rings: dict[str, list[dict[str, Any]] | None],
    faults_at: float,
) -> int:
    """Print the ingestion figures; the number of correctness problems found."""
    problems = 0
    print("\ningestion")
    print(
        f"  {'endpoint':9} {'sent':>8} {'acked':>8} {'missing':>8} {'changed':>8} {'behind':>7} "
        f"{'longest failing run':>22}"
    )
    for e in ENDPOINTS:
        reader, sent = readers[e], [r for r in records if r.endpoint == e]
        state = reader.state
        missing, changed = reader.unseen_and_changed(acked[e])
        behind = [
            (a, b) for a, b in state.behind if any(i not in state.seen for i in range(a, b + 1))
        ]
        span, count, _statuses = longest_failing_run(sent)
        print(
            f"  {e:9} {len(sent):8d} {len(acked[e]):8d} {len(missing):8d} {len(changed):8d}"
            f" {len(behind):7d} {span:14.2f} s ({count:3d})"
        )
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
        ring = rings[e]
        if ring is None:
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
        failures = ", ".join(f"{k} {v}" for k, v in sorted(state.failures.items()))
        print(
            f"    reader: {state.polls} polls, {len(state.seen)} items, failures: {failures or '0'}"
        )

    print("\ningestion latency of acknowledged posts (ms)")
    print(
        f"  {'endpoint':9} {'phase':9} {'n':>7} {'p50':>8} {'p99':>8} {'max':>8}  errors by status"
    )
    for e, (phase, in_faults) in itertools.product(
        ENDPOINTS, (("baseline", False), ("faults", True))
    ):
        rows = [r for r in records if r.endpoint == e and (r.started >= faults_at) == in_faults]
        ok = [r.latency_ms for r in rows if r.id >= 0]
        errors = Counter(r.status for r in rows if r.id < 0)
        shown = ", ".join(f"{k} {v}" for k, v in sorted(errors.items())) or "none"
        print(
            f"  {e:9} {phase:9} {len(ok):7d} {percentile(ok, 50):8.2f} "
            f"{percentile(ok, 99):8.2f} {max(ok, default=float('nan')):8.2f}  {shown}"
        )
    return problems


def print_faults(faults: list[Fault], modes: Counter[str], health: dict[str, Any]) -> None:
    print("\nfaults injected (actor: kind count)")
    by_actor = Counter((f.actor, f.kind) for f in faults if f.outcome == "ok")
    actors = health.get("actors", {})
    print(f"  {'actor':8} {'crash':>6} {'hang':>6} {'restarts':>9} {'alive':>6}  state")
    for name in ACTORS:
        info, crashes = actors.get(name, {}), by_actor[name, "crash"]
        restarts = info.get("restarts")
        flag = "" if restarts == crashes else "   <- restarts differ from crashes injected"
        print(
            f"  {name:8} {crashes:6d} {by_actor[name, 'hang']:6d} {restarts!s:>9} "
            f"{info.get('alive')!s:>6}  {info.get('state')}{flag}"
        )
    undelivered = [f for f in faults if f.outcome != "ok"]
    print(f"  {by_actor.total()} faults delivered, {len(undelivered)} not delivered")
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


@dataclass(frozen=True, slots=True)
class AudioFigures:
    """What the soak saw of the audio path, for :func:`print_audio`."""

    faults: Mapping[tuple[str, str], int]
    """Faults delivered, by (actor, kind)."""
    actors: Mapping[str, Any]
    """``/health.actors`` at the end."""
    stored: Mapping[AudioSource, int]
    stored_quiet: Mapping[AudioSource, int]
    """Transcripts stored after the last fault."""
    outcomes: Mapping[str, int]
    at_end: Mapping[AudioSource, list[int]]
    """The capture processes of the relay just before it was stopped."""
    left: Mapping[AudioSource, list[int]]
    """Capture processes alive once the relay had exited (orphans)."""


def print_audio(hearing: Hearing, figures: AudioFigures) -> int:
    """Print the audio figures; the number of problems found."""
    problems = 0
    print("\naudio path (two captures and the transcriber under the drills)")
    print(f"  {'actor':15} {'crash':>6} {'hang':>6} {'restarts':>9} {'alive':>6}  state")
    for name in AUDIO_ACTORS:
        info, crashes = figures.actors.get(name, {}), figures.faults.get((name, "crash"), 0)
        restarts = info.get("restarts")
        flag = "" if restarts == crashes else "   <- restarts differ from crashes injected"
        print(
            f"  {name:15} {crashes:6d} {figures.faults.get((name, 'hang'), 0):6d} "
            f"{restarts!s:>9} {info.get('alive')!s:>6}  {info.get('state')}{flag}"
        )
    print(f"  {'source':8} {'stored':>7} {'after last fault':>17} {'processes':>10}"
          f" {'most at once':>13} {'samples with none':>18} {'left after exit':>16}")  # fmt: skip
    for source in AUDIO_SOURCES:
        at_end, left = figures.at_end[source], figures.left[source]
        quiet, most = figures.stored_quiet[source], hearing.most[source]
        print(
            f"  {source:8} {figures.stored[source]:7d} {quiet:17d} {len(at_end):10d} "
            f"{most:13d} {hearing.none[source]:12d}/{hearing.samples:<5d} {len(left):16d}"
        )
        for problem, what in (
            (len(at_end) != 1, f"{len(at_end)} capture processes at the end, not 1: {at_end}"),
            (most > 1, f"{most} capture processes at once during the run"),
            (bool(left), f"capture processes left after the relay exited: {left}"),
            (quiet == 0, "no transcript stored after the last fault"),
        ):
            if problem:
                problems += 1
                print(f"    PROBLEM {source}: {what}")
    shown = ", ".join(f"{k} {v}" for k, v in sorted(figures.outcomes.items())) or "none"
    print(f"  transcriber outcomes (log): {shown}; speech service requests: {hearing.stt.calls}")
    return problems
