"""The screen section's budget: which lines of the window's OCR texts the prompt shows.

The screen section spends one budget of characters for all the window's OCR texts, rather
than cutting each text at a fixed length, so that what matters survives a long screen:

- **Newest first.** The newest text is spent first, line by line from its top; once a line
  does not fit, no later line and no older text gets any more of the budget.
- **Repeats once.** A line that a newer text also has (the tabs, the address and bookmarks
  bars, a sidebar, a status bar: whatever frames every capture of an app) is dropped from
  the older text, and costs nothing.
- **Errors and questions whole.** Error lines (a traceback, ``...Error``, ``...Exception``,
  ``FAILED``, ``error:``, a panic, ...) and question lines (ending in ``?``) are spent before
  any other line, newest first, each whole, so that an error at the end of a long terminal
  still reaches the model. The other lines then share what they left, by the same rule.
- **Cuts marked.** Each run of lines left out for want of budget becomes a :class:`Cut`
  where it was, so the model knows the text goes on.

A line is an OCR line with its spacing made single spaces (indentation and column padding
carry no words), runs of a rule mark shortened (``=====`` rules, progress dots), and lines
longer than :data:`LINE_CHARS` split at a space. Each kept line costs its
characters and one for the space that joins it to the next. Of a text longer than
:data:`READ_CHARS` only the head is read.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

LINE_CHARS = 400
"""The longest line: an OCR line longer than this is split, at a space where there is one."""
READ_CHARS = 32_768
"""The head of an OCR text that is read (to its last line break); the lines after it count as
cut. A screen's text is far shorter: this bounds what a pathological one costs."""
PARSED_TEXTS = 32
"""OCR texts (their heads, see :data:`READ_CHARS`) whose lines are remembered, so that a text
is read once while it stays in the window: for its fingerprint and its prompt, tick after
tick."""

_RULES = tuple(
    (mark * 4, re.compile(re.escape(mark) + "{4,}"), mark * 3) for mark in "-=_~.*#+─━═•·"
)
"""Four or more of one rule mark in a row (a rule, progress dots), shortened to three: what
to look for, the run, what replaces it."""
_ERROR = re.compile(
    r"\bTraceback\b"
    r"|\b(?:[A-Z]\w*)?(?:Error|Exception)\b"  # TypeError, Error:, NullPointerException
    r"|\b(?:FAILED|FAIL|ERROR|FATAL|CONFLICT)\b"
    r"|\berror(?:\[\w+\]|\s+[A-Z]+\d+)?:"  # error:, error[E0373]:, error TS2304:
    r"|\bERR!"
    r"|\bfatal:"
    r"|\bpanicked at\b|\bpanic:"
    r"|\bSegmentation fault\b"
    r"|(?<!\b0 )\bfailed\b"  # "1 failed", "merge failed"; not "0 failed"
)
_ERROR_HINTS = (
    "Error", "error", "Exception", "Traceback", "FAIL", "ERR", "FATAL", "fatal:", "CONFLICT",
    "panic", "Segmentation", "failed",
)  # fmt: skip
"""What every match of :data:`_ERROR` contains: found with plain string searches, they rule
most lines out before the regular expression runs."""
_QUESTION_MARKS = ("?", "？")  # ASCII and full-width


@dataclass(frozen=True, slots=True)
class Cut:
    """Where lines of an OCR text were left out for want of budget."""

    lines: int


@dataclass(frozen=True, slots=True)
class Fitted:
    """What the screen section keeps of one OCR text."""

    pieces: tuple[str | Cut, ...]
    """The kept lines in their order, a :class:`Cut` where a run of lines was left out."""
    repeated: int
    """Lines left out because a newer text has them."""


def ocr_lines(text: str) -> list[str]:
    """The lines of an OCR text as the budget counts them: single-spaced, rules shortened,
    none empty, none longer than :data:`LINE_CHARS`."""
    for run, rule, short in _RULES:
        if run in text:
            text = rule.sub(short, text)
    lines = [line for raw in text.splitlines() if (line := " ".join(raw.split()))]
    if any(len(line) > LINE_CHARS for line in lines):
        lines = [piece for line in lines for piece in _split(line)]
    return lines


def _split(line: str) -> list[str]:
    """``line`` in pieces of at most :data:`LINE_CHARS`, split at spaces where there are some."""
    pieces: list[str] = []
    while len(line) > LINE_CHARS:
        split = line.rfind(" ", 0, LINE_CHARS + 1)
        if split <= 0:
            pieces.append(line[:LINE_CHARS])
            line = line[LINE_CHARS:]
        else:
            pieces.append(line[:split])
            line = line[split + 1 :]
    pieces.append(line)
    return pieces


def is_error(line: str) -> bool:
    """Whether the line reports an error: a traceback, an ``...Error`` or ``...Exception``,
    ``FAILED``/``FAIL``, ``ERROR``, ``error:`` (also ``error[E0373]:``, ``error TS2304:``),
    ``npm ERR!``, ``fatal:``/``FATAL``, a panic, a segmentation fault, a merge ``CONFLICT``,
    or ``failed`` (but ``0 failed``)."""
    return any(hint in line for hint in _ERROR_HINTS) and _ERROR.search(line) is not None


def may_hold_errors(text: str) -> bool:
    """Whether ``text`` holds one of the literals every error line holds (a cheap pre-check:
    a text without any has no error line)."""
    return any(hint in text for hint in _ERROR_HINTS)


def is_question(line: str) -> bool:
    """Whether the line is a question: it has a letter and ends in a question mark (ASCII or
    full-width)."""
    return line.endswith(_QUESTION_MARKS) and any(c.isalpha() for c in line)


def fit_screen(texts: Sequence[str], budget: int) -> tuple[Fitted, ...]:
    """What the screen section keeps of each of ``texts`` (newest first) within ``budget``
    characters, one :class:`Fitted` per text in the same order (see the module's rules).

    The last four answers are remembered: a tick asks for its window's fingerprint, then for
    its prompt, from the same texts.
    """
    return _fit(tuple(texts), budget)


@lru_cache(maxsize=4)
def _fit(texts: tuple[str, ...], budget: int) -> tuple[Fitted, ...]:
    seen: set[str] = set()
    shown: list[_Text] = []
    for text in texts:
        parsed = _parsed(text)
        shown.append(_Text(parsed, [line in seen for line in parsed.lines], set()))
        seen.update(parsed.lines)
    left = _spend(shown, budget, lambda text: text.parsed.urgent)
    _spend(shown, left, lambda text: range(len(text.parsed.lines)))
    return tuple(_fitted(text) for text in shown)


def _spend(shown: list[_Text], left: int, candidates: Callable[[_Text], Iterable[int]]) -> int:
    """Keep the ``candidates`` lines that no newer text has and are not kept yet, newest text
    first, in order, until one does not fit in ``left``; return what is left."""
    for text in shown:
        for n in candidates(text):
            if text.repeated[n] or n in text.kept:
                continue
            cost = len(text.parsed.lines[n]) + 1
            if cost > left:
                return left
            text.kept.add(n)
            left -= cost
    return left


@dataclass(frozen=True, slots=True)
class _Parsed:
    """One OCR text as the budget reads it."""

    lines: tuple[str, ...]
    urgent: tuple[int, ...]
    """The indices of its error and question lines, in order."""
    unread: int
    """Lines after the head, not read (see :data:`READ_CHARS`)."""


@dataclass(slots=True)
class _Text:
    """One OCR text while the budget is spent."""

    parsed: _Parsed
    repeated: list[bool]
    """For each line: whether a newer text has it."""
    kept: set[int]


def _parsed(text: str) -> _Parsed:
    """``text`` as the budget reads it: the lines of its head (see :data:`READ_CHARS`), which
    are its error and question lines, and how many lines follow the head."""
    if len(text) <= READ_CHARS:
        return _read(text)
    end = text.rfind("\n", 0, READ_CHARS)
    split_line = end < 0  # a line longer than the head: its rest is one more line
    end = READ_CHARS if split_line else end
    stop = len(text)
    while stop > end and text[stop - 1].isspace():
        stop -= 1
    head = _read(text[:end])
    return _Parsed(head.lines, head.urgent, text.count("\n", end, stop) + split_line)


@lru_cache(maxsize=PARSED_TEXTS)
def _read(text: str) -> _Parsed:
    lines = ocr_lines(text)
    questions = (
        n for n, line in enumerate(lines) if line.endswith(_QUESTION_MARKS) and is_question(line)
    )
    errors = (n for n in _hinted(lines) if _ERROR.search(lines[n]))
    return _Parsed(tuple(lines), tuple(sorted({*questions, *errors})), 0)


def _hinted(lines: list[str]) -> set[int]:
    """The indices of the lines that contain one of :data:`_ERROR_HINTS`, found with string
    searches over all the lines at once."""
    joined = "\n".join(lines)
    starts = list(accumulate((len(line) + 1 for line in lines), initial=0))
    found: set[int] = set()
    for hint in _ERROR_HINTS:
        at = joined.find(hint)
        while at >= 0:
            n = bisect_right(starts, at) - 1
            found.add(n)
            at = joined.find(hint, starts[n + 1])
    return found


def _fitted(text: _Text) -> Fitted:
    """The kept lines in order, and a :class:`Cut` for each run of the others that a newer
    text does not have."""
    lines, repeated = text.parsed.lines, text.repeated
    fresh_before = list(accumulate((not r for r in repeated), initial=0))
    pieces: list[str | Cut] = []
    after = 0  # the index after the last kept line
    for n in sorted(text.kept):
        if gap := fresh_before[n] - fresh_before[after]:
            pieces.append(Cut(gap))
        pieces.append(lines[n])
        after = n + 1
    if gap := fresh_before[-1] - fresh_before[after] + text.parsed.unread:
        pieces.append(Cut(gap))
    return Fitted(tuple(pieces), len(lines) - fresh_before[-1])
