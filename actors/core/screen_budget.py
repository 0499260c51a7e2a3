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
from collections.abc import Callable, Sequence
from dataclasses import dataclass

LINE_CHARS = 400
"""The longest line: an OCR line longer than this is split, at a space where there is one."""

_RULE = re.compile(r"([^\w\s])\1{3,}")
"""Four or more of one punctuation mark in a row (a rule, progress dots), shortened to three."""
_ERROR = re.compile(
    r"\bTraceback\b"
    r"|(?<!\w)(?:[A-Z]\w*)?(?:Error|Exception)\b"  # TypeError, Error:, NullPointerException
    r"|\b(?:FAILED|FAIL|ERROR|FATAL|CONFLICT)\b"
    r"|\berror(?:\[\w+\]|\s+[A-Z]+\d+)?:"  # error:, error[E0373]:, error TS2304:
    r"|\bERR!"
    r"|\bfatal:"
    r"|\bpanicked at\b|\bpanic:"
    r"|\bSegmentation fault\b"
    r"|(?<!\b0 )\bfailed\b"  # "1 failed", "merge failed"; not "0 failed"
)
_QUESTION = re.compile(r"[^\W\d_].*[?？]$")
"""A line with a letter that ends in a question mark (ASCII or full-width)."""


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
    for raw in text.splitlines():
        line = _RULE.sub(r"\1\1\1", " ".join(raw.split()))
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
    return _ERROR.search(line) is not None


def is_question(line: str) -> bool:
    """Whether the line is a question: it has a letter and ends in a question mark (ASCII or
    full-width)."""
    return _QUESTION.search(line) is not None


def fit_screen(texts: Sequence[str], budget: int) -> tuple[Fitted, ...]:
    """What the screen section keeps of each of ``texts`` (newest first) within ``budget``
    characters, one :class:`Fitted` per text in the same order (see the module's rules)."""
    seen: set[str] = set()
    fresh: list[list[str | None]] = []  # per text its lines, None where a newer text has it
    for text in texts:
        lines = ocr_lines(text)
        fresh.append([None if line in seen else line for line in lines])
        seen.update(lines)

    kept = [[False] * len(lines) for lines in fresh]
    left = _spend(fresh, kept, budget, _urgent)
    _spend(fresh, kept, left, _any)
    return tuple(_fitted(lines, marks) for lines, marks in zip(fresh, kept, strict=True))


def _spend(
    fresh: list[list[str | None]], kept: list[list[bool]], left: int, wanted: Callable[[str], bool]
) -> int:
    """Mark as kept the ``wanted`` lines not yet kept, newest text first, each from its top,
    until one does not fit in ``left``; return what is left."""
    for lines, marks in zip(fresh, kept, strict=True):
        for n, line in enumerate(lines):
            if line is None or marks[n] or not wanted(line):
                continue
            if len(line) + 1 > left:
                return left
            marks[n] = True
            left -= len(line) + 1
    return left


def _urgent(line: str) -> bool:
    return is_error(line) or is_question(line)


def _any(_line: str) -> bool:
    return True


def _fitted(lines: list[str | None], kept: list[bool]) -> Fitted:
    pieces: list[str | Cut] = []
    run = 0
    for line, keep in zip(lines, kept, strict=True):
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
    return Fitted(tuple(pieces), sum(line is None for line in lines))
