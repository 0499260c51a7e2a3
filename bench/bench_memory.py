"""The relay's resident memory: RSS after 100k posts, and whether it stays flat after that.

Run from the repository root::

    python -m bench.bench_memory            # 100,000 posts, then 1,000,000 more read every 100,000
    python -m bench.bench_memory --quick    # 10,000, then 40,000 more read every 10,000
    python -m bench.bench_memory --posts 100000 --long-posts 0

A relay like the ingest bench's (``python run.py --data-dir <temp dir>``, ``RELAY_SYNC=full``,
a fake LLM ticking every second) is read (VmRSS, ``/proc/<pid>/status``) right after start,
after ``--posts`` POSTs, then after every ``--rss-every`` further POSTs until ``--long-posts``
more. A POST counts when answered 200; half go to ``/feed``, half to ``/sense`` (4 KiB OCR),
alternately, at 64 connections, from an asyncio client of this script, which counts them
exactly. Each reading prints both counts, the RSS and its change since start and since
the ``--posts`` reading.

Targets: RSS at most 60 MB after 100,000 posts (fewer posts are said); and flat: the last
reading at most 1.0 MB above the ``--posts`` one, and the last 4 readings not a steady rise
(each more than 0.05 MB above the one before). A least-squares trend in MB per 100,000 posts
is printed for information. Posting stops early, and says so, after 3600 s or when a round of
posts gets no 200. It asserts nothing.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from bench import harness
from bench.load import ENDPOINTS, post, print_head

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
    """``--posts``: the reading after them is the reference."""
    readings: list[Reading] = field(default_factory=list)
    complete: bool = True

    @property
    def reference(self) -> int:
        return 1 if self.posts else 0


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
    text += ")"
    if reading.seconds:
        rate = (reading.posts - run.readings[-2].posts) / reading.seconds
        text += f"; {reading.seconds:.1f} s posting, {rate:.0f} ok/s; errors {reading.errors}"
    return text


def run_memory(args: argparse.Namespace) -> MemoryRun:
    run = MemoryRun(posts=args.posts)
    bodies = itertools.cycle([(path, harness.post_body(path)) for path in ENDPOINTS])
    with harness.agent_setup("memory") as (llm, data_dir, log_path):
        print(
            f"\n== memory (fake LLM mode 'ok'; {harness.where(data_dir)}; {args.posts:,} POSTs, "
            f"then {args.long_posts:,} more with an RSS reading every {args.rss_every:,}; half "
            f"/feed, half /sense (4 KiB OCR), alternately, at {CONNECTIONS} connections)"
        )
        with harness.relay_process(data_dir, log_path, harness.agent_env(llm.base_url)) as relay:
            ok: Counter[str] = Counter()
            errors: Counter[str] = Counter()
            run.readings.append(Reading(0, 0, harness.rss_mb(relay.pid), 0.0, 0))
            print(f"  relay pid {relay.pid} at {relay.base_url}")
            print(f"  {reading_line(run, run.readings[0])}")
            started = time.monotonic()
            for target in targets(args):
                if time.monotonic() - started > MAX_S:
                    print(f"  stopped early: the bound of {MAX_S:g} s")
                    run.complete = False
                    break
                t0 = time.monotonic()
                missing = target - ok.total()
                result = post(relay.base_url, itertools.islice(bodies, missing), CONNECTIONS)
                ok += result.ok
                errors += result.errors
                if not result.ok:
                    print(f"  stopped early: none of {missing} POSTs answered 200")
                    run.complete = False
                    break
                reading = Reading(
                    ok["/feed"],
                    ok["/sense"],
                    harness.rss_mb(relay.pid),
                    time.monotonic() - t0,
                    errors.total(),
                )
                run.readings.append(reading)
                print(f"  {reading_line(run, reading)}")
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
    print_head(
        f"{'posts':>10} {'/feed':>9} {'/sense':>9} {'RSS MB':>7} {'vs start':>8}",
        f"{'vs ' + format(run.posts, ','):>11} {'posting s':>9} {'errors':>6}",
    )
    for n, r in enumerate(run.readings):
        since_ref = f"{r.rss_mb - ref.rss_mb:>+11.2f}" if n >= run.reference else " " * 11
        print(
            f"{r.posts:>10,} {r.feed:>9,} {r.sense:>9,} {r.rss_mb:>7.1f} "
            f"{r.rss_mb - start.rss_mb:>+8.1f} {since_ref} {r.seconds:>9.1f} {r.errors:>6}"
        )
    verdict = "pass" if ref.rss_mb <= RSS_TARGET_MB else "FAIL"
    note = "" if ref.posts >= 100_000 else " (fewer posts than the target's 100,000)"
    print(
        f"RSS after {ref.posts:,} posts{note}: {ref.rss_mb:.1f} MB; target <= "
        f"{RSS_TARGET_MB:g} MB after 100,000 posts: {verdict}"
    )
    later = run.readings[run.reference :]
    if len(later) < 2:
        print("flat: not judged, no reading after that one (--long-posts 0)")
        return
    growth = later[-1].rss_mb - ref.rss_mb
    tail = later[-RISING_READINGS:]
    steps = [b.rss_mb - a.rss_mb for a, b in itertools.pairwise(tail)]
    rising = len(tail) == RISING_READINGS and all(step > RISING_STEP_MB for step in steps)
    verdict = "pass" if growth <= FLAT_MB and not rising else "FAIL"
    judged = len(tail) == RISING_READINGS
    rise_text = ("yes" if rising else "no") if judged else f"not judged, {len(tail)} readings"
    fit = statistics.linear_regression([float(r.posts) for r in later], [r.rss_mb for r in later])
    cut = "" if run.complete else " (cut short: see above)"
    print(
        f"flat over {later[-1].posts - ref.posts:,} more posts{cut}: RSS {growth:+.2f} MB since "
        f"the {ref.posts:,} reading (must be <= +{FLAT_MB:g} MB); the last {RISING_READINGS} "
        f"readings each more than +{RISING_STEP_MB:g} MB above the one before (a steady "
        f"rise): {rise_text} (must be no): {verdict}"
    )
    print(
        f"trend (least squares over the {len(later)} readings from {ref.posts:,} posts on): "
        f"{fit.slope * 100_000:+.3f} MB per 100,000 posts"
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--posts", type=int, help="POSTs before the reference reading (100000)")
    parser.add_argument("--long-posts", type=int, help="POSTs after it (1000000)")
    parser.add_argument("--rss-every", type=int, help="POSTs between two readings (100000)")
    parser.add_argument("--quick", action="store_true", help="10000, then 40000 read every 10000")
    args = parser.parse_args(argv)
    harness.fill_defaults(
        args, posts=(10_000, 100_000), long_posts=(40_000, 1_000_000), rss_every=(10_000, 100_000)
    )
    if args.posts < 0 or args.long_posts < 0 or args.rss_every < 1:
        parser.error("--posts and --long-posts must be >= 0, --rss-every at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    print(
        f"sinain-relay memory bench: {args.posts:,} posts then {args.long_posts:,} read every "
        f"{args.rss_every:,}"
    )
    run = run_memory(args)
    print(
        "\nMemory (relay VmRSS; posts = POSTs answered 200, /feed and /sense; targets: RSS "
        f"<= {RSS_TARGET_MB:g} MB after 100,000 posts, flat after that):"
    )
    print_memory(run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
