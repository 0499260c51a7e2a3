"""A/B of the ingest path: two checkouts of the relay served at once, measured in turns.

Run from the repository root, with the other checkout made by ``git worktree``::

    git worktree add /tmp/relay-before <commit>
    python -m bench.bench_ab /tmp/relay-before .          # 5 rounds of 2 s per row
    python -m bench.bench_ab /tmp/relay-before . --rounds 9 --seconds 3

Both relays run as ``python run.py`` subprocesses of their own checkout, on free loopback
ports, with ``--data-dir :memory:`` (no fsync: what is compared is the code, not the disk)
and no LLM key. ``wrk`` (``apt-get install wrk``) drives ``POST /feed`` and ``POST /sense``
(4 KiB of code-like OCR), the bodies of the ingest bench, at 16 and 64 connections. Within
each row the two relays take turns, the first of a round alternating, so that what the
shared machine does meanwhile falls on both alike. It prints, per row, the median requests
per second and p99 of each checkout, and the ratio after/before of the medians. It asserts
nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
from pathlib import Path

from bench.harness import feed_body, relay_env, relay_process, sense_body
from bench.load import run_wrk

ROWS = [
    (path, body, conns)
    for path, body in (("/feed", feed_body()), ("/sense", sense_body()))
    for conns in (16, 64)
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="the checkout measured as 'before'")
    parser.add_argument("after", type=Path, help="the checkout measured as 'after'")
    parser.add_argument("--rounds", type=int, default=5, help="turns of each relay per row")
    parser.add_argument("--seconds", type=int, default=2, help="wrk's window per turn")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="relay-ab-")))
        urls = {}
        for name in ("before", "after"):
            root = getattr(args, name).resolve()
            env = relay_env(PYTHONPATH=str(root), LOG_LEVEL="warning")
            relay = stack.enter_context(
                relay_process(":memory:", tmp / f"{name}.log", env, log_level=None, cwd=root)
            )
            urls[name] = relay.base_url
        header = ("row", "before req/s", "p99 ms", "after req/s", "p99 ms")
        print("{:14} {:>12} {:>7} {:>12} {:>7}  ratio".format(*header))
        for path, body, conns in ROWS:
            rates: dict[str, list[float]] = {"before": [], "after": []}
            p99s: dict[str, list[float]] = {"before": [], "after": []}
            for turn in range(args.rounds):
                for name in ("before", "after") if turn % 2 == 0 else ("after", "before"):
                    result = run_wrk(
                        urls[name] + path,
                        conns=conns,
                        seconds=args.seconds,
                        method="POST",
                        body=body,
                    )
                    rates[name].append(result.requests / result.seconds)
                    p99s[name].append(result.p99_ms)
            before, after = (statistics.median(rates[n]) for n in ("before", "after"))
            p99_before, p99_after = (statistics.median(p99s[n]) for n in ("before", "after"))
            row = f"{path} @{conns}"
            print(
                f"{row:14} {before:12.0f} {p99_before:7.2f} {after:12.0f} {p99_after:7.2f}"
                f"  {after / before:.3f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
