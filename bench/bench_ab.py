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
It prints per row each server's median req/s and p99, after/before, and with ``--bare`` each
checkout's ratio to the floor.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import tempfile
from pathlib import Path

from bench.harness import feed_body, parser, relay_env, relay_process, sense_body, server_process
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
        urls = {}
        if args.bare:
            for name in ("feed", "health"):
                (tmp / f"{name}.json").write_bytes(b'{"ok": true}')
            bare = ["-m", "bench.bare_app", "--feed-body", str(tmp / "feed.json")]
            bare += ["--health-body", str(tmp / "health.json")]
            server = server_process(bare, tmp / "bare.log", name="bare app")
            urls["bare"] = stack.enter_context(server).base_url
        for name in ("before", "after"):
            root = getattr(args, name).resolve()
            env = relay_env(PYTHONPATH=str(root), LOG_LEVEL="warning")
            relay = relay_process(":memory:", tmp / f"{name}.log", env, log_level=None, cwd=root)
            urls[name] = stack.enter_context(relay).base_url
        names = list(urls)
        columns = "".join(f" {n + ' req/s':>13} {'p99':>6}" for n in names)
        print(f"{'row':14}{columns}  after/before" + ("  before/bare  after/bare" * args.bare))
        for path, body, conns in ROWS:
            rates: dict[str, list[float]] = {n: [] for n in names}
            p99s: dict[str, list[float]] = {n: [] for n in names}
            for turn in range(args.rounds):
                for name in names[turn % len(names) :] + names[: turn % len(names)]:
                    url, secs = urls[name] + path, args.seconds
                    result = run_wrk(url, conns=conns, seconds=secs, method="POST", body=body)
                    rates[name].append(result.requests / result.seconds)
                    p99s[name].append(result.p99_ms)
            rate = {n: statistics.median(rates[n]) for n in names}
            cells = "".join(f" {rate[n]:13.0f} {statistics.median(p99s[n]):6.2f}" for n in names)
            line = f"{path + ' @' + str(conns):14}{cells}  {rate['after'] / rate['before']:12.3f}"
            if args.bare:
                line += (
                    f"  {rate['before'] / rate['bare']:11.3f}  {rate['after'] / rate['bare']:10.3f}"
                )
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
