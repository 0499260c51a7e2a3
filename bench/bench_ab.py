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
import sys
import tempfile
from pathlib import Path

from bench.harness import parser, relay_env, relay_process, server_process
from bench.load import ENDPOINTS, in_turns

ROWS = [(path, conns) for path in ENDPOINTS for conns in (16, 64)]


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
        servers = {}
        if args.bare:
            for name in ("feed", "health"):
                (tmp / f"{name}.json").write_bytes(b'{"ok": true}')
            bare = ["-m", "bench.bare_app", "--feed-body", str(tmp / "feed.json")]
            bare += ["--health-body", str(tmp / "health.json")]
            server = server_process(bare, tmp / "bare.log", name="bare app")
            servers["bare"] = stack.enter_context(server)
        for name in ("before", "after"):
            root = getattr(args, name).resolve()
            env = relay_env(PYTHONPATH=str(root), LOG_LEVEL="warning")
            relay = relay_process(":memory:", tmp / f"{name}.log", env, log_level=None, cwd=root)
            servers[name] = stack.enter_context(relay)
        columns = "".join(f" {n + ' req/s':>13} {'p99':>6} {'cpu µs':>6}" for n in servers)
        ratios = "  after/before  cpu a/b" + ("  before/bare  after/bare" * args.bare)
        print(f"{'row':14}{columns}{ratios}")
        for path, conns in ROWS:
            rows = in_turns(
                servers, "POST", path, conns, args.rounds, args.seconds, rotate=True, warmup_s=0
            )
            rate = {n: row.median("rps") for n, row in rows.items()}
            cpu = {n: row.median("cpu_us") for n, row in rows.items()}
            cells = "".join(
                f" {rate[n]:13.0f} {r.median('p99'):6.2f} {cpu[n]:6.1f}" for n, r in rows.items()
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
