"""The relay hearing: what capture and transcription cost ingestion, memory over an hour of
sound, a transcript's time to the feed, and real speech (:mod:`bench.audio_speech`), on relays
capturing generated sound into a stand-in speech service. docs/benchmarks.md says what each runs."""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from bench import audio_local, audio_speech, load
from bench.figures import Table, at_least, print_ratios, print_table
from bench.load import ENDPOINTS, Row, in_turns
from bench.runner import UsageError, arg, choose, exit_on_sigterm, fill_defaults
from bench.stats import median, percentile, ratio, slope_per_hour
from tests.support import harness
from tests.support.audio_probe import FeedListener, TimedStt, pcm_command, stt_settings
from tests.support.chaos_audio import capture_processes
from tests.support.harness import Server, agent_env, relay_env
from tests.support.meter import Meter, cpu_s, rss_mb
from transport.agent.fake_llm import FakeLLM

TARGETS = ("ingest", "memory", "latency", "real", "local")
P99_TARGET = 1.1
LATENCY_TARGET_MS = 100.0
LISTEN_MARGIN_S = 10.0
"""How long the latency run waits for the last transcripts beyond the sound's own time."""


Calls = Callable[[Server], int]
"""The utterances a speech service has transcribed, read with the relay it serves."""


def decoded(relay: Server) -> int:
    """The utterances ``relay``'s local recogniser has decoded."""
    local = harness.health(relay)[1]["audio"]["transcriber"].get("local") or {}
    return int(local.get("decoded", 0))


@contextlib.contextmanager
def speech_service(kind: str, log: Path) -> Iterator[tuple[dict[str, str], Calls]]:
    """The stand-in (``standin``), PocketSphinx (``real``) or the relay's own recogniser
    (``local``): a relay's speech settings for it, and what reads the utterances it served
    (a relay's own, for ``local``)."""
    if kind == "standin":
        with TimedStt() as stt:
            yield stt_settings(stt.base_url), lambda _relay: stt.calls
        return
    if kind == "local":
        yield {"STT_API": "local"}, decoded
        return
    with harness.server_process(["-m", "bench", "stt-server"], log, name="PocketSphinx") as srv:

        def calls(_relay: Server) -> int:
            return int(httpx.get(srv.base_url + "/health", timeout=5).json()["requests"])

        yield stt_settings(srv.base_url + "/v1"), calls


@contextlib.contextmanager
def relays(
    args: argparse.Namespace, stt: dict[str, str], sources: dict[str, dict[str, str]]
) -> Iterator[dict[str, Server]]:
    """A relay per name of ``sources`` capturing its sources into the speech service of the
    settings ``stt``; an agent against a fake LLM with ``--agent``, else none (the audio's
    figures)."""
    with contextlib.ExitStack() as stack:
        llm = stack.enter_context(FakeLLM()).base_url if args.agent else None
        servers: dict[str, Server] = {}
        for name, extra in sources.items():
            slug = name.replace(" ", "-")
            path = stack.enter_context(harness.data_directory(None, f"relay-bench-{slug}-"))
            log = stack.enter_context(harness.log_file(f"audio-{slug}"))
            settings = stt | extra
            env = relay_env(**settings) if llm is None else agent_env(llm, **settings)
            servers[name] = stack.enter_context(harness.relay_process(path, log, env))
        yield servers


def agent(args: argparse.Namespace) -> str:
    return "a fake LLM ticking every second" if args.agent else "no agent"


def print_restarts(server: Server, prefix: str = "") -> None:
    """The actors of ``server`` that restarted, from ``GET /health``."""
    status, body = harness.health(server)
    actors: dict[str, Any] = body.get("actors") or {}
    restarts = {n: a["restarts"] for n, a in actors.items() if a.get("restarts")}
    print(f"  {prefix}GET /health -> {status}; actor restarts: {restarts or 'none'}")


def ratio_cells(row: Row, off: Row) -> str:
    p99 = ratio(row.median("p99"), off.median("p99"))
    verdict = "pass" if p99 <= P99_TARGET else "FAIL"
    return f"{ratio(row.median('rps'), off.median('rps')):>6.2f} {p99:>6.2f} {verdict:>6}"


def idle_cpu(servers: dict[str, Server], seconds: float) -> None:
    """Each relay's CPU (and its capture programs') over ``seconds`` with no requests."""
    meters = {n: Meter(s.pid, capture_processes(s.pid, "pcm_source")) for n, s in servers.items()}
    time.sleep(seconds)
    for name, meter in meters.items():
        used = meter.read()
        print(
            f"  idle {used.wall:.0f} s, {name}: relay {used.server / used.wall * 100:.1f} % of a "
            f"core, its {len(meter.idle)} capture programs {used.idle / used.wall * 100:.1f} %"
        )


def sources(args: argparse.Namespace, tmp: Path) -> dict[str, str]:
    """Both capture sources at real speed: generated sound, or, for the local recogniser (a
    model that must hear words), espeak-ng's sentences over and over."""
    wav = audio_speech.recording(tmp)[0] if args.stt == "local" else None
    return {
        "AUDIO_SOURCE": pcm_command(1.0, seed=1, write_ms=args.write_ms, wav=wav),
        "MIC_SOURCE": pcm_command(1.0, seed=2, write_ms=args.write_ms, wav=wav),
    }


class Worker:
    """The local recogniser's worker of a relay, if it runs one: what it used since made."""

    def __init__(self, relay: int) -> None:
        self.relay, self.began = relay, time.monotonic()
        self.cpu = self._cpu()

    def _cpu(self) -> float:
        return sum(map(cpu_s, capture_processes(self.relay, "whisper_worker")))

    def used(self) -> str:
        if not (pids := capture_processes(self.relay, "whisper_worker")):
            return ""
        share = (self._cpu() - self.cpu) / (time.monotonic() - self.began) * 100
        return f"; its worker {share:.1f} % of a core, RSS {rss_mb(pids[0]):.0f} MB"


def ingest(args: argparse.Namespace) -> None:
    print(
        f"\n== ingest: audio on (both sources at real speed, {args.stt} speech service) against "
        f"audio off, {agent(args)}; {args.seconds:g} s x {args.rounds} rounds per row at "
        f"{args.conns} connections, in turns"
    )
    with (
        tempfile.TemporaryDirectory(prefix="relay-bench-speech-") as tmp,
        speech_service(args.stt, Path("/dev/null")) as (stt, calls),
        relays(args, stt, {"audio on": sources(args, Path(tmp)), "audio off": {}}) as servers,
    ):
        idle_cpu(servers, args.idle)
        on = servers["audio on"]
        worker, heard, rows = Worker(on.pid), calls(on), list[Row]()
        for endpoint in ENDPOINTS:
            rows += in_turns(
                servers, "POST", endpoint, args.conns, args.rounds, args.seconds, rotate=True
            ).values()
        print(f"  utterances transcribed during the rows: {calls(on) - heard}{worker.used()}")
        for name, server in servers.items():
            print(f"  {name}: RSS {rss_mb(server.pid):.1f} MB")
            print_restarts(server, f"{name}: ")
    print_table("Medians across rounds (cpu = cores busy over the window):", rows)
    for row in rows:
        by_round = [round(r.p99, 1) for r in row.rounds]
        print(
            f"  {row.scenario} {row.endpoint}: relay CPU {row.median('cpu_us'):.0f} µs a request; "
            f"p99 ms by round {by_round}"
        )
    print(f"\nAudio on vs off (req/s and p99 ratios; target: p99 <= {P99_TARGET:g} x off):")
    heads = f"{'req/s':>6} {'p99':>6} {'target':>6}"
    print_ratios(rows, "audio off", ("audio on",), heads, ratio_cells)


def memory(args: argparse.Namespace) -> None:
    print(
        f"\n== memory: {args.minutes:g} simulated minutes of sound at {args.speed:g} x real time "
        f"({args.minutes * 60 / args.speed:.0f} s), RSS every {args.every:g} simulated minutes, "
        f"stand-in speech service, {agent(args)}"
    )
    points: list[tuple[float, float]] = []
    source = {"AUDIO_SOURCE": pcm_command(args.speed, seconds=args.minutes * 60)}
    with TimedStt() as stt, relays(args, stt_settings(stt.base_url), {"memory": source}) as servers:
        relay, began = servers["memory"], time.monotonic()
        table = Table("simulated min >13.1f|RSS MB >7.1f|vs start >8.2f|utterances >10")
        table.head(blank=True)
        start = rss_mb(relay.pid)
        table.row(0.0, start, 0.0, stt.calls)
        for k in range(1, math.floor(args.minutes / args.every + 1e-9) + 1):
            time.sleep(max(began + k * args.every * 60 / args.speed - time.monotonic(), 0))
            minutes = (time.monotonic() - began) * args.speed / 60
            points.append((minutes, rss_mb(relay.pid)))
            table.row(minutes, points[-1][1], points[-1][1] - start, stt.calls)
        print_restarts(relay)
    kept = [p for p in points if p[0] >= args.warmup]
    low, high = min((p[1] for p in kept), default=math.nan), max((p[1] for p in kept), default=0)
    print(
        f"\nRSS at start {start:.1f} MB, at the end {points[-1][1] if points else math.nan:.1f} "
        f"MB; after {args.warmup:g} simulated minutes between {low:.1f} and {high:.1f} MB, slope "
        f"{slope_per_hour(kept):+.2f} MB per simulated hour ({len(kept)} readings)"
    )


def latency(args: argparse.Namespace) -> None:
    print(
        f"\n== latency: {args.utterances} utterances at {args.latency_speed:g} x real time, from "
        "the stand-in's answer to the item's arrival on GET /feed/stream"
    )
    source = {"AUDIO_SOURCE": pcm_command(args.latency_speed)}
    with TimedStt() as stt, relays(args, stt_settings(stt.base_url), {"latency": source}) as on:
        with FeedListener(on["latency"].base_url) as feed:
            bound = args.utterances * 10 / args.latency_speed + LISTEN_MARGIN_S  # a part <= 10 s
            feed.wait_for(lambda: len(feed.transcripts()) >= args.utterances, bound)
            time.sleep(0.5)  # the last answers' items
            arrived = feed.transcripts()[: args.utterances]
        sent = dict(stt.sent)
    delays = [(at - sent[text]) * 1000 for at, text in arrived if text in sent]
    print(f"  answers sent {len(sent)}, transcripts read {len(arrived)}, matched {len(delays)}")
    verdict = "pass" if delays and max(delays) <= LATENCY_TARGET_MS else "FAIL"
    print(
        f"  answer -> feed: p50 {median(delays):.2f} ms, p95 {percentile(delays, 95):.2f} "
        f"ms, max {max(delays, default=math.nan):.2f} ms over {len(delays)} utterances "
        f"(target <= {LATENCY_TARGET_MS:g} ms: {verdict})"
    )


OPTIONS = [
    arg("--quick", action="store_true", help="a smoke run of each target"),
    arg("--targets", help=f"comma-separated, from {','.join(TARGETS)}"),
    arg("--real", action="store_true", help="add the real-speech check"),
    arg("--stt", choices=("standin", "real", "local"), default="standin"),
    arg("--conns", type=at_least(1), default=16),
    arg("--agent", action="store_true", help="an agent behind each relay"),
    arg("--write-ms", type=at_least(1), default=20, help="ingest: capture writes"),
    arg("--seconds", type=at_least(1), help="per round (3; quick 1)"),
    arg("--rounds", type=at_least(1), help="per row (5; quick 1)"),
    arg("--idle", type=at_least(1.0, float), help="idle CPU window, s (10; 2)"),
    arg("--minutes", type=at_least(1.0, float), help="of sound (60; quick 10)"),
    arg("--speed", type=at_least(1.0, float), help="x real time (20; quick 20)"),
    arg("--every", type=at_least(0.1, float), help="sim. minutes (2; quick 1)"),
    arg("--warmup", type=at_least(0.0, float), help="sim. minutes (10; quick 2)"),
    arg("--latency-speed", type=at_least(1.0, float), default=5.0),
    arg("--utterances", type=at_least(1), help="latency run (100; quick 15)"),
    arg("--speech", type=at_least(1.0, float), help="local: minutes of it (60; quick 3)"),
]


def run(args: argparse.Namespace) -> int:
    fill_defaults(args, seconds=(1, 3), rounds=(1, 5), idle=(2, 10), minutes=(10, 60))
    fill_defaults(args, speed=(20, 20), every=(1, 2), warmup=(2, 10), utterances=(15, 100))
    fill_defaults(args, speech=(3, 60))
    args.targets = choose(args.targets or "ingest,memory,latency", TARGETS)
    if args.real and "real" not in args.targets:
        args.targets.append("real")
    if "ingest" in args.targets and not load.wrk_available():
        raise UsageError(load.WRK_INSTALL_HINT)
    exit_on_sigterm()
    # a relay stopped in the middle of an upload resets it: the stand-in's aiohttp would say so
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    print(f"sinain-relay audio bench: targets {','.join(args.targets)}")
    runs = {"ingest": ingest, "memory": memory, "latency": latency, "real": audio_speech.run}
    runs["local"] = audio_local.run
    for target in args.targets:
        runs[target](args)
    return 0
