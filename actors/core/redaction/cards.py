"""Card numbers in text: 13 to 19 digits that start with 2 to 6 (the card networks' first
digits) and pass the Luhn check, in groups split by single spaces or dashes, or laid out as
cards are printed (four digits, then groups of four to six) and split by dots or by two or
three spaces.

Digits glued to letters, dots or dashes (a decimal, an id, a UUID, a git SHA) are no card,
nor dotted groups of other sizes (an IP address, an OID, a version); epoch milliseconds
start with 1. :func:`card_possible` is the cheap test (a projection of the text on its
digits, scanned at memchr-like speed); :func:`card_spans` finds the cards and
:func:`redact_cards` replaces them with :data:`CARD_MARKER`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

CARD_MARKER = "[redacted:card]"

CARD_CANDIDATE = re.compile(
    rb"[0-9](?<![\w.-][0-9])[0-9]{3}"
    rb"(?:(?:[ -]?[0-9]){9,15}"
    rb"|(?P<sep>\.|[ ]{2,3})[0-9]{4,6}(?:(?P=sep)[0-9]{4,6}){0,2}(?P=sep)[0-9]{3,6})"
    rb"(?![\w]|\.[0-9])"
)
"""A card number's candidate: digits in groups split by single spaces or dashes, or in a
card's layout (4, then 4 to 6, ..., the last 3 to 6) split by dots or two or three spaces
alike; not glued to a letter, digit, dot or dash (a decimal, an id, a UUID). Which part is a
card is :func:`_card_span`'s to say."""
_GROUP = re.compile(rb"[0-9]+")

_ZEROS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x78 for b in range(256))
"""Turns digits into ``0`` and any other byte into ``x``."""
_DIGITS = bytes(b if 0x30 <= b <= 0x39 else 0x78 for b in range(256))
"""Keeps digits and turns any other byte into ``x``."""
_DOUBLED = bytes(
    (2 * (b - 0x30) - 9 if b > 0x34 else 2 * (b - 0x30)) if 0x30 <= b <= 0x39 else 0
    for b in range(256)
)
"""A digit's byte to what Luhn adds for it when doubled."""
_RUNS = bytes(0x30 if 0x30 <= b <= 0x39 or b in b" -." else 0x78 for b in range(256))
"""Turns digits, spaces, dashes and dots into ``0`` and any other byte into ``x``."""
_SEPARATORS = b" -."
_CARD_RUN = b"0" * 13
_LONG_RUN = 64
"""A longer run of digits (a table of numbers) is left to the card pattern to sort out."""
_CARD_BUDGET = 16384
"""Digits of runs that may hold a card that are read closely in one string: a bound on the
time one string can take (see :func:`redact_cards`)."""


def _luhn(digits: bytes) -> bool:
    """The Luhn check of ASCII digits: from the right, every second digit doubled."""
    kept, doubled = digits[-1::-2], digits[-2::-2]
    total = sum(kept) - 0x30 * len(kept) + sum(doubled.translate(_DOUBLED))
    return total % 10 == 0


def _is_card(digits: bytes) -> bool:
    return 13 <= len(digits) <= 19 and 0x32 <= digits[0] <= 0x36 and _luhn(digits)


def _card_span(candidate: bytes) -> tuple[int, int] | None:
    """Where in a :data:`CARD_CANDIDATE` match the card number is: the longest run of its
    whole groups that is one (the leftmost of equals), or ``None``.

    ``4111 1111 1111 1111 12/28`` matches as 18 digits, the card and its expiry month.
    """
    groups = [match.span() for match in _GROUP.finditer(candidate)]
    starts, ends = [start for start, _ in groups], [end for _, end in groups]
    best: tuple[int, int] | None = None
    for first, start in enumerate(starts):
        for end in reversed(ends[first:]):
            digits = candidate[start:end].translate(None, _SEPARATORS)
            if len(digits) < 13:
                break
            if _is_card(digits):
                if best is None or end - start > best[1] - best[0]:
                    best = (start, end)
                break
    return best


def _run_has_card(run: bytes) -> bool:
    """Whether some 13 to 19 digits of ``run`` start with 2 to 6 and pass Luhn."""
    for first in range(len(run) - 12):
        if 0x32 <= run[first] <= 0x36:
            for last in range(first + 13, min(first + 19, len(run)) + 1):
                if _luhn(run[first:last]):
                    return True
    return False


def _may_start_a_card(digits: bytes) -> bool:
    """Whether a digit that may begin a card (2 to 6) has 12 digits or more after it."""
    return bool(digits[: len(digits) - 12].translate(None, b"01789"))


def card_possible(raw: bytes) -> bool:
    """Whether ``raw`` may hold a card number: implied by :func:`redact_cards` changing it.

    A card's digits, once spaces and dashes are dropped, are 13 to 19 digits of a run that
    start with 2 to 6 and pass Luhn. One projection of the bytes says whether any run is 13
    long, with a scan at memchr-like speed; only then are the runs looked at, the way
    :func:`redact_cards` looks at them, within the same budget.
    """
    zeros = raw.translate(_ZEROS, _SEPARATORS)
    start = zeros.find(_CARD_RUN)
    if start == -1:
        return False
    digits = raw.translate(_DIGITS, _SEPARATORS)
    budget = _CARD_BUDGET
    while start != -1:
        end = zeros.find(b"x", start + 13)
        end = len(zeros) if end == -1 else end
        if end - start == 13 and not 0x32 <= digits[start] <= 0x36:
            pass  # the usual run: an epoch in milliseconds, which starts with 1
        elif _may_start_a_card(run := digits[start:end]):
            budget -= len(run)
            if budget < 0 or len(run) > _LONG_RUN or _run_has_card(run):
                return True
        start = zeros.find(_CARD_RUN, end)
    return False


def _digit_runs(raw: bytes) -> Iterator[tuple[int, int, bytes, bytes]]:
    """The runs of digits, spaces and dashes in ``raw`` with 13 digits or more, as ``(start,
    end, the run, its digits)``."""
    runs = raw.translate(_RUNS)
    start = runs.find(_CARD_RUN)
    while start != -1:
        end = runs.find(b"x", start + 13)
        end = len(runs) if end == -1 else end
        window = raw[start:end]
        digits = window.translate(None, _SEPARATORS)
        if len(digits) >= 13:  # not mostly spaces (indentation, a date)
            yield start, end, window, digits
        start = runs.find(_CARD_RUN, end)


def redact_cards(text: str, raw: bytes) -> tuple[str, int]:
    """``text`` (whose bytes, one a character, are ``raw``) with its card numbers replaced,
    and how many were."""
    parts: list[str] = []
    done = 0
    for start, end in card_spans(raw):
        parts += (text[done:start], CARD_MARKER)
        done = end
    if not parts:
        return text, 0
    parts.append(text[done:])
    return "".join(parts), len(parts) // 2


def card_spans(raw: bytes) -> list[tuple[int, int]]:
    """Where the card numbers of ``raw`` are, in order.

    The card pattern runs only where the digits are: in each run of digits, spaces, dashes
    and dots that may hold a card, trying each group in turn. That costs microseconds a
    group, so a string gets :data:`_CARD_BUDGET` digits of such runs read closely; runs
    beyond that (a pathological text: many thousands of digits in groups) are replaced
    whole, one span each, rather than let through unread.
    """
    spans: list[tuple[int, int]] = []
    budget = _CARD_BUDGET
    for start, end, window, digits in _digit_runs(raw):
        if not _may_start_a_card(digits):
            continue
        budget -= len(digits)
        if budget < 0:
            first = start + len(window) - len(window.lstrip(_SEPARATORS))
            spans.append((first, start + len(window.rstrip(_SEPARATORS))))
        elif len(digits) > _LONG_RUN or _run_has_card(digits):
            at, stop = start, min(end + 2, len(raw))
            while (match := CARD_CANDIDATE.search(raw, at, stop)) is not None:
                span = _card_span(match.group())
                if span is None:  # "1234 4111 1111 1111 1111": again from the next group
                    at = match.start() + 1
                    continue
                spans.append((match.start() + span[0], match.start() + span[1]))
                at = match.start() + span[1]
    return spans
