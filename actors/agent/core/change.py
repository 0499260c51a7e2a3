"""Whether a window changed meaningfully since the last LLM call, and why.

Most screen events change nothing a hud would say: a cursor blinks, a clock ticks in the menu
bar, a page scrolls by a line, a spinner turns; most transcript chunks are "mm-hm". The agent
calls the LLM when the window differs from the one of its last call in a way a user would
notice, and skips the rest. :func:`gist` keeps what the comparison needs of a window (small,
immutable, kept across ticks); :func:`judge` compares two gists and names the difference.

Strong changes call at once (after the schedule's debounce):

- ``app``: another app is in front; ``window``: another window title in the same app;
- ``error``: a new error line on screen (:func:`actors.core.screen_budget.is_error`: a
  traceback, ``FAILED``, ``error:``, an exception, a panic); ``fixed``: the errors on the
  last call's newest screen are gone from the newest screen, or a success line appeared
  (``5 passed``, ``Build succeeded``);
- ``question``: a new transcript chunk asks something (:data:`QUESTION_WORDS` words of
  content at least);
- ``speech``: new transcript chunks hold at least :data:`SPEECH_WORDS` words that are not
  fillers;
- ``screen``: at least :data:`SCREEN_SHARE` of the lines of the new screen events were not on
  screen at the last call (and at least :data:`SCREEN_MIN_LINES` of them), or
  :data:`SCREEN_MANY_LINES` new lines whatever their share.

Lines are compared by their letters only (case-folded, digits and punctuation dropped), so a
ticking clock, line numbers, counters, a blinking cursor or a spinner make no new line; a line
that was on screen at the last call, in any event of the window, is not new (this drops the
chrome of an app: menus, tabs, toolbars). Anything else new is a ``minor`` change: it is
summarised once it is :data:`STALE_AFTER` intervals old (a slow trickle of small changes is
still summarised), or never if it holds nothing at all (``nothing``: only flicker).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from actors.core.screen_budget import is_error, may_hold_errors
from actors.core.window import ScreenEvent, TickWindow

SPEECH_WORDS = 10
"""Words (of three letters or more, fillers aside) of new speech that call on their own."""
SCREEN_SHARE = 0.3
"""Share of new lines in the new screen events that calls."""
SCREEN_MIN_LINES = 3
"""New lines needed besides the share (a two-line screen changing one line is not news)."""
SCREEN_MANY_LINES = 15
"""New lines that call whatever their share (a big screen can hide a new paragraph)."""
STALE_AFTER = 1.0
"""In intervals (``AGENT_INTERVAL_MS``): how old a minor change gets before it is summarised."""

FILLERS = frozenset(
    (
        "mmm",
        "mhm",
        "hmm",
        "uhm",
        "erm",
        "huh",
        "yeah",
        "yep",
        "yes",
        "yup",
        "nope",
        "okay",
        "right",
        "sure",
        "alright",
        "cool",
        "nice",
        "great",
        "good",
        "fine",
        "got",
        "and",
        "the",
        "but",
        "well",
        "like",
        "just",
        "really",
        "you",
        "know",
        "see",
        "thanks",
        "thank",
        "gotcha",
        "exactly",
        "totally",
    )
)
"""Words of three letters or more that carry no content on their own in speech."""

_WORD = re.compile(r"[^\W\d_]+")
_PASSED = re.compile(
    r"\bpassed\b|\bsucceeded\b|\bsuccessful(?:ly)?\b|\b0 errors\b|\bno issues found\b|✓|✔",
    re.IGNORECASE,
)
QUESTION_WORDS = 3
"""Words (of three letters or more, fillers aside) a question needs to call on its own: "do
we have an alert on the retry rate?" does, "again?" does not."""


def line_key(line: str) -> str:
    """What of a line is compared: its words of letters, case-folded, one space between."""
    return " ".join(_WORD.findall(line.casefold()))


_speech_key = functools.lru_cache(maxsize=1024)(line_key)
""":func:`line_key` of a transcript chunk or a title, remembered: a chunk is in many windows."""


@dataclass(frozen=True, slots=True)
class Gist:
    """What the comparison keeps of one window."""

    app: str
    title: str
    """The newest screen event's window title, compared by :func:`line_key`."""
    lines: frozenset[str]
    """The keys of every line on screen in the window."""
    errors: frozenset[str]
    """The keys of the error lines on the newest screen event."""
    newest_screen_ms: int
    """When the newest screen event arrived (0: none)."""
    speech: frozenset[str]
    """The transcript chunks in the window, compared by :func:`line_key`."""


@dataclass(frozen=True, slots=True)
class Change:
    """How a window differs from the last call's."""

    reason: str
    """``first``, a strong change (see the module), ``minor`` or ``nothing``."""
    strong: bool
    detail: str = ""
    """A few words for the tick's log line: which app, how many new lines, which words."""


_CACHED_TEXTS = 256
"""Screen texts whose lines are kept keyed (a ring's worth and more): a screen event is in
many consecutive windows, and its text is keyed once."""


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def _keyed(text: str) -> tuple[tuple[tuple[str, str], ...], frozenset[str], frozenset[str]]:
    """``text``'s lines with a key, as ``(raw, key)``; the set of keys; the error lines' keys."""
    pairs = tuple((raw, key) for raw in text.splitlines() if (key := line_key(raw)))
    errors: frozenset[str] = frozenset()
    if may_hold_errors(text):
        errors = frozenset(key for raw, key in pairs if is_error(raw))
    return pairs, frozenset(key for _, key in pairs), errors


def gist(window: TickWindow) -> Gist:
    """What :func:`judge` needs of ``window``."""
    lines: set[str] = set()
    for event in window.screen:
        for text in _texts(event):
            lines.update(_keyed(text)[1])
    newest = window.screen[-1] if window.screen else None
    return Gist(
        app=window.current_app,
        title=_speech_key(newest.window_title or newest.title) if newest is not None else "",
        lines=frozenset(lines),
        errors=_keyed(newest.ocr)[2] if newest is not None else frozenset(),
        newest_screen_ms=newest.received_at if newest is not None else 0,
        speech=frozenset(_speech_key(a.text) for a in window.audio),
    )


def _texts(event: ScreenEvent) -> tuple[str, ...]:
    """The texts of ``event`` whose lines are compared: its OCR, and its narrative if any.

    Each is keyed apart: the strings are those the event holds, so the cache finds them by a
    hash Python keeps with each string, where a joined copy would be hashed anew every tick.
    """
    return (event.ocr, event.narrative) if event.narrative else (event.ocr,)


def judge(before: Gist | None, window: TickWindow, after: Gist) -> Change:
    """How ``window`` (whose gist is ``after``) differs from the window of the last call."""
    if before is None:
        return Change("first", strong=True)
    if after.app != before.app:
        return Change("app", strong=True, detail=after.app)
    if after.title and after.title != before.title:
        return Change("window", strong=True, detail=after.title[:60])
    new_lines: dict[str, str] = {}
    keys: set[str] = set()
    for event in window.screen:
        if event.received_at <= before.newest_screen_ms:
            continue
        for text in _texts(event):
            pairs, text_keys, _ = _keyed(text)
            keys |= text_keys
            if text_keys <= before.lines:
                continue
            for raw, key in pairs:
                if key not in before.lines:
                    new_lines.setdefault(key, raw)
    errors = [raw for raw in new_lines.values() if is_error(raw)]
    if errors:
        return Change("error", strong=True, detail=errors[0].strip()[:80])
    if before.errors and not after.errors and after.newest_screen_ms > before.newest_screen_ms:
        return Change("fixed", strong=True, detail="the errors are gone")
    passed = [raw for raw in new_lines.values() if _PASSED.search(raw)]
    if passed:
        return Change("passed", strong=True, detail=passed[0].strip()[:80])
    new_speech = [c.text for c in window.audio if _speech_key(c.text) not in before.speech]
    question = next(
        (text for text in new_speech if "?" in text and len(_content(text)) >= QUESTION_WORDS),
        "",
    )
    if question:
        return Change("question", strong=True, detail=question[:80])
    words = [word for text in new_speech for word in _content(text)]
    if len(words) >= SPEECH_WORDS:
        return Change("speech", strong=True, detail=f"{len(words)} words")
    count = len(new_lines)
    if count >= SCREEN_MANY_LINES or (
        count >= SCREEN_MIN_LINES and count / len(keys) >= SCREEN_SHARE
    ):
        return Change("screen", strong=True, detail=f"{count} of {len(keys)} lines new")
    if words or count:
        return Change("minor", strong=False, detail=f"{count} new lines, {len(words)} words")
    return Change("nothing", strong=False)


def _content(text: str) -> list[str]:
    """The words of ``text`` that carry content: three letters or more, not fillers."""
    return [word for word in _speech_key(text).split() if len(word) > 2 and word not in FILLERS]


def settling_until(window: TickWindow, now_ms: int, settle_ms: int) -> int | None:
    """While the user is switching between apps or windows, when it may have settled:
    ``settle_ms`` after the newest switch, if another came less than ``settle_ms`` before it
    (a burst), or if the switch shows no text yet (its text usually follows within a second or
    two, and the call should see it); else ``None`` (a single switch is acted on at once)."""
    switches: list[int] = []
    previous: ScreenEvent | None = None
    for event in window.screen:
        if previous is not None and (
            event.app != previous.app or _title(event) != _title(previous)
        ):
            switches.append(event.received_at)
        previous = event
    if not switches or switches[-1] + settle_ms <= now_ms:
        return None
    newest = window.screen[-1]
    if not newest.ocr and newest.received_at == switches[-1]:
        return switches[-1] + settle_ms
    if len(switches) < 2:
        return None
    if switches[-1] - switches[-2] >= settle_ms:
        return None
    return switches[-1] + settle_ms


def _title(event: ScreenEvent) -> str:
    return _speech_key(event.window_title or event.title)
