"""The prompt corpus: windows of the shapes a user's screen really has, and the words a summary
of each must be able to use.

The corpus is data in ``tests/data/corpus/`` (its ``README.md`` describes the cases and the files
and says how to add a case). :func:`cases` reads and checks it; :func:`case_window` builds the
window a tick would read 3 s after a case's last event.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import takewhile
from pathlib import Path
from typing import Any

from actors.agent.core.prompt import (
    AGE,
    ANSWER_HEADER,
    NOW_HEADER,
    build_prompt,
    prompt_with_screen,
    screen_line,
)
from actors.core.bodies import FeedInput, convert, sense_input
from actors.core.records import FeedRecord, SenseRecord
from actors.core.window import TickWindow, build_context_window
from config.app_names import normalize_app_name
from transport.demo.replay import SessionEvent, load_session

T0_MS = 1_769_901_200_000
"""Server time of the first event of every case."""
MAX_AGE_MS = 120_000
"""The window's age, the relay's default."""
TICK_AFTER_MS = 3_000
"""A case's tick comes this long after its last event (the default debounce)."""
SHAPES = ("code", "terminal", "browser", "chat", "mixed")
CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
"""The corpus's directory: ``cases.jsonl`` and ``windows/``."""
CASES = CORPUS / "cases.jsonl"
"""Each case's name, shape, busy flag and expected words, in order."""
WINDOWS = CORPUS / "windows"
"""Each case's requests, ``<name>.jsonl``."""
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""A case's name, and so its window file's."""


class CorpusError(ValueError):
    """``cases.jsonl`` is not as this module expects; the message names the line."""


@dataclass(frozen=True, slots=True)
class Case:
    """One window of the corpus."""

    name: str
    shape: str
    """One of :data:`SHAPES`."""
    events: tuple[SessionEvent, ...]
    expected: tuple[str, ...]
    """Words a summary must be able to use; each occurs (case aside) in the input."""
    busy: bool = False
    """A window as the user's work fills it: many events, a few seconds apart."""


def window_path(name: str) -> Path:
    """Where the requests of the case ``name`` are."""
    return WINDOWS / f"{name}.jsonl"


def parse_case(line: str, where: str) -> Case:
    """One line of ``cases.jsonl`` and the requests it names.

    Raises:
        CorpusError: not ``{"name", "shape", "busy", "expected"}`` with a shape of
            :data:`SHAPES` and at least one expected word, a ``demo_until_s`` that is no
            number of seconds, or no window file for it.
        transport.demo.replay.SessionError: the window's file is not a session.
    """
    try:
        raw: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{where}: not JSON ({exc})") from exc
    if not isinstance(raw, dict) or not isinstance(name := raw.get("name"), str):
        raise CorpusError(f'{where}: needs {{"name", "shape", "busy", "expected"}}')
    if not NAME.fullmatch(name):
        raise CorpusError(f"{where}: name must be lower-case words joined by hyphens")
    shape, busy, expected = raw.get("shape"), raw.get("busy"), raw.get("expected")
    if shape not in SHAPES:
        raise CorpusError(f"{where}: shape must be one of {', '.join(SHAPES)}")
    if not isinstance(busy, bool):
        raise CorpusError(f"{where}: busy must be true or false")
    words = expected if isinstance(expected, list) else []
    if not words or not all(isinstance(w, str) and w.strip() for w in words):
        raise CorpusError(f"{where}: expected must be a list of words")
    if "demo_until_s" in raw:
        until = raw["demo_until_s"]
        if isinstance(until, bool) or not isinstance(until, int | float):
            raise CorpusError(f"{where}: demo_until_s must be a number of seconds")
        events = tuple(e for e in load_session() if e.at <= until)
    elif (path := window_path(name)).is_file():
        events = load_session(path)
    else:
        raise CorpusError(f"{where}: no {path.relative_to(CORPUS)} for {name!r}")
    return Case(name, shape, events, tuple(words), busy=busy)


def cases() -> tuple[Case, ...]:
    """Every case of the corpus, in the order of ``cases.jsonl``: the shapes one after the
    other, then the busy windows."""
    lines = CASES.read_text(encoding="utf-8").splitlines()
    return tuple(
        parse_case(line, f"{CASES.name}:{n}")
        for n, line in enumerate(lines, start=1)
        if line.strip()
    )


def stored(events: Iterable[SessionEvent]) -> tuple[list[FeedRecord], list[SenseRecord]]:
    """``events`` as the buffers would store them (validated, with ids and arrival), the first
    arriving at :data:`T0_MS`."""
    feed: list[FeedRecord] = []
    sense: list[SenseRecord] = []
    for n, event in enumerate(events, start=1):
        at = T0_MS + round(event.at * 1000)
        if event.path == "/feed":
            feed.append(FeedRecord.stored(n, at, convert(event.body, FeedInput).record()))
        else:
            sense.append(SenseRecord.stored(n, at, sense_input(event.body)))
    return feed, sense


def records(case: Case) -> tuple[list[FeedRecord], list[SenseRecord]]:
    """The case's requests as the buffers would store them."""
    return stored(case.events)


def session_prompt(until_s: float) -> str:
    """The prompt a tick :data:`TICK_AFTER_MS` after ``until_s`` seconds of the shipped demo
    session would send."""
    window, now = session_window(until_s)
    return build_prompt(window, now_ms=now)


def session_window(until_s: float) -> tuple[TickWindow, int]:
    """The window a tick :data:`TICK_AFTER_MS` after ``until_s`` seconds of the shipped demo
    session reads, and the tick's server time."""
    feed, sense = stored(takewhile(lambda e: e.at <= until_s, load_session()))
    now = T0_MS + round(until_s * 1000) + TICK_AFTER_MS
    return build_context_window(feed, sense, now_ms=now, max_age_ms=MAX_AGE_MS), now


def tick_ms(case: Case) -> int:
    """Server time of the case's tick: :data:`TICK_AFTER_MS` after its last event."""
    return T0_MS + round(case.events[-1].at * 1000) + TICK_AFTER_MS


def case_window(case: Case) -> TickWindow:
    """The window a tick reads :data:`TICK_AFTER_MS` after the case's last event."""
    feed, sense = records(case)
    return build_context_window(feed, sense, now_ms=tick_ms(case), max_age_ms=MAX_AGE_MS)


def input_texts(window: TickWindow) -> Iterator[str]:
    """Every text of the window the prompt may draw on: app names (as the prompt shows them),
    OCR, titles, narratives, transcripts."""
    for event in window.screen:
        app = normalize_app_name(event.app)
        yield from (app, event.window_title, event.title, event.ocr, event.narrative)
    for chunk in window.audio:
        yield chunk.text


CUT_OCR_CHARS = 200
"""The original relay's cut: OCR characters per screen event."""
WORD = re.compile(r"[^\W\d_]{4,}")
"""A word: four letters or more (any script), digits and underscores splitting words."""


def cut_prompt(ctx: TickWindow, *, now_ms: int) -> str:
    """The original relay's prompt: every OCR text cut at :data:`CUT_OCR_CHARS` characters."""
    lines = (
        AGE.format(seconds=max(0, round((now_ms - e.received_at) / 1000)))
        + screen_line(e, e.ocr.replace("\n", " ")[:CUT_OCR_CHARS])
        for e in reversed(ctx.screen)
    )
    return prompt_with_screen(ctx, "\n".join(lines), now_ms=now_ms)


def window_part(prompt: str) -> str:
    """The prompt after the heading of now, up to the answer's shape: the window, without the
    instructions and the headings around it."""
    start = prompt.index(NOW_HEADER) + len(NOW_HEADER)
    return prompt[start : prompt.index(ANSWER_HEADER, start)]


def words(texts: Iterable[str]) -> set[str]:
    return {w.casefold() for text in texts for w in WORD.findall(text)}


@dataclass(frozen=True, slots=True)
class Measure:
    """One prompt of one case."""

    expected_kept: tuple[str, ...]
    expected_lost: tuple[str, ...]
    words_in: int
    words_kept: int
    length: int


def measure(case: Case, window: TickWindow, prompt: str) -> Measure:
    part = window_part(prompt)
    folded = part.casefold()
    kept = tuple(w for w in case.expected if w.casefold() in folded)
    lost = tuple(w for w in case.expected if w.casefold() not in folded)
    given = words(input_texts(window))
    return Measure(kept, lost, len(given), len(given & words([part])), len(prompt))
