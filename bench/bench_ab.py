"""A/B of the ingest path: two checkouts of the relay served at once, measured in turns.

Run from the repository root, with the other checkout made by ``git worktree``::

    git worktree add /tmp/relay-before <commit>
    python -m bench.bench_ab /tmp/relay-before .          # 5 rounds of 2 s per row
    python -m bench.bench_ab /tmp/relay-before . --rounds 9 --seconds 3
    python -m bench.bench_ab /tmp/relay-before . --bare   # and the ratios to the floor

Both relays run as ``python run.py`` subprocesses of their own checkout, on free loopback
ports, with ``--data-dir :memory:`` (no fsync: what is compared is the code, not the disk)
and no LLM key. ``wrk`` (``apt-get install wrk``) drives ``POST /feed`` and ``POST /sense``
(4 KiB of code-like OCR), the bodies of the ingest bench, at 16 and 64 connections. Within
each row the two relays take turns, the first of a round alternating, so that what the
shared machine does meanwhile falls on both alike. With ``--bare``, ``bench/bare_app.py``
(the floor: the relay's loop, JSON and validation with nothing behind them) takes its turns
too. It prints, per row, the median requests per second, p99 and server CPU per request (µs:
what the code costs, which what else the machine runs moves less than the rate) of each
server, the ratios after/before of the median rates and CPU and, with ``--bare``, each
checkout's rate ratio to the floor. It asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
from pathlib import Path

from bench.harness import Meter, feed_body, relay_env, relay_process, sense_body, server_process
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
    parser.add_argument("--rounds", type=int, default=5, help="turns of each server per row")
    parser.add_argument("--seconds", type=int, default=2, help="wrk's window per turn")
    parser.add_argument(
        "--bare", action="store_true", help="also serve bench/bare_app.py and give ratios to it"
    )
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="relay-ab-")))
        urls, pids = {}, {}
        if args.bare:
            answers = [tmp / "feed.json", tmp / "health.json"]
            for answer in answers:
                answer.write_bytes(b'{"ok": true}')
            bare = ["-m", "bench.bare_app", "--feed-body", str(answers[0])]
            bare += ["--health-body", str(answers[1])]
            server = stack.enter_context(server_process(bare, tmp / "bare.log", name="bare app"))
            urls["bare"], pids["bare"] = server.base_url, server.pid
        for name in ("before", "after"):
            root = getattr(args, name).resolve()
            env = relay_env(PYTHONPATH=str(root), LOG_LEVEL="warning")
            relay = stack.enter_context(
                relay_process(":memory:", tmp / f"{name}.log", env, log_level=None, cwd=root)
            )
            urls[name], pids[name] = relay.base_url, relay.pid
        names = list(urls)
        columns = "".join(f" {n + ' req/s':>13} {'p99':>6} {'cpu µs':>6}" for n in names)
        ratios = "  after/before  cpu a/b" + ("  before/bare  after/bare" if args.bare else "")
        print(f"{'row':14}{columns}{ratios}")
        for path, body, conns in ROWS:
            rates: dict[str, list[float]] = {n: [] for n in names}
            p99s: dict[str, list[float]] = {n: [] for n in names}
            cpus: dict[str, list[float]] = {n: [] for n in names}
            for turn in range(args.rounds):
                order = names[turn % len(names) :] + names[: turn % len(names)]
                for name in order:
                    meter = Meter(pids[name])
                    result = run_wrk(
                        urls[name] + path,
                        conns=conns,
                        seconds=args.seconds,
                        method="POST",
                        body=body,
                    )
                    used = meter.read()
                    rates[name].append(result.requests / result.seconds)
                    p99s[name].append(result.p99_ms)
                    cpus[name].append(1e6 * used.server / max(result.requests, 1))
            rate = {n: statistics.median(rates[n]) for n in names}
            cpu = {n: statistics.median(cpus[n]) for n in names}
            cells = "".join(
                f" {rate[n]:13.0f} {statistics.median(p99s[n]):6.2f} {cpu[n]:6.1f}" for n in names
            )
            line = f"{path + ' @' + str(conns):14}{cells}  {rate['after'] / rate['before']:12.3f}"
            line += f"  {cpu['after'] / cpu['before']:7.3f}"
            if args.bare:
                line += f"  {rate['before'] / rate['bare']:11.3f}"
                line += f"  {rate['after'] / rate['bare']:10.3f}"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
