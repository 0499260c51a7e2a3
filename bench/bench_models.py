"""A real model on the relay's prompts: each window of the prompt corpus and the demo session is
asked once of the server at ``--base-url`` exactly as the relay asks (body, ``response_format``
negotiation, parsing, hud gate). docs/benchmarks.md says how to read what it prints."""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field

import httpx
import orjson

from actors.agent.core import completion as chat
from actors.agent.core.hud_check import WITHHELD_REASONS, Checked, checked_hud
from actors.agent.core.prompt import build_prompt
from actors.agent.core.response_format import Level, first_level, is_refusal, step_down
from actors.core.errors import LLMError
from actors.core.screen_image import NOTHING_SENT, ScreenImage
from bench.runner import UsageError, arg
from bench.stats import percentile, ratio
from config.agent.settings import RESPONSE_FORMATS, AgentSettings
from tests.support import model_windows
from tests.support.hud_words import JUDGES, Judged, Now, now_of
from tests.support.meter import cpu_s
from tests.support.model_process import Pid, local_model, server_pid

DEFAULTS = AgentSettings()


@dataclass(slots=True)
class Figures:
    """What one run measured: counts by ``(what, level[, reason])``, and the rest."""

    counts: Counter[tuple[str, ...]] = field(default_factory=Counter)
    failures: list[tuple[str, str]] = field(default_factory=list)
    """(window, what failed) of each window without an answer."""
    latency_s: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=lambda: [0, 0])
    images: list[int] = field(default_factory=lambda: [0, 0])
    """Images asked with, and requests that carried any."""
    shown: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    """(window, level, hud as answered, verdict, digest) for ``--show``."""
    judged: Judged = field(default_factory=Judged)
    cpu_s: list[float] = field(default_factory=list)
    """The model server's CPU seconds of each answer (none: not a process of this machine)."""


def _finish_reason(raw: bytes) -> str:
    try:
        return str(orjson.loads(raw)["choices"][0].get("finish_reason"))
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError):
        return "?"


def _negotiated(
    client: httpx.Client,
    args: argparse.Namespace,
    asked: tuple[str, tuple[ScreenImage, ...]],
    level: Level,
    figures: Figures,
) -> tuple[httpx.Response, float, Level] | str:
    """The answer at ``level`` or, after refusals, at a lower one; with the time it took in
    all and the level that answered. For a failure, what failed."""
    spent = 0.0
    prompt, images = asked
    while True:
        body = chat.request_body(
            args.vision_model if images else args.model,
            prompt,
            max_tokens=args.max_tokens,
            temperature=args.temperature,
            response_format=level,
            images=images,
        )
        began = time.perf_counter()
        try:
            response = client.post(f"{args.base_url}/chat/completions", json=body)
        except httpx.HTTPError as exc:  # a timeout or a dropped connection
            return f"{type(exc).__name__}: {exc}"
        spent += time.perf_counter() - began
        lower = step_down(args.response_format, level)
        if response.status_code < 300:
            return response, spent, level
        refused = is_refusal(response.status_code, response.text, model=body["model"])
        if lower is None or not refused:
            return f"HTTP {response.status_code}: {response.text[:120]}"
        figures.counts["refused", level] += 1
        level = lower


def ask(args: argparse.Namespace, transport: httpx.BaseTransport | None, worker: Pid) -> Figures:
    """Ask every window once, as the relay would, through ``transport`` (``None``: HTTP); the
    CPU time is the model's process's (``worker``, else a server's of this machine)."""
    figures = Figures()
    counts = figures.counts
    remembered: Level | None = None
    previous: str | None = None
    sent = NOTHING_SENT  # the session's calls remember the images they sent; a case is alone
    key = os.environ.get("OPENROUTER_API_KEY", "unused")
    headers = {"Authorization": f"Bearer {key}", "X-Title": "sinain-relay bench"}
    with httpx.Client(timeout=args.timeout_s, headers=headers, transport=transport) as client:
        for window in model_windows.windows(args.session_step_s, args.limit, args.sample):
            level = first_level(args.response_format, remembered)
            shown = sent if window.at_s is not None else NOTHING_SENT
            images = model_windows.images(window, args.images, shown) if args.images else ()
            figures.images = [figures.images[0] + len(images), figures.images[1] + bool(images)]
            tick, now_ms = model_windows.tick(window)
            memory = previous if window.at_s is not None else None
            prompt = build_prompt(tick, now_ms=now_ms)
            pid = args.server_pid or worker() or server_pid(args.base_url)
            used = cpu_s(pid) if pid else 0.0
            asked = _negotiated(client, args, (prompt, images), level, figures)
            if isinstance(asked, str):
                figures.failures.append((window.name, asked))
                figures.judged.missed()
                continue
            figures.cpu_s += [cpu_s(pid) - used] if pid else []
            response, spent, level = asked
            try:
                completion = chat.parse_chat_completion(response.content)
            except LLMError as exc:
                figures.failures.append((window.name, str(exc)))
                figures.judged.missed()
                continue
            remembered = level
            if window.at_s is not None:
                sent = sent.with_sent(images)
            figures.latency_s.append(spent)
            figures.tokens[0] += completion.tokens_in
            figures.tokens[1] += completion.tokens_out
            analysis = chat.parse_analysis(completion.content)
            checked = checked_hud(analysis, completion.content)
            counts["answers", level] += 1
            if analysis.parsed_ok:
                counts["parsed", level] += 1
                if window.at_s is not None:  # the session's next answer must not repeat it
                    previous = analysis.digest
            else:
                counts["unparsed", level, _finish_reason(response.content)] += 1
            _judge(figures, (window.name, level), now_of(tick), (analysis, checked), memory)
    return figures


def _judge(
    figures: Figures,
    asked: tuple[str, Level],
    now: Now,
    answer: tuple[chat.Analysis, Checked],
    memory: str | None,
) -> None:
    """Count what the judges find of an answer (and the gate's verdict on it) to the window
    ``asked`` at a level, about ``now``, after a session's answer whose digest was ``memory``."""
    (analysis, checked), why = answer, answer[1].withheld
    hud = analysis.hud if why else checked.analysis.hud
    found = figures.judged.add(hud, analysis.digest, bool(why), now, memory)
    figures.counts["withheld", asked[1], why or ""] += bool(why)
    figures.counts["pushed", asked[1]] += bool(found["pushed"])
    verdict = " ".join(k for k in (*JUDGES, "copied") if found[k] is True) or "-"
    verdict = f"withheld: {why}" if why else verdict + (f" ({found['why']})" * bool(found["why"]))
    figures.shown.append((*asked, analysis.hud, verdict, analysis.digest))


def _row(name: str, row: Mapping[str, int], withheld: object) -> None:
    """A row of the table: answers, the share of them parsed, huds pushed, and withheld."""
    answers, parsed = row["answers"], row["parsed"]
    share = f"{parsed}/{answers} ({100 * ratio(parsed, answers):.0f} %)" if answers else "0/0"
    print(f"{name:<12} {answers:>7}  {share:<14} {row['pushed']:>6}  {withheld}")


def report(figures: Figures, args: argparse.Namespace) -> None:
    """Print the figures (``print`` is this script's output, not a log)."""
    print(
        f"model {args.model} at {args.base_url}"
        + (f", with images {args.vision_model}" if args.images else "")
        + f", AGENT_RESPONSE_FORMAT={args.response_format}, "
        f"max_tokens {args.max_tokens}, temperature {args.temperature}\n"
        f"{'level':<12} {'answers':>7}  {'parsed':<14} {'pushed':>6}  withheld"
    )
    counts, total = figures.counts, Counter[str]()
    for level in (lv for lv in RESPONSE_FORMATS if lv != "auto" and counts["answers", lv]):
        withheld = {r: counts["withheld", level, r] for r in WITHHELD_REASONS}
        shown = ", ".join(f"{r} {n}" for r, n in withheld.items() if n) or "none"
        row = {what: counts[what, level] for what in ("answers", "parsed", "pushed")}
        _row(level, row, shown)
        total.update(row | {"withheld": sum(withheld.values())})
    _row("all", total, total["withheld"])
    unparsed = sorted((k[1:], n) for k, n in counts.items() if k[0] == "unparsed")
    unparsed_text = ", ".join(f"{lv}/{why} {n}" for (lv, why), n in unparsed)
    print(f"unparsed by level/finish_reason: {unparsed_text or 'none'}")
    refused = ", ".join(f"{k[1]} {n}" for k, n in counts.items() if k[0] == "refused")
    print(f"refused: {refused or 'none'}; failed requests: {len(figures.failures)}")
    if args.images:
        print(f"images: {figures.images[0]} asked with, in {figures.images[1]} windows' requests")
    for error, n in Counter(error for _, error in figures.failures).most_common(5):
        first = next(name for name, e in figures.failures if e == error)
        print(f"  {n} x (the first {first}) {error}")
    if answered := len(figures.latency_s):
        (tokens_in, tokens_out), latency = figures.tokens, figures.latency_s
        print(
            f"latency p50 {percentile(latency, 50):.2f} s, p90 {percentile(latency, 90):.2f} s; "
            f"tokens in {tokens_in} ({tokens_in // answered} per answer), out {tokens_out} "
            f"({tokens_out // answered} per answer)"
        )
    print(figures.judged.shares())
    if figures.cpu_s:
        print(f"model process CPU {sum(figures.cpu_s) / len(figures.cpu_s):.2f} s per answer")
    for name, shown_level, hud, verdict, digest in figures.shown if args.show else ():
        print(f"  {name:<28} {shown_level:<11} {verdict:<34} {hud[:90]!r}")
        if args.show > 1:
            print(f"  {'':<28} {digest[:150]!r}")


OPTIONS = [
    arg("--show", action="count", default=0, help="print each hud (twice: and its digest)"),
    arg("--base-url", help="the API root, e.g. http://h:p/v1"),
    arg("--local", help="a GGUF model in the relay's own worker (AGENT_API=local), not a server"),
    arg("--model", default=DEFAULTS.model),
    arg("--images", type=int, default=0, help="images a request carries at most (0: none)"),
    arg("--vision-model", default=None, help="the model asked with images (--model)"),
    arg("--response-format", choices=RESPONSE_FORMATS, default="auto"),
    arg("--max-tokens", type=int, default=DEFAULTS.max_tokens),
    arg("--temperature", type=float, default=DEFAULTS.temperature),
    arg("--timeout-s", type=float, default=120.0, help="per request"),
    arg("--session-step-s", type=float, default=20.0),
    arg("--limit", type=int, default=None, help="ask the first N windows only"),
    arg("--sample", type=int, default=None, help="N windows spread evenly over all of them"),
    arg("--server-pid", type=int, help="the model server's process (found by the port)"),
]


def run(args: argparse.Namespace) -> int:
    if not (args.base_url or args.local):
        raise UsageError("ask a server (--base-url) or a model of this machine (--local)")
    args.base_url = (args.base_url or "http://agent-local/v1").rstrip("/")
    args.model, args.vision_model = args.local or args.model, args.vision_model or args.model
    with local_model(args.local, DEFAULTS.local_threads) if args.local else nullcontext() as local:
        report(ask(args, *(local or (None, lambda: None))), args)
    return 0
