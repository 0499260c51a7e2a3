"""The relay against its floor: a bare aiohttp app that answers like it with nothing behind it.

Run from the repository root::

    python -m bench.bench_floor             # 3 s x 3 rounds per row
    python -m bench.bench_floor --quick     # 1 s x 1 round: a smoke run

Three servers run at once: ``bare`` (``bench/bare_app.py``: the relay's loop, ``AppRunner``
and ``TCPSite`` settings, orjson and validators, no actors, no storage), ``relay`` (a
temporary directory, ``RELAY_SYNC=full``) and ``memory`` (``--data-dir :memory:``), both
relays with a fake LLM ticking every second. Each relay gets 100 ``/feed`` posts first; the
bare app then answers the ``relay``'s ``GET /feed?after=0`` and ``GET /health`` as captured.
Rows: ``GET /feed?after=0`` and ``GET /health`` at 16 and 64 connections (first, while the
feeds hold just those 100 items), ``POST /feed`` and ``POST /sense`` at 1, 16 and 64; every
round of a row measures the three servers in turn, the other two idle (their CPU not counted
as ``other cpu``).

It prints each row and, for relay/bare and memory/bare, the req/s ratio, the p99 difference
in ms, the verdict against the targets (req/s at least 0.9 x bare's at 16 and 64
connections; POST p99 at most bare's + 2 ms at 64) and each server's CPU per request in
microseconds. It asserts nothing.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import httpx

from actors.feed_buffer import FEED_RING
from bench.harness import (
    MEMORY,
    REQUEST_TIMEOUT_S,
    Server,
    agent_env,
    data_directory,
    log_file,
    post_many,
    print_health,
    relay_process,
    server_process,
    where,
)
from bench.load import (
    CONNECTIONS,
    ENDPOINTS,
    Row,
    header,
    measure,
    parse_rows_args,
    parser_with_rows,
    print_progress,
    print_ratios,
    print_table,
)
from transport.demo.fake_llm import FakeLLM

SERVERS = ("bare", "relay", "memory")
GETS = ("/feed?after=0", "/health")
TARGET_CONNECTIONS = (16, 64)
RPS_TARGET = 0.9
P99_TARGET_MS = 2.0


class Load(NamedTuple):
    method: str
    path: str
    conns: int

    @property
    def label(self) -> str:
        return self.path if self.method == "POST" else f"GET {self.path}"


LOADS = tuple(Load("POST", p, c) for p in ENDPOINTS for c in CONNECTIONS) + tuple(
    Load("GET", p, c) for p in GETS for c in TARGET_CONNECTIONS
)


def capture(server: Server, path: str, into: Path) -> int:
    """Save the server's answer to ``GET path`` in ``into``; its size in bytes."""
    resp = httpx.get(server.base_url + path, timeout=REQUEST_TIMEOUT_S)
    resp.raise_for_status()
    into.write_bytes(resp.content)
    return len(resp.content)


def run_floor(rounds: int, seconds: int) -> list[Row]:
    rows = {(name, load): Row(name, load.label, load.conns) for load in LOADS for name in SERVERS}
    with contextlib.ExitStack() as stack:
        llm = stack.enter_context(FakeLLM(mode="ok"))
        data_dir = stack.enter_context(data_directory(None, "relay-bench-floor-"))
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="relay-floor-")))
        print(
            f"\n== floor (fake LLM mode 'ok'; relay: {where(data_dir)}; memory: data dir "
            ":memory:; bare: bench/bare_app.py)"
        )
        servers: dict[str, Server] = {}
        for name, path in (("relay", data_dir), ("memory", MEMORY)):
            log_path = stack.enter_context(log_file(name, f"{name} log (level warning)"))
            servers[name] = stack.enter_context(
                relay_process(path, log_path, agent_env(llm.base_url))
            )
            post_many(servers[name], FEED_RING, 0)
        files = [tmp / "feed.json", tmp / "health.json"]
        sizes = [capture(servers["relay"], p, f) for p, f in zip(GETS, files, strict=True)]
        bodies = ("--feed-body", str(files[0]), "--health-body", str(files[1]))
        args = ["-m", "bench.bare_app", *bodies]
        log_path = stack.enter_context(log_file("bare", "bare app output"))
        servers = {
            "bare": stack.enter_context(server_process(args, log_path, name="bare app")),
            **servers,
        }
        print("  " + ", ".join(f"{n} pid {s.pid} at {s.base_url}" for n, s in servers.items()))
        print(
            f"  posted {FEED_RING} /feed to each relay; the bare app answers the relay's "
            f"GET /feed?after=0 ({sizes[0]} bytes) and GET /health ({sizes[1]} bytes)"
        )
        for load in sorted(LOADS, key=lambda load: load.method == "POST"):  # GETs first
            for _ in range(rounds):
                for name, server in servers.items():
                    idle = [s.pid for s in servers.values() if s is not server]
                    got = measure(server, load.path, load.conns, seconds, load.method, idle)
                    rows[name, load].rounds.append(got)
            for name in servers:
                print_progress(rows[name, load], f"{name:<6} ")
        for name in ("relay", "memory"):
            print_health(servers[name], f"{name}: ")
        print(f"  fake LLM got {llm.calls} calls")
    return [rows[name, load] for load in LOADS for name in SERVERS]


def verdict(load_label: str, conns: int, rps_ratio: float, p99_diff_ms: float) -> str:
    """``pass`` or ``FAIL`` against the targets for this row; ``-`` without a target."""
    if conns not in TARGET_CONNECTIONS:
        return "-"
    ok = rps_ratio >= RPS_TARGET
    if not load_label.startswith("GET") and conns == max(TARGET_CONNECTIONS):
        ok = ok and p99_diff_ms <= P99_TARGET_MS
    return "pass" if ok else "FAIL"


def floor_cells(row: Row, bare: Row) -> str:
    ratio = row.median("rps") / bare.median("rps")
    diff = row.median("p99") - bare.median("p99")
    return f"{ratio:>6.2f} {diff:>+8.2f} {verdict(bare.endpoint, bare.conns, ratio, diff):>6}"


def cpu_cells(bare: Row, others: list[Row]) -> str:
    """Each server's CPU per request, in microseconds."""
    return " ".join(
        f"{1e6 * r.median('relay_cpu') / r.median('rps'):>6.0f}" for r in (bare, *others)
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = parser_with_rows(__doc__.split("\n", 1)[0], "1 s x 1 round")
    args = parse_rows_args(parser, argv)
    print(header("floor bench", args))
    rows = run_floor(args.rounds, args.seconds)
    print_table(
        "Floor (bare = bench/bare_app.py, relay = RELAY_SYNC=full on disk, memory = "
        f"--data-dir :memory:; GET /feed?after=0 holds {FEED_RING} items; medians across "
        f"rounds; generator wrk; p50/p99 are wrk's percentiles):",
        rows,
    )
    print(
        f"\nFloor ratios (same run; p99 +ms = minus bare's p99; targets: req/s >= "
        f"{RPS_TARGET} x bare at {' and '.join(map(str, TARGET_CONNECTIONS))} connections, "
        f"POST p99 <= bare + {P99_TARGET_MS:g} ms at {max(TARGET_CONNECTIONS)}):"
    )
    cpu = ("server cpu us/req", f"{'bare':>6} {'relay':>6} {'memory':>6}", cpu_cells)
    group = f"{'req/s':>6} {'p99 +ms':>8} {'target':>6}"
    print_ratios(rows, "bare", SERVERS[1:], group, floor_cells, cpu)
    return 0


if __name__ == "__main__":
    sys.exit(main())
