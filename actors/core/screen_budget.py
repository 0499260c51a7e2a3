"""The screen section's budget: which lines of the window's OCR texts the prompt shows.

The screen section spends one budget of characters for all the window's OCR texts, rather
than cutting each text at a fixed length, so that what matters survives a long screen:

- **Newest first.** The newest text is spent first, line by line from its top; once a line
  does not fit, no later line and no older text gets any more of the budget.
- **Repeats once.** A line that a newer text already shows (the tabs, the address and
  bookmarks bars, a sidebar, a status bar: whatever frames every capture of an app) is
  dropped from the older text, and costs nothing.
- **Errors and questions whole.** Error lines (a traceback, ``...Error``, ``...Exception``,
  ``FAILED``, ``error:``, a panic, ...) and question lines (ending in ``?``) are spent before
  any other line, newest first, each whole, so that an error at the end of a long terminal
  still reaches the model. The other lines then share what they left, by the same rule.
- **Cuts marked.** Each run of lines left out for want of budget becomes a :class:`Cut`
  where it was, so the model knows the text goes on.

A line is an OCR line with its spacing made single spaces (indentation and column padding
carry no words), runs of one punctuation mark shortened (``=====`` rules, progress dots),
and lines longer than :data:`LINE_CHARS` split at a space. Each kept line costs its
characters and one for the space that joins it to the next.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

LINE_CHARS = 400
"""The longest line: an OCR line longer than this is split, at a space where there is one."""

_RULE = re.compile(r"([^\w\s]|_)\1{3,}")
"""Four or more of one punctuation mark (or ``_``) in a row (a rule, progress dots), shortened
to three."""
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
_ERROR_HINT = re.compile(
    "Error|error|Exception|Traceback|FAIL|ERR|FATAL|fatal:|CONFLICT|panic|Segmentation|failed"
)
"""What every match of :data:`_ERROR` contains: a cheap search that rules most lines out."""
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
    """Lines left out because a newer text shows them."""


def ocr_lines(text: str) -> list[str]:
    """The lines of an OCR text as the budget counts them: single-spaced, rules shortened,
    none empty, none longer than :data:`LINE_CHARS`."""
    lines: list[str] = []
    for raw in _RULE.sub(r"\1\1\1", text).splitlines():
        line = " ".join(raw.split())
        while len(line) > LINE_CHARS:
            split = line.rfind(" ", 0, LINE_CHARS + 1)
            if split <= 0:
                lines.append(line[:LINE_CHARS])
                line = line[LINE_CHARS:]
            else:
                lines.append(line[:split])
                line = line[split + 1 :]
        if line:
            lines.append(line)
    return lines


def is_error(line: str) -> bool:
    """Whether the line reports an error: a traceback, an ``...Error`` or ``...Exception``,
    ``FAILED``/``FAIL``, ``ERROR``, ``error:`` (also ``error[E0373]:``, ``error TS2304:``),
    ``npm ERR!``, ``fatal:``/``FATAL``, a panic, a segmentation fault, a merge ``CONFLICT``,
    or ``failed`` (but ``0 failed``)."""
    return _ERROR_HINT.search(line) is not None and _ERROR.search(line) is not None


def is_question(line: str) -> bool:
    """Whether the line is a question: it has a letter and ends in a question mark (ASCII or
    full-width)."""
    return line.endswith(_QUESTION_MARKS) and any(c.isalpha() for c in line)


def fit_screen(texts: Sequence[str], budget: int) -> tuple[Fitted, ...]:
    """What the screen section keeps of each of ``texts`` (newest first) within ``budget``
    characters, one :class:`Fitted` per text in the same order (see the module's rules)."""
    seen: set[str] = set()
    shown: list[_Text] = []
    for text in texts:
        lines = ocr_lines(text)
        fresh = [None if line in seen else line for line in lines]
        shown.append(_Text(fresh, _urgent(lines), [False] * len(lines)))
        seen.update(lines)
    left = _spend(shown, budget, urgent_only=True)
    _spend(shown, left, urgent_only=False)
    return tuple(_fitted(text) for text in shown)


@dataclass(slots=True)
class _Text:
    """One OCR text while the budget is spent."""

    lines: list[str | None]
    """Its lines, ``None`` where a newer text shows the line."""
    urgent: set[int]
    """The indices of its error and question lines."""
    kept: list[bool]


def _urgent(lines: list[str]) -> set[int]:
    """The indices of the error and question lines among ``lines``.

    One search for the words every error line contains runs over all the lines at once; only
    the lines it lands in are tried line by line.
    """
    urgent = {n for n, line in enumerate(lines) if is_question(line)}
    joined = "\n".join(lines)
    hints = [match.start() for match in _ERROR_HINT.finditer(joined)]
    if hints:
        starts = list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
        for n in {bisect_right(starts, at) - 1 for at in hints}:
            if _ERROR.search(lines[n]) is not None:
                urgent.add(n)
    return urgent


def _spend(texts: list[_Text], left: int, *, urgent_only: bool) -> int:
    """Keep the lines not yet kept (only error and question lines with ``urgent_only``),
    newest text first, each from its top, until one does not fit in ``left``; return what is
    left."""
    for text in texts:
        for n, line in enumerate(text.lines):
            if line is None or text.kept[n] or (urgent_only and n not in text.urgent):
                continue
            if len(line) + 1 > left:
                return left
            text.kept[n] = True
            left -= len(line) + 1
    return left


def _fitted(text: _Text) -> Fitted:
    pieces: list[str | Cut] = []
    run = 0
    for line, keep in zip(text.lines, text.kept, strict=True):
        if line is None:
            continue
        if keep:
            if run:
                pieces.append(Cut(run))
                run = 0
            pieces.append(line)
        else:
            run += 1
    if run:
        pieces.append(Cut(run))
    return Fitted(tuple(pieces), text.lines.count(None))
