"""A real model on the relay's prompts: how often its answer is parsed, and what reaches the HUD.

Run from the repository root, against any OpenAI-compatible server::

    python -m bench.bench_models --base-url http://127.0.0.1:8000/v1 --model smollm2
    python -m bench.bench_models --base-url http://127.0.0.1:11434/v1 --model llama3.2 \\
        --response-format off
    python -m bench.bench_models --base-url ... --show      # and each answer's hud and verdict
    python -m bench.bench_models --base-url ... --sample 16 # 16 windows spread over all

The windows are the prompt corpus's (:mod:`bench.prompt_corpus`, code, terminals, browsers,
chat, mixed languages) and the shipped demo session's (``transport/demo/session.jsonl``, a
tick every ``--session-step-s`` seconds, each prompt carrying the previous parsed digest as a
tick's does). Each window is one request made as the relay makes it: the same body
(:func:`actors.core.completion.request_body`, ``--max-tokens``/``--temperature`` as
``AGENT_MAX_TOKENS``/``AGENT_TEMPERATURE``), the same ``response_format`` negotiation
(:mod:`actors.core.response_format`: with ``auto`` a refusal steps down at once and the level
that answered is kept for the next window), the same reading of the answer
(:func:`actors.core.completion.parse_analysis`) and the same gate before the feed
(:func:`actors.core.hud_check.checked_hud`). The relay's schedule is left out: every window is
asked, one after the other.

It prints, per response-format level that answered: answers, parsed (JSON read), huds
pushed and withheld by reason, the ``finish_reason`` of the unparsed ones; then refusals,
p50 and p90 latency, tokens in and out. Targets (not asserted) with a small local model:
90 % of answers parsed, no echo of the prompt pushed. The key is ``OPENROUTER_API_KEY``'s,
``unused`` when unset (a local server asks for none).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx
import orjson

from actors.core.completion import (
    NO_OUTPUT,
    parse_analysis,
    parse_chat_completion,
    request_body,
)
from actors.core.errors import LLMError
from actors.core.hud_check import WITHHELD_REASONS, checked_hud
from actors.core.prompt import PreviousDigest, build_prompt
from actors.core.response_format import Level, first_level, is_refusal, step_down
from bench.harness import percentile
from bench.prompt_corpus import (
    T0_MS,
    TICK_AFTER_MS,
    Case,
    case_window,
    cases,
    session_prompt,
    tick_ms,
)
from config.settings import RESPONSE_FORMATS, AgentConfig
from transport.demo.replay import DEMO_SESSION, load_session

DEFAULTS = AgentConfig()
NOT_PUSHED = (NO_OUTPUT, "Idle")


@dataclass(frozen=True, slots=True)
class Window:
    """One prompt's window: its name and how to build the prompt (after the previous digest)."""

    name: str
    at_s: float | None
    """Seconds into the demo session (``None``: a corpus case)."""
    case: Case | None = None


@dataclass(slots=True)
class Figures:
    """What one run measured."""

    answers: Counter[str] = field(default_factory=Counter)
    """Answers by the level that got them."""
    parsed: Counter[str] = field(default_factory=Counter)
    pushed: Counter[str] = field(default_factory=Counter)
    withheld: Counter[tuple[str, str]] = field(default_factory=Counter)
    """By (level, reason)."""
    unparsed_finish: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Unparsed answers by (level, finish_reason)."""
    refusals: Counter[str] = field(default_factory=Counter)
    """Refused requests by the level refused."""
    failures: list[str] = field(default_factory=list)
    latency_s: list[float] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0
    shown: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(window, level, hud as answered, verdict) for ``--show``."""


def windows(session_step_s: float, limit: int | None, sample: int | None = None) -> list[Window]:
    """The corpus's cases, then the demo session every ``session_step_s`` seconds; the first
    ``limit``, or ``sample`` of them spread evenly over the list (a slow model's quick run)."""
    found = [Window(case.name, None, case) for case in cases()]
    length = max(event.at for event in load_session(DEMO_SESSION))
    at = session_step_s
    while at <= length:
        found.append(Window(f"demo@{at:.0f}s", at))
        at += session_step_s
    if sample and sample < len(found):
        found = [found[round(i * (len(found) - 1) / (sample - 1))] for i in range(sample)]
    return found[:limit] if limit else found


def _prompt(window: Window, previous: PreviousDigest | None) -> str:
    if window.case is not None:
        return build_prompt(case_window(window.case), now_ms=tick_ms(window.case))
    assert window.at_s is not None, "a window is a corpus case or a moment of the session"
    return session_prompt(window.at_s, previous)


def _finish_reason(raw: bytes) -> str:
    try:
        data = orjson.loads(raw)
        reason = data["choices"][0].get("finish_reason")
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError):
        return "?"
    return str(reason)


def ask(
    client: httpx.Client, args: argparse.Namespace, prompt: str, level: Level
) -> tuple[httpx.Response, float]:
    """One request at ``level``, and how long it took."""
    body = request_body(
        args.model,
        prompt,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        response_format=level,
    )
    began = time.perf_counter()
    response = client.post(f"{args.base_url}/chat/completions", json=body)
    return response, time.perf_counter() - began


def _negotiated(
    client: httpx.Client, args: argparse.Namespace, prompt: str, level: Level, figures: Figures
) -> tuple[httpx.Response, float, Level] | None:
    """The answer at ``level`` or, after refusals, at a lower one; with the time it took in
    all and the level that answered. ``None`` (and the error printed) for a failure."""
    spent = 0.0
    while True:
        try:
            response, took = ask(client, args, prompt, level)
        except httpx.HTTPError as exc:  # a timeout or a dropped connection
            print(f"  {type(exc).__name__}: {exc}")
            return None
        spent += took
        lower = step_down(args.response_format, level)
        if response.status_code < 300:
            return response, spent, level
        if lower is None or not is_refusal(response.status_code, response.text):
            print(f"  HTTP {response.status_code}: {response.text[:120]}")
            return None
        figures.refusals[level] += 1
        level = lower


def run(args: argparse.Namespace) -> Figures:
    """Ask every window once, as the relay would."""
    figures = Figures()
    remembered: Level | None = None
    previous: PreviousDigest | None = None
    key = os.environ.get("OPENROUTER_API_KEY", "unused")
    headers = {"Authorization": f"Bearer {key}", "X-Title": "sinain-relay bench"}
    with httpx.Client(timeout=args.timeout_s, headers=headers) as client:
        for window in windows(args.session_step_s, args.limit, args.sample):
            prompt = _prompt(window, previous)
            level = first_level(args.response_format, remembered)
            asked = _negotiated(client, args, prompt, level, figures)
            if asked is None:
                figures.failures.append(window.name)
                continue
            response, spent, level = asked
            try:
                completion = parse_chat_completion(response.content)
            except LLMError as exc:
                figures.failures.append(f"{window.name}: {exc}")
                continue
            remembered = level
            figures.latency_s.append(spent)
            figures.tokens_in += completion.tokens_in
            figures.tokens_out += completion.tokens_out
            analysis = parse_analysis(completion.content)
            checked = checked_hud(analysis, completion.content)
            figures.answers[level] += 1
            if analysis.parsed_ok:
                figures.parsed[level] += 1
                if window.at_s is not None:  # the session's next tick reads this digest
                    at_ms = T0_MS + round(window.at_s * 1000) + TICK_AFTER_MS
                    previous = PreviousDigest(analysis.digest, at_ms)
            else:
                figures.unparsed_finish[level, _finish_reason(response.content)] += 1
            if checked.withheld is not None:
                figures.withheld[level, checked.withheld] += 1
                verdict = f"withheld: {checked.withheld}"
            elif checked.analysis.hud not in NOT_PUSHED:
                figures.pushed[level] += 1
                verdict = "pushed"
            else:
                verdict = "not pushed (Idle)"
            figures.shown.append((window.name, level, analysis.hud, verdict))
    return figures


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "0/0"


def report(figures: Figures, args: argparse.Namespace) -> None:
    """Print the figures (``print`` is this script's output, not a log)."""
    print(
        f"model {args.model} at {args.base_url}, AGENT_RESPONSE_FORMAT={args.response_format}, "
        f"max_tokens {args.max_tokens}, temperature {args.temperature}"
    )
    header = f"{'level':<12} {'answers':>7}  {'parsed':<14} {'pushed':>6}  withheld"
    print(header)
    total = Counter[str]()
    for level in (*[lv for lv in RESPONSE_FORMATS if lv != "auto"],):
        answers = figures.answers[level]
        if not answers:
            continue
        withheld = {r: figures.withheld[level, r] for r in WITHHELD_REASONS}
        shown = ", ".join(f"{r} {n}" for r, n in withheld.items() if n) or "none"
        print(
            f"{level:<12} {answers:>7}  {_share(figures.parsed[level], answers):<14} "
            f"{figures.pushed[level]:>6}  {shown}"
        )
        total["answers"] += answers
        total["parsed"] += figures.parsed[level]
        total["pushed"] += figures.pushed[level]
        total["withheld"] += sum(withheld.values())
    print(
        f"{'all':<12} {total['answers']:>7}  {_share(total['parsed'], total['answers']):<14} "
        f"{total['pushed']:>6}  {total['withheld']}"
    )
    unparsed = ", ".join(
        f"{lv}/{why} {n}" for (lv, why), n in sorted(figures.unparsed_finish.items())
    )
    print(f"unparsed by level/finish_reason: {unparsed or 'none'}")
    refused = ", ".join(f"{lv} {n}" for lv, n in figures.refusals.items())
    print(f"refused: {refused or 'none'}; failed requests: {len(figures.failures)}")
    for failure in figures.failures[:5]:
        print(f"  {failure}")
    if figures.latency_s:
        p50 = percentile(figures.latency_s, 50)
        p90 = percentile(figures.latency_s, 90)
        answered = len(figures.latency_s)
        print(
            f"latency p50 {p50:.2f} s, p90 {p90:.2f} s; tokens in {figures.tokens_in} "
            f"({figures.tokens_in // answered} per answer), out {figures.tokens_out} "
            f"({figures.tokens_out // answered} per answer)"
        )
    if args.show:
        for name, shown_level, hud, verdict in figures.shown:
            print(f"  {name:<28} {shown_level:<11} {verdict:<22} {hud[:90]!r}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.bench_models", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--base-url", required=True, help="the API root, e.g. http://h:p/v1")
    parser.add_argument("--model", default=DEFAULTS.model)
    parser.add_argument("--response-format", choices=RESPONSE_FORMATS, default="auto")
    parser.add_argument("--max-tokens", type=int, default=DEFAULTS.max_tokens)
    parser.add_argument("--temperature", type=float, default=DEFAULTS.temperature)
    parser.add_argument("--timeout-s", type=float, default=120.0, help="per request")
    parser.add_argument("--session-step-s", type=float, default=20.0)
    parser.add_argument("--limit", type=int, default=None, help="ask the first N windows only")
    parser.add_argument(
        "--sample", type=int, default=None, help="N windows spread evenly over all of them"
    )
    parser.add_argument("--show", action="store_true", help="print each answer's hud")
    args = parser.parse_args(argv)
    args.base_url = args.base_url.rstrip("/")
    report(run(args), args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
