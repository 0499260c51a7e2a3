"""A real model on the relay's prompts: each window of the prompt corpus and the demo session is
asked once of the server at ``--base-url`` exactly as the relay asks (body, ``response_format``
negotiation, parsing, hud gate). docs/benchmarks.md says how to read what it prints."""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx
import orjson

from actors.agent.core import completion as chat
from actors.agent.core.hud_check import WITHHELD_REASONS, checked_hud
from actors.agent.core.prompt import PreviousDigest, build_prompt
from actors.agent.core.response_format import Level, first_level, is_refusal, step_down
from actors.agent.core.screen_image import NOTHING_SENT, ScreenImage, SentImages, pick_images
from actors.core.errors import LLMError
from bench.runner import arg, flags
from bench.stats import percentile, ratio
from config.settings import RESPONSE_FORMATS, AgentSettings
from tests.support import prompt_corpus as corpus
from tests.support.day_session import with_screens
from transport.demo.replay import DEMO_SESSION, SessionEvent, load_session

DEFAULTS = AgentSettings()


@dataclass(frozen=True, slots=True)
class Window:
    """A corpus case (``case``) or a moment ``at_s`` seconds into the demo session."""

    name: str
    at_s: float | None
    case: corpus.Case | None = None


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
    shown: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(window, level, hud as answered, verdict) for ``--show``."""


def windows(session_step_s: float, limit: int | None, sample: int | None = None) -> list[Window]:
    """The corpus's cases, then the demo session every ``session_step_s`` seconds; the first
    ``limit``, or ``sample`` of them spread evenly over the list (a slow model's quick run).

    >>> found = windows(session_step_s=20, limit=None)
    >>> sum(w.at_s is None for w in found) >= 30, [w.name for w in found if w.at_s][:2]
    (True, ['demo@20s', 'demo@40s'])
    >>> len(windows(session_step_s=20, limit=3))
    3
    """
    found = [Window(case.name, None, case) for case in corpus.cases()]
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
        return build_prompt(corpus.case_window(window.case), now_ms=corpus.tick_ms(window.case))
    assert window.at_s is not None, "a window is a corpus case or a moment of the session"
    return corpus.session_prompt(window.at_s, previous)


def _events(window: Window) -> tuple[tuple[SessionEvent, ...], int]:
    """The requests before the window's tick, and the tick's server time."""
    if window.case is not None:
        return window.case.events, corpus.tick_ms(window.case)
    assert window.at_s is not None, "a window is a corpus case or a moment of the session"
    events = tuple(e for e in load_session(DEMO_SESSION) if e.at <= window.at_s)
    return events, corpus.T0_MS + round(window.at_s * 1000) + corpus.TICK_AFTER_MS


def _images(window: Window, most: int, sent: SentImages) -> tuple[ScreenImage, ...]:
    """What the relay's call would carry: of the window's screen events (each with its app's
    thumbnail), newest first, the images fit to send, picked by :func:`pick_images`."""
    events, now_ms = _events(window)
    _, sense = corpus.stored(with_screens(events, every=True))
    fit: list[ScreenImage] = []
    for event in reversed(sense):
        if event.received_at < now_ms - corpus.MAX_AGE_MS:
            break
        if isinstance(image := event.image()[0], ScreenImage):
            fit.append(image)
    return pick_images(fit, most, sent)


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


def ask(args: argparse.Namespace) -> Figures:
    """Ask every window once, as the relay would."""
    figures = Figures()
    counts = figures.counts
    remembered: Level | None = None
    previous: PreviousDigest | None = None
    sent = NOTHING_SENT  # the session's calls remember the images they sent; a case is alone
    key = os.environ.get("OPENROUTER_API_KEY", "unused")
    headers = {"Authorization": f"Bearer {key}", "X-Title": "sinain-relay bench"}
    with httpx.Client(timeout=args.timeout_s, headers=headers) as client:
        for window in windows(args.session_step_s, args.limit, args.sample):
            level = first_level(args.response_format, remembered)
            memory = sent if window.at_s is not None else NOTHING_SENT
            images = _images(window, args.images, memory) if args.images else ()
            figures.images[0] += len(images)
            figures.images[1] += bool(images)
            asked = _negotiated(client, args, (_prompt(window, previous), images), level, figures)
            if isinstance(asked, str):
                figures.failures.append((window.name, asked))
                continue
            response, spent, level = asked
            try:
                completion = chat.parse_chat_completion(response.content)
            except LLMError as exc:
                figures.failures.append((window.name, str(exc)))
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
                if window.at_s is not None:  # the session's next tick reads this digest
                    previous = PreviousDigest(analysis.digest, _events(window)[1])
            else:
                counts["unparsed", level, _finish_reason(response.content)] += 1
            if checked.withheld is not None:
                counts["withheld", level, checked.withheld] += 1
                verdict = f"withheld: {checked.withheld}"
            else:
                pushed = checked.analysis.hud not in (chat.NO_OUTPUT, "Idle")
                counts["pushed", level] += pushed
                verdict = "pushed" if pushed else "not pushed (Idle)"
            figures.shown.append((window.name, level, analysis.hud, verdict))
    return figures


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
    for name, shown_level, hud, verdict in figures.shown if args.show else ():
        print(f"  {name:<28} {shown_level:<11} {verdict:<22} {hud[:90]!r}")


OPTIONS = [
    *flags(show=(bool, None, "print each answer's hud")),
    arg("--base-url", required=True, help="the API root, e.g. http://h:p/v1"),
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
]


def run(args: argparse.Namespace) -> int:
    args.base_url = args.base_url.rstrip("/")
    args.vision_model = args.vision_model or args.model
    report(ask(args), args)
    return 0
