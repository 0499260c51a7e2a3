"""The one command line of the benchmarks: ``python3 -m bench <case> [options]``. Each case is
declared once in :data:`CASES`; its module declares its options as data (:data:`Options`, made
by :func:`arg` and :func:`flags`) and runs from the parsed arguments (``run(args)``). Only this
module builds the parser, and it imports a case's module only to run it or show its help, so
that the list of cases is quick."""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

Option = tuple[tuple[str, ...], dict[str, Any]]
"""One ``add_argument`` call: its names and its keywords."""
Options = Sequence[Option]


class UsageError(Exception):
    """A case's arguments are wrong together, or a tool it needs is missing: a usage error."""


class Case(NamedTuple):
    """A benchmark: its module (``bench.<module>``: ``OPTIONS`` and ``run(args)``) and a line."""

    module: str
    description: str


CASES: dict[str, Case] = {
    "ab": Case("bench_ab", "two checkouts in turns: POST /feed and /sense req/s, p99, CPU"),
    "audio": Case("bench_audio", "audio capture: ingest cost, memory over hours, latency"),
    "auth": Case("bench_auth", "what the access checks cost a request"),
    "bare-app": Case("bare_app", "serve the bare aiohttp app the floor is measured against"),
    "body-memory": Case("bench_body_memory", "RSS while clients hold large /sense bodies"),
    "chaos": Case("chaos", "chaos soak: faults and LLM failures under load; nothing lost"),
    "console": Case("bench_console", "the console in Chromium: weight, first paint, items shown"),
    "conns": Case("bench_conns", "idle connections against the relay's open-file limit"),
    "costs": Case("bench_costs", "a tick's own cost, idle CPU and start-up time"),
    "escalation": Case("bench_escalation", "ingestion with escalation on against off"),
    "floor": Case("bench_floor", "the relay against a bare aiohttp app: req/s, p99, CPU"),
    "forget": Case("bench_forget", "how long forgetting an hour of a replayed session takes"),
    "freshness": Case("bench_freshness", "replayed sessions: event and moment to hud, cost"),
    "growth": Case("bench_growth", "throughput, p99 and memory as OCR size, conns, time grow"),
    "ingest": Case("bench_ingest", "POST /feed and /sense under load while the LLM fails"),
    "memory": Case("bench_memory", "resident size after 100k posts and a million more"),
    "metrics": Case("bench_metrics", "what the request metrics and a /metrics scrape cost"),
    "models": Case("bench_models", "the relay's prompts put to a real model's API"),
    "privacy": Case("bench_privacy", "what redaction costs per call"),
    "prompt": Case("bench_prompt", "what the prompt keeps of the corpus windows, and its cost"),
    "storage": Case("bench_storage", "RELAY_SYNC and :memory: costs, shutdown, the index"),
    "stt-server": Case("stt_server", "serve PocketSphinx as an OpenAI-style speech service"),
    "text-cost": Case("text_cost", "the text work's cost on text made to be slow"),
    "vad": Case("bench_vad", "the CPU and the utterances of voice detection"),
}


def arg(*names: str, **keywords: Any) -> Option:
    """One option, as ``add_argument(*names, **keywords)`` would take it."""
    return names, keywords


def flags(**options: tuple[Any, Any, str]) -> list[Option]:
    """Options ``name=(type, default, help)``: ``--name`` (dashes for underscores; ``bool``: a
    flag; default ``...``: required), or a positional argument for a name that starts with
    ``_``."""
    made: list[Option] = []
    for name, (kind, default, text) in options.items():
        if name.startswith("_"):
            made.append(arg(name[1:], type=kind, help=text))
        elif kind is bool:
            made.append(arg("--" + name.replace("_", "-"), action="store_true", help=text))
        else:
            required = default is ...
            keywords = {"type": kind, "required": required, "help": text}
            made.append(arg("--" + name.replace("_", "-"), default=None if required else default,
                            **keywords))  # fmt: skip
    return made


def fill_defaults(args: argparse.Namespace, **pairs: tuple[float, float]) -> None:
    """Each option of ``pairs`` not given gets its ``(quick, full)`` default, by ``--quick``."""
    for name, pair in pairs.items():
        if getattr(args, name) is None:
            setattr(args, name, pair[0] if args.quick else pair[1])


def choose(text: str | None, names: Sequence[str]) -> list[str]:
    """The names a comma-separated option gives (all when ``None``), in ``names``' order."""
    wanted = {n.strip() for n in (text or ",".join(names)).split(",") if n.strip()}
    if not wanted or wanted - set(names):
        raise UsageError(f"takes a comma-separated list of {', '.join(names)}, not {text!r}")
    return [name for name in names if name in wanted]


def exit_on_sigterm() -> None:
    """SIGTERM ends the run through the ``finally`` blocks, which stop every subprocess."""
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))


def _parser(chosen: str | None) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser, Any]:
    """The parser: every case a sub-command, the ``chosen`` one's options declared on it; the
    chosen case's sub-parser and module."""
    parser = argparse.ArgumentParser(
        prog="python3 -m bench", description="Run one benchmark case; it prints its figures."
    )
    cases = parser.add_subparsers(dest="case", metavar="<case>", required=True)
    module, chosen_parser = None, parser
    for name, case in CASES.items():
        sub = cases.add_parser(name, help=case.description, description=case.description)
        if name == chosen:
            module, chosen_parser = importlib.import_module(f"bench.{case.module}"), sub
            for names, keywords in module.OPTIONS:
                sub.add_argument(*names, **keywords)
    return parser, chosen_parser, module


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (the process's arguments by default), run the case; its exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        _parser(None)[0].print_help()
        return 2
    parser, case_parser, module = _parser(argv[0] if argv[0] in CASES else None)
    args = parser.parse_args(argv)
    run: Callable[[argparse.Namespace], int | None] = module.run
    try:
        return run(args) or 0
    except UsageError as exc:
        case_parser.error(str(exc))  # exits with 2
