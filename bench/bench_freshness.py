"""Hud freshness of sinain-relay: the event-driven tick schedule against the spec's fixed 30 s beat.

Run from the repository root::

    python bench/bench_freshness.py               # the session at real speed: about 6 minutes
    python bench/bench_freshness.py --speed 10    # a quick check: about 45 s
    python bench/bench_freshness.py --llm-delay-s 2.5 --session my_session.jsonl

It prints figures and asserts nothing.

What runs. The shipped capture session (``transport/demo/session.jsonl``: about five minutes
of editing, a failing test, a web search, a chat, spoken remarks, repeats and two quiet
spells) is replayed over HTTP (``transport.demo.Replayer``, ``ts`` rewritten to now) against
two relays at once, each ``python run.py --port <free port> --data-dir <temp dir>`` as a
subprocess with ``LOG_FORMAT=json`` (its log in the temp dir), and each pointed at its own
fake LLM on a thread of this script (``transport.demo.fake_llm.FakeLLM``, mode ``summarise``: a
hud and digest made from the prompt), which answers after ``--llm-delay-s`` (1 s) to stand
in for a model's latency:

``event-driven``     the relay's defaults: ``AGENT_DEBOUNCE_MS=3000``, ``AGENT_INTERVAL_MS=30000``
                     (a tick 3 s after the last new item, at the latest 30 s after the previous
                     tick while anything is new; no call when the window's fingerprint is
                     unchanged)
``fixed 30 s beat``  the spec's beat as near as the relay comes: it has no fixed-timer mode, so
                     ``AGENT_DEBOUNCE_MS=30000 AGENT_INTERVAL_MS=30000`` (a tick at most every
                     30 s while anything is new; after a quiet spell the first item ticks at
                     once, which a fixed timer would not)

and, from the session's own event times, a third row that is a model, not a measurement:

``fixed 30 s timer (model)``  the v2 spec's loop taken literally: a tick at 30 s, 60 s, ... from
                     the start, calling the LLM when anything arrived since the last tick
                     (no fingerprint), answered the measured median LLM latency later (the
                     ``latencyMs`` of the relays' entries).

Figures, per configuration, in session seconds (wall-clock seconds x ``--speed``):

``LLM calls``        requests the fake LLM received
``entries``          agent entries in ``/agent/history?since=<start>&limit=500``
``unchanged``        ticks that made no call because the window said nothing new
                     (``/health.agent.unchangedSkips``)
``freshness p50``    median ``contextFreshnessMs`` of those entries: from the newest event in an
                     entry's window to its answer
``event→hud p50/p90``  for each posted request, from its acknowledgement to the first entry
                     whose LLM call started after it (entry ``ts - latencyMs`` at or after the
                     acknowledgement, so the entry's window held it); a request no entry
                     followed is counted in ``unanswered`` instead
``new p50``          the same median over the requests that changed something: a sense event
                     whose app, window title or OCR differs from the sense event before it, a
                     feed item whose text differs from the feed item before it (repeats left out)

``--speed S`` replays the session S times faster and divides the relays' debounce, interval and
context window (``AGENT_MAX_AGE_MS``) and the LLM delay by S too, so that the run is the same
session in compressed time; the figures are multiplied back by S. Above 1 they are approximate:
the relay's and the network's own milliseconds are not compressed.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from config.logs import configure_logging  # noqa: E402
from transport.demo.fake_llm import FakeLLM  # noqa: E402
from transport.demo.replay import DEMO_SESSION, Posted, Replayer, SessionEvent, load_session  # noqa: E402

HOST = "127.0.0.1"
HEALTH_TIMEOUT_S = 20.0
TERM_TIMEOUT_S = 15.0
SPEC_INTERVAL_S = 30.0
"""The v2 spec's fixed tick interval."""
DEFAULT_DEBOUNCE_MS = 3_000
DEFAULT_INTERVAL_MS = 30_000
DEFAULT_MAX_AGE_MS = 120_000
TAIL_MARGIN_S = 3.0
"""Wall seconds waited after the last tick could have answered."""


@dataclass(frozen=True, slots=True)
class Config:
    """One relay configuration to measure."""

    name: str
    debounce_ms: int
    interval_ms: int


CONFIGS = (
    Config("event-driven", DEFAULT_DEBOUNCE_MS, DEFAULT_INTERVAL_MS),
    Config("fixed 30 s beat", 30_000, 30_000),
)


@dataclass
class Run:
    """One relay, its fake LLM and its replayer, and what they measured."""

    config: Config
    llm: FakeLLM
    proc: subprocess.Popen[bytes]
    base_url: str
    log_path: Path
    replayer: Replayer | None = None
    start_ms: int = 0
    entries: list[dict[str, Any]] = field(default_factory=list)
    health: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Figures:
    """One row of the table, in session seconds."""

    name: str
    debounce: str
    interval: str
    calls: int
    entries: int
    unchanged: str
    freshness_p50: float
    hud_p50: float
    hud_p90: float
    new_p50: float
    unanswered: int


def free_port() -> int:
    """A TCP port that was free on loopback a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def p90(values: Sequence[float]) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]


def changed(events: Sequence[SessionEvent]) -> list[bool]:
    """For each request: whether it says something the request before it on its path did not."""
    last: dict[str, Any] = {}
    out = []
    for event in events:
        body = event.body
        if event.path == "/sense":
            meta = body.get("meta") or {}
            key: Any = (meta.get("app"), meta.get("windowTitle"), body.get("ocr"))
        else:
            key = body.get("text")
        out.append(last.get(event.path, object()) != key)
        last[event.path] = key
    return out


def wait_healthy(run: Run) -> None:
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if run.proc.poll() is not None:
                msg = f"relay exited with code {run.proc.returncode}: see {run.log_path}"
                raise RuntimeError(msg)
            with contextlib.suppress(httpx.HTTPError):
                if client.get(run.base_url + "/health").status_code == 200:
                    return
            time.sleep(0.05)
    msg = f"relay not healthy after {HEALTH_TIMEOUT_S:g} s: see {run.log_path}"
    raise RuntimeError(msg)


def stop_process(proc: subprocess.Popen[bytes], name: str) -> None:
    if proc.poll() is not None:
        print(f"  [{name}] had already exited with code {proc.returncode}")
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=TERM_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        print(f"  [{name}] did not exit {TERM_TIMEOUT_S:g} s after SIGTERM; sending SIGKILL")
        proc.kill()
        proc.wait(timeout=TERM_TIMEOUT_S)


def scaled_ms(ms: int, speed: float) -> int:
    return max(1, round(ms / speed))


@contextlib.contextmanager
def started(
    config: Config, speed: float, llm_delay_s: float, tmp: Path, logs: list[IO[bytes]]
) -> Iterator[Run]:
    """A fake LLM and a relay subprocess for ``config``; both stopped on exit."""
    with FakeLLM(mode="summarise", latency_s=llm_delay_s / speed) as llm:
        slug = config.name.replace(" ", "-")
        data_dir = tmp / slug
        log_path = tmp / f"{slug}.log"
        log_file = log_path.open("wb")
        logs.append(log_file)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("AGENT_", "RELAY_")) and k != "OPENROUTER_API_KEY"
        }
        env.update(
            OPENROUTER_API_KEY="bench-freshness",
            AGENT_BASE_URL=llm.base_url,
            AGENT_DEBOUNCE_MS=str(scaled_ms(config.debounce_ms, speed)),
            AGENT_INTERVAL_MS=str(scaled_ms(config.interval_ms, speed)),
            AGENT_MAX_AGE_MS=str(scaled_ms(DEFAULT_MAX_AGE_MS, speed)),
            LOG_FORMAT="json",
        )
        port = free_port()
        command = [sys.executable, "run.py", "--port", str(port), "--data-dir", str(data_dir)]
        proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT
        )
        run = Run(config, llm, proc, f"http://{HOST}:{port}", log_path)
        try:
            wait_healthy(run)
            yield run
        finally:
            if run.replayer is not None:
                run.replayer.stop()
            stop_process(proc, config.name)


def collect(run: Run) -> None:
    """Read the run's agent entries (every page) and ``/health``."""
    entries: list[dict[str, Any]] = []
    before: int | None = None
    with httpx.Client(base_url=run.base_url, timeout=5.0) as client:
        while True:
            params: dict[str, Any] = {"since": run.start_ms, "limit": 500}
            if before is not None:
                params["before"] = before
            page = client.get("/agent/history", params=params).json()
            entries.extend(page["results"])
            before = page.get("next")
            if before is None:
                break
        run.health = client.get("/health").json()
    run.entries = sorted(entries, key=lambda e: e["ts"])


def event_to_hud_s(
    posted: Sequence[Posted], entries: Sequence[dict[str, Any]], speed: float
) -> list[float | None]:
    """For each request: session seconds from its acknowledgement to the first entry whose
    LLM call started at or after it, or None when no entry followed."""
    out: list[float | None] = []
    for post in posted:
        answer = next((e["ts"] for e in entries if e["ts"] - e["latencyMs"] >= post.acked_ms), None)
        out.append(None if answer is None else (answer - post.acked_ms) * speed / 1000)
    return out


def measured(run: Run, events: Sequence[SessionEvent], speed: float) -> Figures:
    assert run.replayer is not None
    posted = list(run.replayer.posted)
    latencies = event_to_hud_s(posted, run.entries, speed)
    news = changed(events)
    answered = [v for v in latencies if v is not None]
    new_answered = [v for v, new in zip(latencies, news, strict=True) if v is not None and new]
    freshness = [
        e["contextFreshnessMs"] * speed / 1000
        for e in run.entries
        if e.get("contextFreshnessMs") is not None
    ]
    unchanged = run.health.get("agent", {}).get("unchangedSkips")
    return Figures(
        name=run.config.name,
        debounce=f"{run.config.debounce_ms / 1000:g} s",
        interval=f"{run.config.interval_ms / 1000:g} s",
        calls=run.llm.calls,
        entries=len(run.entries),
        unchanged="?" if unchanged is None else str(unchanged),
        freshness_p50=median(freshness),
        hud_p50=median(answered),
        hud_p90=p90(answered),
        new_p50=median(new_answered),
        unanswered=len(latencies) - len(answered),
    )


def fixed_timer_model(
    events: Sequence[SessionEvent], latency_s: float, max_age_s: float = DEFAULT_MAX_AGE_MS / 1000
) -> Figures:
    """The spec's loop taken literally, computed from the session's times (see the module)."""
    ats = [e.at for e in events]
    last_tick = math.ceil(ats[-1] / SPEC_INTERVAL_S) * SPEC_INTERVAL_S
    ticks = [SPEC_INTERVAL_S * k for k in range(1, round(last_tick / SPEC_INTERVAL_S) + 1)]
    calls: list[float] = []
    freshness: list[float] = []
    for tick in ticks:
        arrived = [at for at in ats if tick - SPEC_INTERVAL_S < at <= tick]
        if not arrived:
            continue
        calls.append(tick)
        newest = max(at for at in ats if tick - max_age_s <= at <= tick)
        freshness.append(tick + latency_s - newest)
    latencies: list[float | None] = []
    for at in ats:
        call = next((t for t in calls if t >= at), None)
        latencies.append(None if call is None else call + latency_s - at)
    answered = [v for v in latencies if v is not None]
    news = changed(events)
    new_answered = [v for v, new in zip(latencies, news, strict=True) if v is not None and new]
    return Figures(
        name="fixed 30 s timer (model)",
        debounce="-",
        interval="30 s",
        calls=len(calls),
        entries=len(calls),
        unchanged="-",
        freshness_p50=median(freshness),
        hud_p50=median(answered),
        hud_p90=p90(answered),
        new_p50=median(new_answered),
        unanswered=len(latencies) - len(answered),
    )


def seconds(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.1f} s"


def print_table(rows: Sequence[Figures]) -> None:
    header = (
        "configuration",
        "debounce",
        "interval",
        "LLM calls",
        "entries",
        "unchanged",
        "freshness p50",
        "event→hud p50",
        "event→hud p90",
        "new p50",
        "unanswered",
    )
    table = [header] + [
        (
            r.name,
            r.debounce,
            r.interval,
            str(r.calls),
            str(r.entries),
            r.unchanged,
            seconds(r.freshness_p50),
            seconds(r.hud_p50),
            seconds(r.hud_p90),
            seconds(r.new_p50),
            str(r.unanswered),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for n, row in enumerate(table):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        print("  " + "  ".join(cells))
        if n == 0:
            print("  " + "  ".join("-" * w for w in widths))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench/bench_freshness.py",
        description="Replay a capture session against the event-driven schedule and the "
        "fixed 30 s beat; print LLM calls and hud freshness.",
    )
    parser.add_argument("--speed", type=float, default=1.0, help="replay speed (default 1.0)")
    parser.add_argument(
        "--llm-delay-s", type=float, default=1.0, help="the fake LLM's latency (default 1.0)"
    )
    parser.add_argument("--session", type=Path, default=DEMO_SESSION, help="a session file")
    args = parser.parse_args(argv)
    if not (math.isfinite(args.speed) and args.speed > 0):
        parser.error("--speed must be a positive number")
    if not (math.isfinite(args.llm_delay_s) and args.llm_delay_s >= 0):
        parser.error("--llm-delay-s must be 0 or more")
    # the replayers' and fake LLMs' own log lines: warnings only (a failed post), on stderr
    configure_logging("console", "warning", stream=sys.stderr)
    speed: float = args.speed
    events = load_session(args.session)
    duration_s = events[-1].at
    tail_s = (max(c.interval_ms for c in CONFIGS) / 1000 + args.llm_delay_s) / speed
    print(
        f"sinain-relay hud freshness: {args.session.name} ({len(events)} requests over "
        f"{duration_s:g} s) at speed {speed:g}, fake LLM (mode summarise) answering after "
        f"{args.llm_delay_s:g} s; both relays at once, about "
        f"{(duration_s / speed + tail_s + TAIL_MARGIN_S):.0f} s"
    )
    if speed != 1:
        print(
            f"  debounce, interval, AGENT_MAX_AGE_MS and the LLM delay divided by {speed:g}; "
            "figures multiplied back (session seconds)"
        )
    with (
        tempfile.TemporaryDirectory(prefix="relay-freshness-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        logs: list[IO[bytes]] = []
        try:
            runs = [
                stack.enter_context(started(c, speed, args.llm_delay_s, Path(tmp), logs))
                for c in CONFIGS
            ]
            for run in runs:
                run.start_ms = int(time.time() * 1000) - 1
                run.replayer = Replayer(run.base_url, events, speed=speed).start()
            for run in runs:
                assert run.replayer is not None
                if not run.replayer.wait(duration_s / speed + 60):
                    print(f"  [{run.config.name}] the replay did not end in time")
            time.sleep(tail_s + TAIL_MARGIN_S)
            for run in runs:
                collect(run)
        finally:
            stack.close()
            for log_file in logs:
                log_file.close()
        for run in runs:
            assert run.replayer is not None
            if run.replayer.failures:
                print(f"  [{run.config.name}] {run.replayer.failures} posts failed")
    rows = [measured(run, events, speed) for run in runs]
    latency_ms = [e["latencyMs"] for run in runs for e in run.entries]
    latency_s = median(latency_ms) * speed / 1000 if latency_ms else args.llm_delay_s
    rows.append(fixed_timer_model(events, latency_s))
    print()
    print_table(rows)
    print()
    print(
        f"  the model's LLM latency: {latency_s:.2f} s (the measured median latencyMs). "
        "Session seconds throughout; see the module docstring for each column."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
