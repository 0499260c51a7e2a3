"""A/B of the ingest path: two checkouts' relays served at once in memory and posted to by wrk
in turns (``--bare``: the bare app too); docs/benchmarks.md has the commands."""

from __future__ import annotations

import argparse
import base64
import contextlib
import tempfile
import time
from pathlib import Path

import httpx
import orjson

from actors.kernel.malloc import TRIM_INTERVAL_S
from bench.figures import Table
from bench.load import ENDPOINTS, in_turns, post
from bench.runner import flags
from bench.stats import median, ratio
from tests.support.harness import Server, relay_env, relay_process, server_process
from tests.support.meter import rss_mb

ROWS = [(path, conns) for path in ENDPOINTS for conns in (16, 64)]
RATIOS = ("after/before >13.3f|cpu a/b >8.3f", "before/bare >12.3f|after/bare >11.3f")


OPTIONS = flags(
    _before=(Path, None, "the checkout measured as 'before'"),
    _after=(Path, None, "the checkout measured as 'after'"),
    rounds=(int, 5, "turns of each server per row"),
    seconds=(int, 2, "wrk's window per turn"),
    bare=(bool, None, "also serve bench/bare_app.py and give ratios to it"),
    image_kb=(int, 0, "KB of base64 roi.data in /sense bodies; fill the rings first"),
)


def run(args: argparse.Namespace) -> int:
    sense = image_event(args.image_kb, 0) if args.image_kb else None
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="relay-ab-")))
        servers = {}
        if args.bare:
            (ok := tmp / "ok.json").write_bytes(b'{"ok": true}')
            bare = ["-m", "bench", "bare-app", "--feed-body", str(ok), "--health-body", str(ok)]
            server = server_process(bare, tmp / "bare.log", name="bare app")
            servers["bare"] = stack.enter_context(server)
        for name in ("before", "after"):
            root = getattr(args, name).resolve()
            env = relay_env(PYTHONPATH=str(root), LOG_LEVEL="warning")
            relay = relay_process(":memory:", tmp / f"{name}.log", env, log_level=None, cwd=root)
            servers[name] = stack.enter_context(relay)
        if args.image_kb:
            fill_rings({n: servers[n] for n in ("before", "after")}, args.image_kb)
        heads = (f"{n} req/s >13.0f|p99 >6.2f|cpu µs >6.1f" for n in servers)
        table = Table("|".join(["row <14", *heads, *RATIOS[: 1 + args.bare]]))
        table.head()
        wrk = (args.rounds, args.seconds)
        for path, conns in ROWS:
            body = sense if path == "/sense" else None
            rows = in_turns(servers, "POST", path, conns, *wrk, rotate=True, warmup_s=0, body=body)
            rate = {n: row.median("rps") for n, row in rows.items()}
            cpu = {n: row.median("cpu_us") for n, row in rows.items()}
            cells = [v for n, r in rows.items() for v in (rate[n], r.median("p99"), cpu[n])]
            cells += [ratio(rate["after"], rate["before"]), ratio(cpu["after"], cpu["before"])]
            if args.bare:
                cells += [ratio(rate["before"], rate["bare"]), ratio(rate["after"], rate["bare"])]
            table.row(f"{path} @{conns}", *cells)
    return 0


def image_event(kb: int, n: int) -> bytes:
    """A ``/sense`` event with a JPEG-looking ``roi.data`` of ``kb`` KB of base64."""
    data = base64.b64encode(b"\xff\xd8\xff" + bytes([n % 256]) * (kb * 768 - 3)).decode()
    return orjson.dumps({"type": "screen", "ts": n, "ocr": f"screen {n}", "roi": {"data": data}})


def fill_rings(servers: dict[str, Server], kb: int) -> None:
    """Post a ring of image events to each server, one at a time; print its VmRSS before and
    after (each read after the allocator's trim) and the median of 5 whole ``GET /sense``."""
    time.sleep(TRIM_INTERVAL_S + 1)
    start = {n: rss_mb(s.pid) for n, s in servers.items()}
    for server in servers.values():
        post(server.base_url, [("/sense", image_event(kb, k)) for k in range(40)], 1)
    time.sleep(TRIM_INTERVAL_S + 1)
    full = {n: rss_mb(s.pid) for n, s in servers.items()}
    for n, server in servers.items():
        took = []
        for _ in range(5):
            t0 = time.perf_counter()
            size = len(httpx.get(server.base_url + "/sense", timeout=30).content)
            took.append((time.perf_counter() - t0) * 1000)
        print(
            f"{n}: VmRSS {start[n]:.1f} MB, {full[n]:.1f} MB with 40 /sense events of "
            f"{kb} KB of roi.data; GET /sense ({size / 1e6:.1f} MB) {median(took):.1f} ms"
        )
