"""The relay's resident memory: RSS after 100k posts (half ``/feed``, half ``/sense``, at 64
connections), and whether it stays flat after that; docs/benchmarks.md has the rules."""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

from bench.figures import Table, at_least
from bench.load import ENDPOINTS, post
from bench.runner import arg, fill_defaults, flags
from tests.support import harness, meter

CONNECTIONS = 64
MAX_S = 3600.0
RSS_TARGET_MB = 60.0
FLAT_MB = 1.0
RISING_READINGS = 4
RISING_STEP_MB = 0.05


class Reading(NamedTuple):
    feed: int
    """``POST /feed`` answered 200 so far."""
    sense: int
    rss_mb: float
    seconds: float
    """Time spent posting since the previous reading."""
    errors: int

    @property
    def posts(self) -> int:
        return self.feed + self.sense


@dataclass(slots=True)
class MemoryRun:
    posts: int
    """``--posts``: the reading after them (``readings[reference]``) is the reference."""
    reference: int
    """1, or 0 (the reading at start) for no ``--posts``."""
    readings: list[Reading] = field(default_factory=list)
    complete: bool = True


def targets(args: argparse.Namespace) -> list[int]:
    """The post counts of the readings after the start."""
    steps = -(-args.long_posts // args.rss_every)  # ceil
    later = [args.posts + min(k * args.rss_every, args.long_posts) for k in range(1, steps + 1)]
    return ([args.posts] if args.posts else []) + later


def reading_line(run: MemoryRun, reading: Reading) -> str:
    start = run.readings[0].rss_mb
    text = (
        f"{reading.posts:>9,} posts (/feed {reading.feed:,}, /sense {reading.sense:,}): "
        f"RSS {reading.rss_mb:.1f} MB ({reading.rss_mb - start:+.1f} vs start"
    )
    if len(run.readings) > run.reference + 1:
        text += f", {reading.rss_mb - run.readings[run.reference].rss_mb:+.2f} vs {run.posts:,}"
    if reading.seconds:
        rate = (reading.posts - run.readings[-2].posts) / reading.seconds
        return f"{text}); {reading.seconds:.1f} s posting, {rate:.0f} ok/s; errors {reading.errors}"
    return text + ")"


def run_memory(args: argparse.Namespace) -> MemoryRun:
    run = MemoryRun(args.posts, 1 if args.posts else 0)
    bodies = itertools.cycle([(path, harness.post_body(path)) for path in ENDPOINTS])
    with harness.agent_setup("memory") as (llm, data_dir, log_path):
        mix = f"half /feed, half /sense (4 KiB OCR), alternately, at {CONNECTIONS} connections"
        print(f"\n== memory (fake LLM mode 'ok'; {harness.where(data_dir)}; {mix})")
        with harness.relay_process(data_dir, log_path, harness.agent_env(llm.base_url)) as relay:
            ok, errors = Counter[str](), Counter[str]()
            run.readings.append(Reading(0, 0, meter.rss_mb(relay.pid), 0.0, 0))
            print(f"  relay pid {relay.pid} at {relay.base_url}")
            print(f"  {reading_line(run, run.readings[0])}")
            started = time.monotonic()
            for target in targets(args):
                t0, missing = time.monotonic(), target - ok.total()
                if t0 - started > MAX_S:
                    print(f"  stopped early: the bound of {MAX_S:g} s")
                    run.complete = False
                    break
                result = post(relay.base_url, itertools.islice(bodies, missing), CONNECTIONS)
                ok, errors = ok + result.ok, errors + result.errors
                if not result.ok:
                    print(f"  stopped early: none of {missing} POSTs answered 200")
                    run.complete = False
                    break
                rss, took = meter.rss_mb(relay.pid), time.monotonic() - t0
                run.readings.append(Reading(ok["/feed"], ok["/sense"], rss, took, errors.total()))
                print(f"  {reading_line(run, run.readings[-1])}")
            if errors:
                print(f"  errors: {dict(errors)}")
            print(f"  fake LLM got {llm.calls} calls")
            harness.print_health(relay)
    return run


def print_memory(run: MemoryRun) -> None:
    """The readings, then the verdicts."""
    start = run.readings[0]
    if len(run.readings) <= run.reference:
        print(f"only the reading after start: RSS {start.rss_mb:.1f} MB (cut short)")
        return
    ref = run.readings[run.reference]
    table = Table(
        "posts >10,|/feed >9,|/sense >9,|RSS MB >7.1f|vs start >+8.1f|"
        f"vs {run.posts:,} >+11.2f|posting s >9.1f|errors >6"
    )
    table.head()
    for n, r in enumerate(run.readings):
        since_ref = r.rss_mb - ref.rss_mb if n >= run.reference else ""
        vs_start = r.rss_mb - start.rss_mb
        table.row(r.posts, r.feed, r.sense, r.rss_mb, vs_start, since_ref, r.seconds, r.errors)
    verdict = "pass" if ref.rss_mb <= RSS_TARGET_MB else "FAIL"
    note = "" if ref.posts >= 100_000 else " (fewer posts than the target's 100,000)"
    target = f"target <= {RSS_TARGET_MB:g} MB after 100,000 posts: {verdict}"
    print(f"RSS after {ref.posts:,} posts{note}: {ref.rss_mb:.1f} MB; {target}")
    later = run.readings[run.reference :]
    if len(later) < 2:
        print("flat: not judged, no reading after that one (--long-posts 0)")
        return
    growth, tail = later[-1].rss_mb - ref.rss_mb, later[-RISING_READINGS:]
    steps = [b.rss_mb - a.rss_mb for a, b in itertools.pairwise(tail)]
    judged = len(tail) == RISING_READINGS
    rising = judged and all(step > RISING_STEP_MB for step in steps)
    verdict = "pass" if growth <= FLAT_MB and not rising else "FAIL"
    rise_text = ("yes" if rising else "no") if judged else f"not judged, {len(tail)} readings"
    fit = statistics.linear_regression([float(r.posts) for r in later], [r.rss_mb for r in later])
    print(
        f"flat over {later[-1].posts - ref.posts:,} more posts"
        f"{'' if run.complete else ' (cut short: see above)'}: RSS {growth:+.2f} MB since "
        f"the {ref.posts:,} reading (must be <= +{FLAT_MB:g} MB); the last {RISING_READINGS} "
        f"readings each more than +{RISING_STEP_MB:g} MB above the one before (a steady "
        f"rise): {rise_text} (must be no): {verdict}\ntrend (least squares over the "
        f"{len(later)} readings from {ref.posts:,} posts on): "
        f"{fit.slope * 100_000:+.3f} MB per 100,000 posts"
    )


OPTIONS = [
    *flags(quick=(bool, None, "10000, then 40000 read every 10000")),
    arg("--posts", type=at_least(0), help="POSTs before the reference reading (100000)"),
    arg("--long-posts", type=at_least(0), help="POSTs after it (1000000)"),
    arg("--rss-every", type=at_least(1), help="POSTs between two readings (100000)"),
]


def run(args: argparse.Namespace) -> int:
    fill_defaults(
        args, posts=(10_000, 100_000), long_posts=(40_000, 1_000_000), rss_every=(10_000, 100_000)
    )
    print(
        f"sinain-relay memory bench: {args.posts:,} posts then {args.long_posts:,} read every "
        f"{args.rss_every:,}"
    )
    run = run_memory(args)
    print("\nMemory (relay VmRSS; posts = POSTs answered 200, /feed and /sense):")
    print_memory(run)
    return 0
