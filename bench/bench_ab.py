"""A/B of the ingest path: two checkouts of the relay served at once, measured in turns.

Run from the repository root, with the other checkout made by ``git worktree``::

    git worktree add /tmp/relay-before <commit>
    python -m bench.bench_ab /tmp/relay-before .          # 5 rounds of 2 s per row
    python -m bench.bench_ab /tmp/relay-before . --rounds 9 --seconds 3
    python -m bench.bench_ab /tmp/relay-before . --bare   # and the ratios to the floor

Each checkout's ``run.py`` serves with ``--data-dir :memory:`` (the code is compared, not the
disk) and no LLM key; ``wrk`` drives the ingest bench's ``POST /feed`` and ``POST /sense`` at
16 and 64 connections, the servers taking turns within each row (the first alternating), so
what the machine does meanwhile falls on both alike; ``--bare`` adds ``bench/bare_app.py``.
It prints per row each server's median req/s, p99 and CPU per request (µs: what the code
costs, which the rest of the machine moves less than the rate), the after/before ratios of
rate and CPU, and with ``--bare`` each checkout's ratio to the floor.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import tempfile
from pathlib import Path

from bench.harness import (
    Meter,
    feed_body,
    parser,
    relay_env,
    relay_process,
    sense_body,
    server_process,
)
from bench.load import run_wrk

ROWS = [(p, b, c) for p, b in (("/feed", feed_body()), ("/sense", sense_body())) for c in (16, 64)]


def main(argv: list[str] | None = None) -> int:
    args = parser(
        __doc__,
        _before=(Path, None, "the checkout measured as 'before'"),
        _after=(Path, None, "the checkout measured as 'after'"),
        rounds=(int, 5, "turns of each server per row"),
        seconds=(int, 2, "wrk's window per turn"),
        bare=(bool, None, "also serve bench/bare_app.py and give ratios to it"),
    ).parse_args(argv)
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
                line += (
                    f"  {rate['before'] / rate['bare']:11.3f}  {rate['after'] / rate['bare']:10.3f}"
                )
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
