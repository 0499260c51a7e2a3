"""Judging a model's words about a moment: whether its hud reached the feed, whether a user can
read it, and whether the hud and the digest speak of now.

A window's *now* (:func:`now_of`) is its active app and the content words of its newest screen
event (OCR, observation title, window title) and of its newest transcript. A content word
(:func:`content_words`) is a run of at least :data:`MIN_LETTERS` letters (digits, underscores and
a lower-to-upper case change split runs: ``TestRetryBackoff`` is three words), case aside, and
not one of :data:`STOP_WORDS`: words any sentence has, and the words any hud has whatever the
moment ("user", "screen", "working"). A plural ``s`` is dropped, so "tests" names "test".

A text is *grounded* in now (:func:`grounded`) when one of its content words is a word of now's
app or a content word of now. The judges are pure, for ``python -m bench models``
(docs/benchmarks.md) and its tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from actors.agent.core.hud_check import judge, pushes
from actors.core.shapes import NO_OUTPUT
from actors.core.window import TickWindow
from config.app_names import normalize_app_name

MIN_LETTERS = 4
"""Letters a content word has at least."""
MIN_WORDS, MAX_WORDS = 2, 15
"""A readable hud's words: a one-word hud ("Idle", "Coding") says nothing a user can act on,
and the prompt asks for fifteen at most."""
_STOP_TEXT = """
about above after again also another because been before being below between both could
does doing done down during each even ever every from further have having here into just
like made make many more most much must only other over same seem seems should some such
than that their them then there these they this those through under until upon very were
what when where which while will with within without would your yours
user users screen window windows text content page currently current working using looking
viewing reading seeing appears shows showing display displayed activity idle nothing
something someone anything
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
"""Words that say nothing about a moment: function words, and what a hud says of any moment."""

_RUN = re.compile(r"[^\W\d_]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def content_words(text: str) -> set[str]:
    """The content words of ``text``, case folded, a plural ``s`` dropped.

    >>> sorted(content_words("The user edits TestRetryBackoff in hud_relay.mjs; 2 tests fail"))
    ['backoff', 'edit', 'fail', 'relay', 'retry', 'test']
    """
    found = set()
    for run in _RUN.findall(text):
        for part in _CAMEL.sub(" ", run).split():
            word = part.casefold()
            if len(word) >= MIN_LETTERS and word not in STOP_WORDS:
                found.add(word[:-1] if word.endswith("s") and len(word) > MIN_LETTERS else word)
    return found


@dataclass(frozen=True, slots=True)
class Now:
    """What a window's newest moment is made of."""

    app: frozenset[str]
    """The content words of the active app's name (as the prompt shows it)."""
    words: frozenset[str]
    """The content words of the newest screen event and of the newest transcript."""


def now_of(window: TickWindow) -> Now:
    """The newest moment of ``window``: its active app, its newest screen and its newest speech."""
    texts: list[str] = []
    if window.screen:
        newest = window.screen[-1]
        texts += [newest.ocr, newest.title, newest.window_title]
    if window.audio:
        texts.append(window.audio[-1].text)
    app = content_words(normalize_app_name(window.current_app))
    return Now(frozenset(app), frozenset(w for t in texts for w in content_words(t)))


def grounded(text: str, now: Now) -> bool:
    """``text`` names now's app or a content word of now."""
    return bool(content_words(text) & (now.app | now.words))


def readable(hud: str, *, previous: str | None = None, moved: bool = True) -> str | None:
    """Why ``hud`` is no line a user can read, or ``None``: the relay's gate withholds it
    (markup, placeholder, an echo of the prompt, a fragment: the reason is the gate's), it has
    fewer than :data:`MIN_WORDS` or more than :data:`MAX_WORDS` words, or it is the
    ``previous`` hud (case aside) when the moment has ``moved``."""
    if (reason := judge(hud)) is not None or hud == NO_OUTPUT:
        return reason or "empty"
    words = len(hud.split())
    if words < MIN_WORDS:
        return "short"
    if words > MAX_WORDS:
        return "long"
    if moved and previous is not None and hud.strip().casefold() == previous.strip().casefold():
        return "repeated"
    return None


COPY_RATIO = 0.8
"""A digest this similar (:class:`difflib.SequenceMatcher`'s ratio, case aside) to the digest
before it is a copy of it."""


def copied(digest: str, previous: str | None) -> bool:
    """``digest`` is the ``previous`` digest again, or nearly (a word or two changed)."""
    if previous is None or digest == NO_OUTPUT:
        return False
    return SequenceMatcher(None, digest.casefold(), previous.casefold()).ratio() >= COPY_RATIO


@dataclass(slots=True)
class Judged:
    """Counts of a run of answers, in the order they were asked, and what the last one was."""

    asked: int = 0
    pushed: int = 0
    readable: int = 0
    grounded: int = 0
    digests_grounded: int = 0
    followed: int = 0
    """Answers that followed another of the same session..."""
    copied: int = 0
    """...and those of them whose digest is that answer's again (:func:`copied`)."""
    last_pushed: str | None = None
    last: tuple[str, Now] | None = None
    """The previous answer's hud and its moment."""

    def add(
        self, hud: str, digest: str, withheld: bool, now: Now, said: str | None = None
    ) -> dict[str, bool | str]:
        """Judge one answer (``withheld``: the relay's gate withheld its hud; ``said``: the
        digest of the answer before it in the same session); what was found."""
        previous, moved = (self.last[0], self.last[1] != now) if self.last else (None, True)
        why = readable(hud, previous=previous, moved=moved)
        found: dict[str, bool | str] = {
            "pushed": not withheld and pushes(hud, self.last_pushed),
            "readable": why is None,
            "grounded": grounded(hud, now),
            "digests_grounded": grounded(digest, now),
            "copied": copied(digest, said),
            "why": why or "",
        }
        self.followed += said is not None
        self.copied += bool(found["copied"])
        self.asked += 1
        self.pushed += bool(found["pushed"])
        self.readable += bool(found["readable"])
        self.grounded += bool(found["grounded"])
        self.digests_grounded += bool(found["digests_grounded"])
        if found["pushed"]:
            self.last_pushed = hud
        self.last = (hud, now)
        return found

    def shares(self) -> str:
        """Each judge's count and share of the answers asked, and the digests copied."""
        shown = ", ".join(
            f"{what.replace('_', ' ')} {n}/{self.asked} ({share(n, self.asked):.0f} %)"
            for what in JUDGES
            for n in [getattr(self, what)]
        )
        targets = ", ".join(f"{size} {aim:.0f} %" for size, aim in TARGETS.items())
        copies = f"digests copied {self.copied}/{self.followed}"
        return f"{shown} (targets, all but pushed: {targets}); {copies}"

    def missed(self) -> None:
        """A window without an answer: it counts against every share."""
        self.asked += 1
        self.last = None


JUDGES = ("pushed", "readable", "grounded", "digests_grounded")
"""What :class:`Judged` counts, in the order a report shows them."""
TARGETS = {"1.5B": 90.0, "0.5B": 75.0}
"""The share of answers readable, grounded and with a grounded digest a model of this size
should reach."""


def share(part: int, whole: int) -> float:
    """``part`` of ``whole`` in per cent (0 of nothing)."""
    return 100 * part / whole if whole else 0.0
