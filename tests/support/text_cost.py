"""The relay's text work as functions of one text, and shapes of text made to be slow
(``tests/data/adversarial_text.json``): what ``tests/actors/core/test_text_cost.py`` checks
(the cost of every shape grows linearly) and what ``python -m bench text-cost`` measures.

Run as a file (``python tests/support/text_cost.py ENTRY SIZES ROUNDS TOP``), it measures one
entry point and prints one JSON row a line: the benchmark runs it in a child process per
checkout, so that another checkout's code is measured by the same rows. It imports only the
product, never ``tests`` or ``bench``, for that reason.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from actors.agent.core.change import gist
from actors.agent.core.completion import parse_analysis
from actors.agent.core.escalation_message import error_texts
from actors.agent.core.hud_check import checked_hud, judge
from actors.agent.core.prompt import SCREEN_BUDGET, build_prompt, fingerprint
from actors.agent.core.situation import detected_errors
from actors.audio.core.transcript_filter import Filters
from actors.core.error_text import safe_text
from actors.core.exclusion import ExclusionRule
from actors.core.records import FeedRecord, SensePost, SenseRecord
from actors.core.redaction.payload import redact_payload
from actors.core.redaction.text import redact
from actors.core.redaction.text_view import view_of
from actors.core.screen_budget import fit_screen
from actors.core.stack_traces import find_stack_traces
from actors.core.window import build_context_window
from actors.kernel.search_index import QueryError, match_expression

try:
    from actors.agent.core.answer_redaction import redacted_answer
except ImportError:  # a checkout from before the model's words were redacted (--before)
    redacted_answer = None  # type: ignore[assignment]
from config.common.secrets import remember_secret

SHAPES_FILE = Path(__file__).resolve().parents[1] / "data" / "adversarial_text.json"
NOW_MS = 1_000_000
EXCLUDED_TITLES = ExclusionRule.of(
    titles=r"(?i)bank|1password|private browsing|(?:^|\W)invoice(?:\W|$)"
)
"""A rule such as a user writes: a few words, case-insensitive."""
BENCH_SECRET = "text-cost-configured-secret-0123456789"
"""A configured secret shaped like no vendor's key, which error texts are scrubbed of."""


@dataclass(frozen=True, slots=True)
class Shape:
    """Text of one shape: ``head``, then ``unit`` again and again, then ``tail``."""

    name: str
    unit: str
    head: str = ""
    tail: str = ""
    slow: bool = False
    """A shape on which a scan that backtracks or starts again at each match takes seconds or
    more at 2 MiB: measured at the largest size always."""

    def text(self, size: int, salt: int = 0) -> str:
        """About ``size`` characters of this shape, after a line of its own holding ``salt``
        (so that no cache answers a second run)."""
        first = f"{salt}\n{self.head}"
        count = max(1, -(-(size - len(first) - len(self.tail)) // len(self.unit)))
        return first + self.unit * count + self.tail


def shapes() -> list[Shape]:
    """The shapes of :data:`SHAPES_FILE`."""
    data = json.loads(SHAPES_FILE.read_text(encoding="utf-8"))
    return [Shape(**shape) for shape in data["shapes"]]


def _sense_event(text: str) -> SenseRecord:
    payload = {"type": "text", "ts": 1.0, "ocr": text, "meta": {"app": "Code"}}
    payload["meta"] = {"app": "Code", "windowTitle": text[-300:]}
    return SenseRecord(
        id=1,
        received_at=NOW_MS - 1_000,
        type="text",
        ts=1.0,
        ocr=text,
        app="Code",
        ssim=None,
        payload=payload,
    )


def _tick(text: str) -> None:
    """What a tick reads of a window whose screen event and transcript hold ``text``."""
    feed = [FeedRecord(id=1, text=text, priority="normal", ts=NOW_MS - 500, source="audio")]
    window = build_context_window(feed, [_sense_event(text)], now_ms=NOW_MS, max_age_ms=120_000)
    build_prompt(window, now_ms=NOW_MS)
    fingerprint(window)
    gist(window)


def _escalation(text: str) -> None:
    """What an escalation message and SITUATION.md read of a window's screen."""
    window = build_context_window([], [_sense_event(text)], now_ms=NOW_MS, max_age_ms=120_000)
    detected_errors(window)
    error_texts(window)


def _answer(text: str) -> None:
    """What the relay reads of a model's answer: the analysis, the hud check, the redaction
    of its words (where the checkout has it), and the check of a hud as long as the answer."""
    analysis = checked_hud(parse_analysis(text), text).analysis
    if redacted_answer is not None:
        redacted_answer(analysis)
    judge(text)


def _error_text(text: str) -> None:
    """An error text that quotes ``text`` (a server echoing a prompt back), made safe to show,
    with a configured secret to look for."""
    remember_secret(BENCH_SECRET)
    safe_text(text)


def _transcript(text: str) -> None:
    """The transcript filters on one system-audio text, then a microphone text like it."""
    filters = Filters()
    filters.check("system", text, False, NOW_MS)
    filters.check("mic", text + " again", False, NOW_MS)


def _search(text: str) -> None:
    with contextlib.suppress(QueryError):  # too long, or no word: refused before any work
        match_expression(text)


def _excluded(text: str) -> None:
    payload: dict[str, Any] = {"meta": {"windowTitle": text}, "observation": {"subtitle": text}}
    event = SensePost(type="text", ts=1.0, ocr="", app="Code", ssim=None, payload=payload)
    EXCLUDED_TITLES.reason(event)


ENTRY_POINTS: dict[str, Callable[[str], object]] = {
    "redaction": redact,
    "payload redaction": lambda text: redact_payload(
        {"type": "text", "ts": 1, "ocr": text, "meta": {"windowTitle": text[-300:]}}
    ),
    "text view": view_of,
    "stack traces": find_stack_traces,
    "escalation and situation": _escalation,
    "screen budget": lambda text: fit_screen([text], SCREEN_BUDGET),
    "tick window and prompt": _tick,
    "answer and hud check": _answer,
    "transcript filters": _transcript,
    "exclusion": _excluded,
    "search query": _search,
    "error text": _error_text,
}
"""Every entry point of the relay's text work, as a function of one text."""


def cost_s(entry: Callable[[str], object], shape: Shape, size: int, runs: int = 1) -> float:
    """Thread CPU seconds of ``runs`` calls of ``entry`` on ``size`` characters of ``shape``
    (a new text each call, made before the clock starts)."""
    texts = [shape.text(size, salt) for salt in range(runs)]
    start = time.thread_time()
    for text in texts:
        entry(text)
    return time.thread_time() - start


def growth(
    entry: Callable[[str], object], shape: Shape, size: int, factors: tuple[int, ...] = (4, 16)
) -> dict[int, float]:
    """How much more one character costs at each of ``factors`` times ``size`` than at ``size``:
    the cost of one call at the larger size over that of as many calls at ``size`` as make the
    same length (about 1 for linear work, the factor for quadratic work). The best of up to
    three tries: a try in which no factor grew past 2 stands; otherwise the machine may have
    paused in it, and the next try is made."""
    largest = max(factors)
    best: dict[int, float] = {}
    for _ in range(3):
        base = cost_s(entry, shape, size, runs=largest)
        for factor in factors:
            ratio = cost_s(entry, shape, size * factor, runs=largest // factor) / max(base, 1e-6)
            best[factor] = min(best.get(factor, ratio), ratio)
        if max(best.values()) <= 2:
            break
    return best


def measure(name: str, sizes: list[int], rounds: int, top: int) -> Iterator[dict[str, Any]]:
    """Rows ``{shape, size, runs}`` of entry point ``name`` (``runs``: thread CPU seconds of
    each run): every shape at the sizes before the last, then the ``top`` slowest at the
    second-to-last size (and the ``slow`` ones) at the last, a third as many runs; before
    each, ``{shape, size, started}``, so that whoever stops a measurement that takes too long
    knows which it was."""
    entry = ENTRY_POINTS[name]
    kinds = shapes()
    slowest: dict[str, float] = {}
    for shape in kinds:
        for size in sizes[:-1]:
            yield {"shape": shape.name, "size": size, "started": True}
            runs = [cost_s(entry, shape, size * 1024) for _ in range(rounds)]
            slowest[shape.name] = sorted(runs)[len(runs) // 2] / size
            yield {"shape": shape.name, "size": size, "runs": runs}
    ranked = sorted(slowest, key=lambda shape: -slowest[shape])[:top]
    for shape in kinds:
        if shape.name in ranked or shape.slow:
            yield {"shape": shape.name, "size": sizes[-1], "started": True}
            runs = [cost_s(entry, shape, sizes[-1] * 1024) for _ in range(max(1, rounds // 3))]
            yield {"shape": shape.name, "size": sizes[-1], "runs": runs}


if __name__ == "__main__":
    _name, _sizes, _rounds, _top = sys.argv[1:5]
    for _row in measure(_name, [int(s) for s in _sizes.split(",")], int(_rounds), int(_top)):
        sys.stdout.write(json.dumps(_row) + "\n")
        sys.stdout.flush()
