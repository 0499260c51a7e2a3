"""The benches' load: ``wrk`` for measured rounds (a Python client would cost as much CPU per
request as the relay), an asyncio client for counted posts, a relay per scenario with its rows;
docs/benchmarks.md says what a round measures."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import aiohttp
import httpx
import orjson

from bench.figures import at_least, print_progress, print_rss, print_table
from bench.runner import Option, UsageError, fill_defaults, flags
from bench.stats import median
from tests.support import harness
from tests.support.harness import JSON_HEADERS, REQUEST_TIMEOUT_S, Server, post_body
from tests.support.meter import Meter, rss_mb
from tests.support.overlay import OVERLAY_PONG_EVERY_S, overlay_sockets

CONNECTIONS = (1, 16, 64)
ENDPOINTS = ("/feed", "/sense")
WRK_WARMUP_S = 1
POSTS_MAX_S = 600.0
"""Bound on one counted posting job."""
WRK_INSTALL_HINT = "wrk is not installed: apt-get install wrk (Debian's package)"
_KINDS = ("status", "connect", "read", "write", "timeout")
_LUA = """wrk.method = {method}
wrk.headers["Content-Type"] = "application/json"
{body}
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("\\nWRK-JSON [%d, %d, %d, %d, %d, %d, %d, %d, %d]\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect, e.read, e.write, e.timeout))
end
"""
_BODY = 'local f = assert(io.open({path}, "rb"))\nwrk.body = f:read("*a")\nf:close()'


def wrk_available() -> bool:
    return shutil.which("wrk") is not None


def run_wrk(
    url: str, conns: int, seconds: float, method: str, body: bytes | None
) -> tuple[int, float, float, float, dict[str, int]]:
    """Drive ``url`` with ``conns`` keep-alive connections for ``seconds`` (one wrk thread): its
    requests, seconds, p50 and p99 (ms), and its non-2xx answers (``status``) and socket errors
    by kind (zero counts left out). RuntimeError when wrk is missing, fails or prints no result."""
    if not wrk_available():
        raise RuntimeError(WRK_INSTALL_HINT)
    with tempfile.TemporaryDirectory(prefix="relay-wrk-") as tmp:
        body_lua = ""
        if body is not None:
            (Path(tmp) / "body").write_bytes(body)
            body_lua = _BODY.format(path=json.dumps(str(Path(tmp) / "body")))
        script = Path(tmp) / "load.lua"
        script.write_text(_LUA.format(method=json.dumps(method), body=body_lua))
        command = ["wrk", "-t1", f"-c{conns}", f"-d{max(1, round(seconds))}s", "-s", str(script)]
        command += ["--timeout", "10s", url]
        done = subprocess.run(
            command, check=False, capture_output=True, text=True, timeout=seconds + 60
        )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("WRK-JSON ")]
    if done.returncode != 0 or not lines:
        msg = f"wrk failed (exit {done.returncode}): {done.stderr.strip() or done.stdout[-500:]}"
        raise RuntimeError(msg)
    n, duration_us, p50_us, p99_us, *errors = json.loads(lines[-1].removeprefix("WRK-JSON "))
    counts = {kind: count for kind, count in zip(_KINDS, errors, strict=True) if count}
    return n, duration_us / 1e6, p50_us / 1000, p99_us / 1000, counts


class Round(NamedTuple):
    """One measured run: 200 answers per second, wrk's percentiles, errors, the CPU of the server,
    of the generator and of the rest of the machine (shares of one core), and the server's CPU
    per request sent, in microseconds."""

    rps: float
    p50: float
    p99: float
    errors: Counter[str]
    relay_cpu: float
    gen_cpu: float
    other_cpu: float
    cpu_us: float


@dataclass(slots=True)
class Row:
    scenario: str
    endpoint: str
    conns: int
    rounds: list[Round] = field(default_factory=list)

    def median(self, attr: str) -> float:
        return median(float(getattr(r, attr)) for r in self.rounds)

    def errors(self) -> Counter[str]:
        return sum((r.errors for r in self.rounds), Counter())


def wrk_round(
    server: Server,
    path: str,
    conns: int,
    seconds: float,
    *,
    body: bytes | None = None,
    idle: Sequence[int] = (),
    warmup_s: int = WRK_WARMUP_S,
) -> Round:
    """A wrk warm-up run (when ``warmup_s``), then one measured run: ``POST body`` or ``GET``;
    ``idle``: the pids of the bench's other servers, whose CPU is not counted as ``other``."""
    method, url = "GET" if body is None else "POST", server.base_url + path
    if warmup_s:
        run_wrk(url, conns, warmup_s, method, body)
    meter = Meter(server.pid, idle)
    requests, wrk_s, p50, p99, by_kind = run_wrk(url, conns, seconds, method, body)
    used, name, non_2xx = meter.read(), path.rsplit("/", 1)[-1], by_kind.get("status", 0)
    errors = Counter({f"{name}:{kind}": n for kind, n in by_kind.items()})
    shares = (used.server / used.wall, used.children / used.wall, used.other(used.children))
    sent = requests + sum(by_kind.values()) - non_2xx
    cpu_us = 1e6 * used.server / sent if sent else 0.0
    return Round((requests - non_2xx) / wrk_s, p50, p99, errors, *shares, cpu_us)


def in_turns(
    servers: Mapping[str, Server],
    method: str,
    path: str,
    conns: int,
    rounds: int,
    seconds: float,
    *,
    rotate: bool = False,
    warmup_s: int = WRK_WARMUP_S,
    body: bytes | None = None,
) -> dict[str, Row]:
    """``rounds`` rounds of ``POST path`` (``body``, else :func:`post_body`) or
    ``GET path``, each server measured in turn while the others idle (``rotate``: each round
    starting with the next server); a row per server, named as ``servers`` names it."""
    names = list(servers)
    body = (body or post_body(path)) if method == "POST" else None
    rows = {n: Row(n, path if method == "POST" else f"GET {path}", conns) for n in names}
    for turn in range(rounds):
        first = turn % len(names) if rotate else 0
        for name in names[first:] + names[:first]:
            server = servers[name]
            idle = [s.pid for s in servers.values() if s is not server]
            got = wrk_round(server, path, conns, seconds, body=body, idle=idle, warmup_s=warmup_s)
            rows[name].rounds.append(got)
    return rows


@dataclass(slots=True)
class Posted:
    """What :func:`post` sent: the latencies of the 200s, the 200s and the failures by path."""

    latencies_ms: list[float] = field(default_factory=list)
    ok: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    wall_s: float = 0.0


def post(
    base_url: str,
    posts: Iterable[tuple[str, bytes]],
    conns: int,
    *,
    stop_on_error: bool = False,
    max_s: float = POSTS_MAX_S,
) -> Posted:
    """Send ``posts`` (path, body) in order over ``conns`` keep-alive connections, each as soon
    as a connection is free (``stop_on_error``: a connection stops at its first failure)."""
    result, started, todo = Posted(), time.monotonic(), iter(posts)

    async def sender(session: aiohttp.ClientSession) -> None:
        for path, body in todo:
            sent = time.monotonic()
            status: int | str
            try:
                async with session.post(base_url + path, data=body, headers=JSON_HEADERS) as resp:
                    await resp.read()
                    status = resp.status
            except (aiohttp.ClientError, TimeoutError) as exc:
                status = type(exc).__name__
            if status == 200:
                result.latencies_ms.append((time.monotonic() - sent) * 1000)
                result.ok[path] += 1
            else:
                result.errors[f"{path}:{status}"] += 1
                if stop_on_error:
                    return

    async def senders() -> None:
        connector = aiohttp.TCPConnector(limit=conns)
        timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            await asyncio.wait_for(asyncio.gather(*(sender(session) for _ in range(conns))), max_s)

    asyncio.run(senders())
    result.wall_s = time.monotonic() - started
    return result


CRASH_EVERY_S = 0.5
CRASH_FAULT = {"actor": "llm", "kind": "crash"}
CRASH_MAX_RESTARTS = 1_000_000
"""``RELAY_MAX_RESTARTS`` of a crash-looped relay, so that no supervisor escalates."""


@dataclass(frozen=True, slots=True)
class Setup:
    """One relay to measure: the fake LLM's mode (and delay in mode ``slow``), ``--data-dir``
    (``None``: a fresh temporary one), the rows; over the whole scenario, the LLM caller crashed
    every :data:`CRASH_EVERY_S` or ``overlays`` WebSockets connected."""

    name: str
    mode: str = "ok"
    data_dir: str | None = None
    sync: str = "full"
    conns: tuple[int, ...] = CONNECTIONS
    delay_s: float = 1.0
    crash_loop: bool = False
    overlays: int = 0

    def header(self, data_dir: str) -> str:
        text = f"fake LLM mode {self.mode!r}"
        if self.overlays:
            pong = f"each read as it comes and sending a pong every {OVERLAY_PONG_EVERY_S:g} s"
            text += f"; {self.overlays} overlay WebSockets connected for the whole scenario, {pong}"
        if self.mode == "slow":
            text += f", answering after {self.delay_s:g} s"
        if self.crash_loop:
            text += (
                f"; RELAY_FAULTS=1 and RELAY_MAX_RESTARTS={CRASH_MAX_RESTARTS} (so no supervisor "
                f"escalates), a thread POSTs /debug/fault {orjson.dumps(CRASH_FAULT).decode()} "
                f"every {CRASH_EVERY_S:g} s for the whole scenario"
            )
        return f"{text}; {harness.where(data_dir, self.sync)}"


@contextlib.contextmanager
def crash_loop(server: Server) -> Iterator[Counter[str]]:
    """POST :data:`CRASH_FAULT` every :data:`CRASH_EVERY_S` until exit; yields the answers by
    status (200: crash sent; 503: the caller was waiting out its restart backoff) or failure."""
    outcomes: Counter[str] = Counter()
    stop = threading.Event()

    def run() -> None:
        with httpx.Client(timeout=REQUEST_TIMEOUT_S) as client:
            while not stop.is_set():
                try:
                    resp = client.post(server.base_url + "/debug/fault", json=CRASH_FAULT)
                    outcomes[str(resp.status_code)] += 1
                except httpx.HTTPError as exc:
                    outcomes[type(exc).__name__] += 1
                stop.wait(CRASH_EVERY_S)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield outcomes
    finally:
        stop.set()
        thread.join(timeout=REQUEST_TIMEOUT_S + 1)


def run_scenario(setup: Setup, rounds: int, seconds: float) -> tuple[list[Row], dict[str, float]]:
    """A fake LLM and a relay; every row of ``setup``; the relay's RSS at start and at the end."""
    rows, rss = list[Row](), dict[str, float]()
    faulty = {"RELAY_FAULTS": "1", "RELAY_MAX_RESTARTS": str(CRASH_MAX_RESTARTS)}
    with harness.agent_setup(setup.name, setup.data_dir, setup.mode, setup.delay_s) as made:
        llm, data_dir, log = made
        print(f"\n== scenario {setup.name} ({setup.header(data_dir)})")
        env = harness.agent_env(llm.base_url, setup.sync, **(faulty if setup.crash_loop else {}))
        with harness.relay_process(data_dir, log, env) as relay, contextlib.ExitStack() as stack:
            rss["start"] = rss_mb(relay.pid)
            start = f"RSS after start {rss['start']:.1f} MB"
            print(f"  relay pid {relay.pid} at {relay.base_url}; {start}")
            faults = stack.enter_context(crash_loop(relay)) if setup.crash_loop else Counter()
            overlay = stack.enter_context(overlay_sockets(relay, setup.overlays))
            for endpoint in ENDPOINTS:
                for conns in setup.conns:
                    turns = in_turns({setup.name: relay}, "POST", endpoint, conns, rounds, seconds)
                    rows.append(row := turns[setup.name])
                    print_progress(row)
            stack.close()
            if setup.crash_loop:
                code = relay.proc.poll()
                state = "still running" if code is None else f"EXITED with code {code}"
                print(f"  POST /debug/fault answers: {dict(faults) or 'none'}; relay {state}")
            if setup.overlays:
                streams = harness.health(relay)[1].get("streams", {})
                megabytes = sum(overlay.received.values()) / 1e6
                print(
                    f"  overlay sockets: {megabytes:.1f} MB received over {setup.overlays}, "
                    f"reading them cost this script {overlay.cpu_s:.1f} CPU s; ended "
                    f"early: {overlay.ended or 'none'}; /health.streams {streams}"
                )
            rss["end"] = rss_mb(relay.pid)
            print(f"  RSS at the end {rss['end']:.1f} MB; fake LLM got {llm.calls} calls")
            harness.print_health(relay)
    return rows, rss


def run_setups(
    setups: Sequence[Setup], args: argparse.Namespace, title: str
) -> tuple[list[Row], dict[str, dict[str, float]]]:
    """Every row of each setup (:func:`run_scenario`), then their table and the relays' RSS."""
    rows, rss = list[Row](), dict[str, dict[str, float]]()
    for setup in setups:
        scenario_rows, rss[setup.name] = run_scenario(setup, args.rounds, args.seconds)
        rows += scenario_rows
    if rows:
        print_table(title, rows)
        print_rss(rss)
    return rows, rss


def row_options(quick: str) -> list[Option]:
    """The options of a case measured in rows: ``--seconds``, ``--rounds``, ``--quick``."""
    return flags(
        seconds=(at_least(1), None, "measured window per round (default 3)"),
        rounds=(at_least(1), None, "rounds per row; medians shown (default 3)"),
        quick=(bool, None, f"smoke run: {quick}"),
    )


def rows_args(args: argparse.Namespace, **quick: tuple[int, int]) -> None:
    """Fill the defaults not given from ``(quick, full)`` pairs (``--seconds`` and
    ``--rounds``: 1 and 3); :class:`UsageError` when ``wrk`` is missing."""
    fill_defaults(args, seconds=(1, 3), rounds=(1, 3), **quick)
    if not wrk_available():
        raise UsageError(WRK_INSTALL_HINT)


def header(name: str, args: argparse.Namespace, extra: str = "") -> str:
    return (
        f"sinain-relay {name}: {args.seconds:g} s x {args.rounds} rounds per row, wrk warm-up "
        f"{WRK_WARMUP_S:g} s, {os.cpu_count()} CPUs{extra}"
    )
