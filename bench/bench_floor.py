"""The relay against its floor, a bare aiohttp app that answers like it with nothing behind it:
three servers measured by wrk in turns; docs/benchmarks.md has the targets."""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from pathlib import Path

import httpx

from actors.ingest.feed_buffer import FEED_RING
from bench import load
from bench.figures import print_progress, print_ratios, print_table
from bench.stats import ratio
from tests.support import harness
from transport.agent.fake_llm import FakeLLM

SERVERS = ("bare", "relay", "memory")
GETS = ("/feed?after=0", "/health")
TARGET_CONNECTIONS = (16, 64)
RPS_TARGET, P99_TARGET_MS = 0.9, 2.0
LOADS = [("POST", p, c) for p in load.ENDPOINTS for c in load.CONNECTIONS]
LOADS += [("GET", p, c) for p in GETS for c in TARGET_CONNECTIONS]


def run_floor(rounds: int, seconds: int) -> list[load.Row]:
    rows: dict[tuple[str, str, str, int], load.Row] = {}
    with contextlib.ExitStack() as stack:
        llm = stack.enter_context(FakeLLM(mode="ok"))
        data_dir = stack.enter_context(harness.data_directory(None, "relay-bench-floor-"))
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="relay-floor-")))
        print(
            f"\n== floor (fake LLM mode 'ok'; relay: {harness.where(data_dir)}; memory: data dir "
            ":memory:; bare: bench/bare_app.py)"
        )
        servers: dict[str, harness.Server] = {}
        for name, path in (("relay", data_dir), ("memory", harness.MEMORY)):
            log = stack.enter_context(harness.log_file(name, f"{name} log (level warning)"))
            env = harness.agent_env(llm.base_url)
            servers[name] = stack.enter_context(harness.relay_process(path, log, env))
            harness.post_many(servers[name], FEED_RING, 0)
        sizes = []
        for path, name in zip(GETS, ("feed", "health"), strict=True):
            resp = httpx.get(servers["relay"].base_url + path, timeout=harness.REQUEST_TIMEOUT_S)
            (tmp / f"{name}.json").write_bytes(resp.raise_for_status().content)
            sizes.append(len(resp.content))
        args = ["-m", "bench", "bare-app", "--feed-body", str(tmp / "feed.json")]
        args += ["--health-body", str(tmp / "health.json")]
        log = stack.enter_context(harness.log_file("bare", "bare app output"))
        bare = stack.enter_context(harness.server_process(args, log, name="bare app"))
        servers = {"bare": bare, **servers}
        print("  " + ", ".join(f"{n} pid {s.pid} at {s.base_url}" for n, s in servers.items()))
        print(
            f"  posted {FEED_RING} /feed to each relay; the bare app answers the relay's "
            f"GET /feed?after=0 ({sizes[0]} bytes) and GET /health ({sizes[1]} bytes)"
        )
        for method, path, conns in sorted(LOADS, key=lambda lo: lo[0] == "POST"):  # GETs first
            measured = load.in_turns(servers, method, path, conns, rounds, seconds)
            for name, row in measured.items():
                rows[name, method, path, conns] = row
                print_progress(row, f"{name:<6} ")
        for name in ("relay", "memory"):
            harness.print_health(servers[name], f"{name}: ")
        print(f"  fake LLM got {llm.calls} calls")
    return [rows[name, *lo] for lo in LOADS for name in SERVERS]


def floor_cells(row: load.Row, bare: load.Row) -> str:
    """req/s over bare's, p99 minus bare's and ``pass``/``FAIL`` against the targets."""
    rps, diff = ratio(row.median("rps"), bare.median("rps")), row.median("p99") - bare.median("p99")
    ok = rps >= RPS_TARGET
    if not bare.endpoint.startswith("GET") and bare.conns == max(TARGET_CONNECTIONS):
        ok = ok and diff <= P99_TARGET_MS
    verdict = "-" if bare.conns not in TARGET_CONNECTIONS else "pass" if ok else "FAIL"
    return f"{rps:>6.2f} {diff:>+8.2f} {verdict:>6}"


def cpu_cells(bare: load.Row, others: list[load.Row]) -> str:
    """Each server's CPU per request, in microseconds."""
    return " ".join(
        f"{1e6 * ratio(r.median('relay_cpu'), r.median('rps')):>6.0f}" for r in (bare, *others)
    )


OPTIONS = load.row_options("1 s x 1 round")


def run(args: argparse.Namespace) -> int:
    load.rows_args(args)
    print(load.header("floor bench", args))
    rows = run_floor(args.rounds, args.seconds)
    print_table(f"Floor (medians of rounds; GET /feed?after=0 holds {FEED_RING} items):", rows)
    print(
        f"\nFloor ratios (same run; p99 +ms = minus bare's p99; targets: req/s >= "
        f"{RPS_TARGET} x bare at {' and '.join(map(str, TARGET_CONNECTIONS))} connections, "
        f"POST p99 <= bare + {P99_TARGET_MS:g} ms at {max(TARGET_CONNECTIONS)}):"
    )
    cpu = ("server cpu us/req", f"{'bare':>6} {'relay':>6} {'memory':>6}", cpu_cells)
    group = f"{'req/s':>6} {'p99 +ms':>8} {'target':>6}"
    print_ratios(rows, "bare", SERVERS[1:], group, floor_cells, cpu)
    return 0
