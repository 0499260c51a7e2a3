"""Hud freshness: recorded sessions replayed over HTTP against two relays at once, both asking
one fake LLM or the server at ``--base-url``: the defaults against a fixed 30 s beat, or with and
without screen images (``--vision``). docs/benchmarks.md defines the table's columns."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import httpx

from bench.figures import Table, at_least, cell
from bench.runner import UsageError, arg, flags
from bench.stats import median, percentile, ratio
from config.agent.settings import DEFAULT_MODEL, DEFAULT_VISION_MODEL
from config.logs import configure_logging
from tests.support.day_session import (
    DAY_SESSION,
    Moment,
    event_to_hud_s,
    load_moments,
    moment_acks,
    moment_to_hud_s,
    repeated,
    with_hud_times,
    with_screens,
)
from tests.support.harness import Server, relay_env, relay_process
from tests.support.meter import rss_mb
from tests.support.model_process import children, server_pid
from transport.agent.fake_llm import FakeLLM
from transport.demo.replay import DEMO_SESSION, Replayer, SessionEvent, load_session

MAX_AGE_MS = 120_000
TAIL_MARGIN_S = 3.0
"""Wall seconds waited after the last tick could have answered."""
NAMED_SESSIONS = {"demo": DEMO_SESSION, "day": DAY_SESSION}
"""The sessions ``--session`` knows by name."""
SESSION_HELP = f"{', '.join(NAMED_SESSIONS)} or a session file; repeatable (default: all named)"


class Config(NamedTuple):
    """A configuration (``economy``: ``AGENT_ECONOMY``, ``vision``: ``AGENT_VISION_ENABLED``)."""

    name: str
    debounce_ms: int
    interval_ms: int
    economy: bool = True
    vision: bool = True


CONFIGS = (Config("event-driven", 3_000, 30_000), Config("fixed 30 s beat", 30_000, 30_000, False))
VISION_CONFIGS = (
    Config("vision on", 3_000, 30_000),
    Config("vision off", 3_000, 30_000, vision=False),
)
"""``--vision``: the defaults, with and without screen images."""
TABLE = Table(
    "configuration <15|LLM calls >9|failed >6|entries >7|unchanged >9|freshness p50 >13|"
    "event→hud p50 >13|event→hud p90 >13|unanswered >10|labelled >8|moment→hud p50 >14|"
    "moment→hud p90 >14|images >6|tokens in >9|$/h >7",
    indent="  ",
)
"""A row per run, of the texts :func:`measured` makes."""


class Model(NamedTuple):
    """What the relays ask: a fake LLM, a server at ``base_url`` or a GGUF model ``local``."""

    base_url: str
    llm: FakeLLM | None
    name: str = DEFAULT_MODEL
    vision: str = DEFAULT_VISION_MODEL
    local: str | None = None

    def pid(self, relay: int) -> int | None:  # the model's process, if one of this machine's
        worker = max(children(relay), key=rss_mb, default=None)  # the biggest: the model's
        return None if self.llm else worker if self.local else server_pid(self.base_url)


@dataclass(frozen=True)
class Session:
    """A session to replay and the moments labelled in it (``None``: no labels file)."""

    path: Path
    events: tuple[SessionEvent, ...]
    moments: tuple[Moment, ...] | None
    period_s: float
    """Seconds from one pass of the session to the next (``--hour`` replays it again and again)."""

    @property
    def duration_s(self) -> float:
        return self.events[-1].at


@dataclass
class Run:
    """One relay, its fake LLM and its replayer, and what they measured."""

    config: Config
    model: Model
    key: str
    server: Server
    replayer: Replayer
    start_ms: int = 0
    entries: list[dict[str, Any]] = field(default_factory=list)
    health: dict[str, Any] = field(default_factory=dict)

    @property
    def calls(self) -> int:
        """The fake LLM's requests from this relay (its key: every one is a tick's call, since a
        start asks nothing); against a server, its ticks."""
        if self.model.llm is not None:
            mine = f"Bearer {self.key}"
            return sum(r.authorization == mine for r in self.model.llm.requests)
        agent = self.health.get("agent", {})
        return int(agent.get("totalCalls", 0)) + int(agent.get("failures", 0))


def session_path(value: str) -> Path:
    """``--session``: a name of :data:`NAMED_SESSIONS`, or a session file.

    >>> session_path("day") == DAY_SESSION, session_path("mine.jsonl")
    (True, PosixPath('mine.jsonl'))
    """
    return NAMED_SESSIONS.get(value, Path(value))


@contextlib.contextmanager
def started(
    config: Config, model: Model, session: Session, speed: float, tmp: Path
) -> Iterator[Run]:
    """A relay for ``config`` asking ``model``, and a replayer of ``session`` to it (unstarted)."""
    slug = config.name.replace(" ", "-")
    times = {"DEBOUNCE": config.debounce_ms, "INTERVAL": config.interval_ms, "MAX_AGE": MAX_AGE_MS}
    scaled = {f"AGENT_{name}_MS": str(max(1, round(ms / speed))) for name, ms in times.items()}
    key = f"bench-freshness-{slug}" if model.llm else os.environ.get("OPENROUTER_API_KEY", "-")
    env = relay_env(
        OPENROUTER_API_KEY=key,
        AGENT_BASE_URL=model.base_url,
        AGENT_MODEL=model.local or model.name,
        AGENT_API="local" if model.local else "openai",
        AGENT_VISION_MODEL=model.vision,
        AGENT_VISION_ENABLED=str(config.vision).lower(),
        AGENT_ECONOMY=str(config.economy).lower(),
        LOG_FORMAT="json",
        **scaled,
    )
    with relay_process(str(tmp / slug), tmp / f"{slug}.log", env, log_level=None) as server:
        replayer = Replayer(server.base_url, session.events, speed=speed)
        run = Run(config, model, key, server, replayer)
        try:
            yield run
        finally:
            run.replayer.stop()


def collect(run: Run) -> None:
    """Read the run's agent entries (every page) and ``/health``."""
    params: dict[str, Any] = {"since": run.start_ms, "limit": 500}
    with httpx.Client(base_url=run.server.base_url, timeout=5.0) as client:
        while params.get("before", 0) is not None:  # the last page has no next
            page = client.get("/agent/history", params=params).json()
            run.entries.extend(page["results"])
            params["before"] = page.get("next")
        run.health = client.get("/health").json()
        feed = client.get("/feed", params={"after": 0}).json()["messages"]
    run.entries.sort(key=lambda e: e["ts"])
    run.entries[:] = with_hud_times(run.entries, feed)


def hourly_cost(health: dict[str, Any], session_s: float) -> float:
    """USD per hour of session time: what the relay counted its calls cost (``/health``'s
    ``agent.costByModel``: each model's calls at its price in the table, or as the provider
    reported).

    >>> models = {"a": {"costUsd": 0.00056}, "b": {"costUsd": 0.0012}, "local": {"costUsd": None}}
    >>> round(hourly_cost({"agent": {"costByModel": models}}, session_s=1_800), 6)
    0.00352
    >>> hourly_cost({"agent": {"costByModel": {}}}, session_s=60), hourly_cost({}, session_s=60)
    (0.0, 0.0)
    """
    models = health.get("agent", {}).get("costByModel", {}).values()
    return sum(m.get("costUsd") or 0.0 for m in models) * 3600 / session_s


def seconds(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.1f} s"


def moments_to_hud_s(run: Run, session: Session, speed: float) -> list[float | None] | None:
    """:func:`moment_to_hud_s` of each labelled moment in a run (``None``: no labels)."""
    if session.moments is None:
        return None
    acks = moment_acks(session.moments, session.events, run.replayer.posted)
    return moment_to_hud_s(acks, run.entries, speed)


def measured(run: Run, session: Session, speed: float) -> tuple[str, ...]:
    """The table's row of one run."""
    latencies = event_to_hud_s(run.replayer.posted, run.entries, speed)
    answered = [v for v in latencies if v is not None]
    freshness_ms = [e.get("contextFreshnessMs") for e in run.entries]
    freshness = [ms * speed / 1000 for ms in freshness_ms if ms is not None]
    agent = run.health.get("agent", {})
    moments = ["-", "-", "-"]
    if (per_moment := moments_to_hud_s(run, session, speed)) is not None:
        to_hud = [v for v in per_moment if v is not None]
        p50, p90 = seconds(median(to_hud)), seconds(percentile(to_hud, 90))
        moments = [f"{len(to_hud)}/{len(per_moment)}", p50, p90]
    return (
        run.config.name, str(run.calls), str(agent.get("failures", "?")), str(len(run.entries)),
        str(agent.get("unchangedSkips", "?")), seconds(median(freshness)),
        seconds(median(answered)), seconds(percentile(answered, 90)),
        str(len(latencies) - len(answered)), *moments,
        str(agent.get("vision", {}).get("imagesSent", "?")),
        str(agent.get("totalTokens", {}).get("in", "?")),
        f"${hourly_cost(run.health, session.duration_s):.4f}",
    )  # fmt: skip


def print_moments(session: Session, runs: Sequence[Run], speed: float) -> None:
    """Each labelled moment and its moment→hud in each run (``-``: unanswered)."""
    assert session.moments is not None
    columns = [moments_to_hud_s(run, session, speed) or [] for run in runs]
    names = [run.config.name for run in runs]
    print("  " + "  ".join(["moment at", *names, "reason"]))
    for n, moment in enumerate(session.moments):
        cells = [seconds(c[n]).rjust(len(name)) for c, name in zip(columns, names, strict=True)]
        print(f"  {moment.at:7.1f} s  " + "  ".join(cells) + f"  {moment.reason}")


@contextlib.contextmanager
def asked(args: argparse.Namespace, speed: float) -> Iterator[Model]:
    """The server of ``--base-url``, the model ``--local``, or a new fake LLM (for a session)."""
    if args.base_url or args.local:
        url = (args.base_url or "http://127.0.0.1:9/v1").rstrip("/")  # unused with a local model
        yield Model(url, None, args.model, args.vision_model, args.local)
        return
    with FakeLLM(mode="summarise", latency_s=args.llm_delay_s / speed) as llm:
        yield Model(llm.base_url, llm, args.model, args.vision_model)


def replay(
    session: Session, configs: Sequence[Config], model: Model, speed: float, llm_delay_s: float
) -> list[Run]:
    """Replay ``session`` against a relay of each configuration at once; the finished runs."""
    tail_s = (max(c.interval_ms for c in configs) / 1000 + llm_delay_s) / speed
    labels = "no labels" if session.moments is None else f"{len(session.moments)} moments"
    print(
        f"{session.path.name}: {len(session.events)} requests over {session.duration_s:g} s, "
        f"{labels}; about {(session.duration_s / speed + tail_s + TAIL_MARGIN_S):.0f} s"
    )
    with (
        tempfile.TemporaryDirectory(prefix="relay-freshness-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        runs = [stack.enter_context(started(c, model, session, speed, Path(tmp))) for c in configs]
        for run in runs:
            run.start_ms = int(time.time() * 1000) - 1
            run.replayer.start()
        for run in runs:
            rss = watch(run, session, speed)
            print(f"  [{run.config.name}] model's RSS after each pass, MB: {rss}" * bool(rss))
        time.sleep(tail_s + TAIL_MARGIN_S)
        for run in runs:
            collect(run)
            if run.replayer.failures:
                print(f"  [{run.config.name}] {run.replayer.failures} posts failed")
    return runs


def watch(run: Run, session: Session, speed: float) -> str:
    """Wait for the replay to end; the model process's RSS after each pass, if one was read."""
    rss = []
    for _ in range(int(session.duration_s / session.period_s) + 1):
        run.replayer.wait(session.period_s / speed)
        pid = run.model.pid(run.server.pid)
        rss += [f"{rss_mb(pid):.0f}"] if pid else []
    if not run.replayer.wait(60):
        print(f"  [{run.config.name}] the replay did not end in time")
    return " ".join(rss)


def print_ratios(rows: Sequence[tuple[str, ...]]) -> None:
    """The first row's calls, tokens in and ``$/h`` over the second's.

    >>> cells = {"LLM calls": ("11", "10"), "tokens in": ("9000", "6000")}
    >>> cells["$/h"] = ("$0.06", "$0.02")
    >>> print_ratios([tuple(cells[h][n] if h in cells else name for h in TABLE.heads)
    ...               for n, name in enumerate(("vision on", "vision off"))])
    <BLANKLINE>
      vision on / vision off: LLM calls 1.10, tokens in 1.50, $/h 3.00
    """
    heads = ("LLM calls", "tokens in", "$/h")
    first, second = ([float(row[TABLE.heads.index(h)].lstrip("$")) for h in heads] for row in rows)
    ratios = (
        f"{h} {cell(ratio(a, b), '.2f')}" for h, a, b in zip(heads, first, second, strict=True)
    )
    print(f"\n  {rows[0][0]} / {rows[1][0]}: " + ", ".join(ratios))


OPTIONS = [
    *flags(
        moments=(bool, None, "list each labelled moment's moment→hud too"),
        vision=(bool, None, "measure the defaults with and without screen images, on sessions"),
        hour=(bool, None, "replay each session again and again for an hour (else once)"),
    ),
    arg("--speed", type=at_least(0, float, above=True), default=1.0, help="replay speed (1.0)"),
    arg("--llm-delay-s", type=at_least(0, float), default=1.0, help="the fake LLM's latency"),
    arg("--session", action="append", type=session_path, help=SESSION_HELP),
    arg("--base-url", help="ask this OpenAI-compatible API root (http://h:p/v1), not a fake"),
    arg("--local", help="ask this GGUF model in the relay's worker (AGENT_API=local)"),
    arg("--model", default=DEFAULT_MODEL, help=f"AGENT_MODEL ({DEFAULT_MODEL})"),
    arg("--vision-model", default=DEFAULT_VISION_MODEL, help="AGENT_VISION_MODEL"),
]


def run(args: argparse.Namespace) -> int:
    speed: float = args.speed
    configs = (VISION_CONFIGS if args.vision else CONFIGS)[: 2 - bool(args.local or args.base_url)]
    sessions = []
    for path in args.session or NAMED_SESSIONS.values():
        try:
            events = load_session(path)
            hour = repeated(events, load_moments(path, events), until_s=3600 if args.hour else 0)
            events = with_screens(hour[0]) if args.vision else hour[0]
            sessions.append(Session(path, events, *hour[1:]))
        except (OSError, ValueError) as exc:
            raise UsageError(f"--session {path}: {exc}") from exc
    # the replayers' and fake LLMs' own log lines: warnings only (a failed post), on stderr
    configure_logging("console", "warning", stream=sys.stderr)
    shown = "; ".join(
        f"{c.name}: debounce {c.debounce_ms / 1000:g} s, interval {c.interval_ms / 1000:g} s, "
        f"economy {'on' if c.economy else 'off'}, vision {'on' if c.vision else 'off'}"
        for c in configs
    )
    fake = f"fake LLM (mode summarise) answering after {args.llm_delay_s:g} s"
    server = args.base_url or args.local or fake
    print(
        f"sinain-relay hud freshness at speed {speed:g}, {server}; models {args.model}, "
        f"with images {args.vision_model}; {shown}"
    )
    if speed != 1:
        print(
            f"  debounce, interval, AGENT_MAX_AGE_MS and the LLM delay divided by {speed:g}; "
            "figures multiplied back (session seconds)"
        )
    if args.vision:
        print("  the sessions' images: the thumbnails of tests/data/screens, one per app")
    for session in sessions:
        print()
        with asked(args, speed) as model:
            runs = replay(session, configs, model, speed, args.llm_delay_s)
        print()
        rows = [measured(run, session, speed) for run in runs]
        TABLE.head()
        for row in rows:
            TABLE.row(*row)
        for run in runs:
            if failed := run.health.get("agent", {}).get("failures"):
                agent = run.health["agent"]
                print(
                    f"  [{run.config.name}] {failed} ticks failed, {agent.get('circuitSkips')} "
                    f"not started (circuit open); the last error: {agent.get('lastError')}"
                )
        if args.vision:
            print_ratios(rows)
        if args.moments and session.moments is not None:
            print()
            print_moments(session, runs, speed)
    print(
        "\n  $/h: what each relay counted its calls cost (/health agent.costByModel: each "
        "model's tokens at its price in config/prices.json, or the provider's usage.cost), per "
        "hour of session time. Session seconds throughout; docs/benchmarks.md defines each "
        "column."
    )
    return 0
