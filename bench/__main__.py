"""``python -m bench <case> [options]``: the one entry point of the benchmarks.

Each case is declared once in :data:`CASES`: its name, a one-line description and the module
whose ``main(argv)`` runs it (imported only when the case runs, so the list and the help are
quick). ``python -m bench`` alone, ``-h`` or ``--help`` lists every case;
``python -m bench <case> --help`` shows the case's own options. The cases print figures and
assert nothing; docs/benchmarks.md says what each measured.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import NamedTuple


class Case(NamedTuple):
    """A benchmark: its module (``bench.<module>``, with ``main(argv) -> int | None``) and a
    one-line description."""

    module: str
    description: str


CASES: dict[str, Case] = {
    "ab": Case("bench_ab", "two checkouts in turns: POST /feed and /sense req/s, p99, CPU"),
    "audio": Case("bench_audio", "audio capture: ingest cost, memory over hours, latency"),
    "auth": Case("bench_auth", "what the access checks cost a request"),
    "bare-app": Case("bare_app", "serve the bare aiohttp app the floor is measured against"),
    "body-memory": Case("bench_body_memory", "RSS while clients hold large /sense bodies"),
    "chaos": Case("chaos", "chaos soak: faults and LLM failures under load; nothing lost"),
    "conns": Case("bench_conns", "idle connections against the relay's open-file limit"),
    "costs": Case("bench_costs", "a tick's own cost, idle CPU and start-up time"),
    "escalation": Case("bench_escalation", "ingestion with escalation on against off"),
    "floor": Case("bench_floor", "the relay against a bare aiohttp app: req/s, p99, CPU"),
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


def _parser() -> argparse.ArgumentParser:
    lines = [f"  {name:12} {case.description}" for name, case in CASES.items()]
    return argparse.ArgumentParser(
        prog="python -m bench",
        description="Run one benchmark case; it prints its figures.",
        epilog="cases:\n" + "\n".join(lines),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the case ``argv`` names with the rest of ``argv``; its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if not args or args[0] in ("-h", "--help"):
        parser.print_help()
        return 0 if args else 2
    if args[0] not in CASES:
        parser.error(f"no case {args[0]!r}; the cases: {', '.join(CASES)}")
    sys.argv[0] = f"python -m bench {args[0]}"  # what the case's --help and errors call it
    run: Callable[[list[str]], int | None] = importlib.import_module(
        f"bench.{CASES[args[0]].module}"
    ).main
    return run(args[1:]) or 0


if __name__ == "__main__":
    raise SystemExit(main())
