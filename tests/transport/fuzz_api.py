"""Fuzz the relay's HTTP API from its OpenAPI document, at length, and print what it found.

Run from the repository root::

    python -m tests.transport.fuzz_api                      # 500 generated cases per operation
    python -m tests.transport.fuzz_api --examples 2000 --seed 7
    python -m tests.transport.fuzz_api --quick              # 50 per operation: a smoke run

A relay starts in this process (in memory, a token, the fake LLM, two ticks done so the agent's
reads have entries); :func:`tests.transport.openapi_contract.fuzz` sends its fixed corpora, then
``--examples`` Hypothesis cases per operation and overlay WebSocket messages, and checks every
answer against ``GET /openapi.json``. It prints the cases by status, kind and operation, the
5xx answers and the contract problems (each with its request); exit code 1 if there is any.
"""

from __future__ import annotations

import contextlib
import io
import sys
import time

import httpx

from actors.kernel.clock import FakeClock
from actors.tree import Relay, start_relay
from config.agent_settings import AgentSettings
from config.audio.settings import AudioConfig
from config.logs import configure_logging
from config.settings import Settings
from tests.support.harness import parser
from tests.transport.openapi_contract import Contract, fuzz
from transport.demo.fake_llm import FakeLLM
from transport.demo.fake_stt import FakeStt
from transport.frontend import HttpFrontend
from transport.openapi import openapi_document
from transport.streams import limits as stream_limits

TOKEN, HOUR_MS, SHOWN = "fuzz-token", 3_600_000, 10  # SHOWN: problems printed of each kind


def main(argv: list[str] | None = None) -> int:
    args = parser(
        __doc__,
        examples=(int, 500, "generated cases per operation"),
        seed=(int, 1, "Hypothesis seed (default 1)"),
        quick=(bool, None, "50 cases per operation"),
    ).parse_args(argv)
    examples = 50 if args.quick else args.examples
    configure_logging("json", "error", stream=io.StringIO())  # one line per 4xx: not figures
    stream_limits.CLIENT_CHECK_S = 0.05  # a closed stream frees its slot at once
    with FakeLLM() as llm, FakeStt() as stt:
        # economy off: each tick calls the fake LLM, so the two ticks make two entries
        agent = AgentSettings(
            interval_ms=HOUR_MS,
            debounce_ms=HOUR_MS,
            timeout_ms=2_000,
            base_url=llm.base_url,
            api_key="fuzz-key",
            economy=False,
        )
        audio = AudioConfig(stt_api="openai", stt_base_url=stt.base_url, stt_api_key="fuzz")
        settings = Settings(
            port=0,
            token=TOKEN,
            actor_timeout_ms=1_000,
            data_dir=":memory:",
            agent=agent,
            audio=audio,
        )
        relay = start_relay(settings, FakeClock(), frontend=HttpFrontend(settings))
        try:
            base_url = "http://{}:{}".format(*relay.address())
            _two_ticks(relay, base_url)
            started = time.perf_counter()
            contract = Contract(openapi_document())
            report = fuzz(base_url, contract, token=TOKEN, examples=examples, seed=args.seed)
            elapsed = time.perf_counter() - started
        finally:
            relay.stop()
    print(f"relay {base_url}, seed {args.seed}, {examples} generated cases per operation")
    print(f"cases run: {report.cases} in {elapsed:.1f} s ({report.cases / elapsed:.0f}/s)")
    print(f"5xx found: {len(report.server_errors)}")
    print(f"contract problems: {len(report.problems)}")
    print(f"not sendable over HTTP (skipped): {report.unsendable}")
    print("by status: " + ", ".join(f"{s}: {n}" for s, n in sorted(report.by_status.items())))
    print("by kind: " + ", ".join(f"{k}: {n}" for k, n in report.by_kind.most_common()))
    print("by operation:")
    for name, count in sorted(report.by_operation.items()):
        print(f"  {name:28} {count}")
    for title, items in (("5xx", report.server_errors), ("problems", report.problems)):
        for item in items[:SHOWN]:
            print(f"{title}: {item[:1000]}")
        if len(items) > SHOWN:
            print(f"{title}: ... and {len(items) - SHOWN} more")
    return 1 if report.server_errors or report.problems else 0


def _two_ticks(relay: Relay, base_url: str) -> None:
    """Two successful ticks (the reads of the agent then have entries and a digest)."""
    ticker = relay.handles["ticker"].proxy()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=base_url, timeout=5, headers=headers) as client:
        for n in range(2):
            client.post("/sense", json={"type": "text", "ts": n, "ocr": f"screen {n}"})
            before = client.get("/agent/last").json()["result"]
            if ticker.tick().get(timeout=5) != "started":
                raise RuntimeError("the ticker did not start a tick")
            deadline = time.monotonic() + 5
            while client.get("/agent/last").json()["result"] == before:
                if time.monotonic() > deadline:
                    raise RuntimeError("a tick did not finish within 5 s")
                time.sleep(0.01)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
