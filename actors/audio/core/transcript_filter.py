"""Which transcripts reach the feed: the ones a speech model heard, not the ones it made up or
heard twice.

A transcript is dropped, the first reason that applies given:

- ``short``: empty, under :data:`MIN_CHARS` characters once stripped, or without a letter or
  digit (``...``, ``♪ ♪``);
- ``repetitive``: one word is over :data:`REPEAT_SHARE` of its words (:data:`REPEAT_MIN_WORDS`
  or more), the loop a model falls into over noise;
- ``invented``: its utterance was quiet and the text is one of the phrases speech models
  invent over near-silence (:data:`INVENTED`, subtitle credits): said clearly, "thank you" is
  kept;
- ``duplicate``: over :data:`DUPLICATE_SIMILARITY` similar to one of the last
  :data:`DUPLICATE_HISTORY` transcripts kept of the same source;
- ``bleed``: a microphone transcript over :data:`BLEED_SIMILARITY` similar to a system-audio
  transcript kept in the last :data:`BLEED_WINDOW_MS`: the speakers heard by the microphone.

Texts are compared normalised (case folded, punctuation and extra spaces removed); similarity
is the Dice coefficient of their character bigrams. The caller stores the text it was given,
stripped.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from typing import Final, Literal, get_args

from actors.common.forgetting import Span
from actors.core.shapes import AudioSource

DropReason = Literal["short", "repetitive", "invented", "duplicate", "bleed"]
DROP_REASONS: Final[tuple[DropReason, ...]] = get_args(DropReason)
MIN_CHARS: Final = 3
REPEAT_MIN_WORDS: Final = 6
REPEAT_SHARE: Final = 0.60
DUPLICATE_HISTORY: Final = 3
DUPLICATE_SIMILARITY: Final = 0.80
BLEED_SIMILARITY: Final = 0.70
BLEED_WINDOW_MS: Final = 10_000
"""How long a system-audio transcript is remembered for the microphone's bleed check: the
speakers and the microphone hear the same sound within a second, and their utterances are
cut at different moments."""
INVENTED: Final = frozenset(
    {
        "you",
        "bye",
        "bye bye",
        "thank you",
        "thank you so much",
        "thank you very much",
        "thanks",
        "thanks for watching",
        "thank you for watching",
        "thanks for listening",
        "thank you for listening",
        "thank you for watching and see you next time",
        "see you next time",
        "see you in the next video",
        "please subscribe",
        "subscribe",
        "like and subscribe",
        "please like and subscribe",
        "dont forget to like and subscribe",
        "subscribe to my channel",
        "music",
        "applause",
        "silence",
        "продолжение следует",
        "спасибо за просмотр",
        "untertitel im auftrag des zdf",
        "ご視聴ありがとうございました",
    }
)
"""What speech models write for a quiet stretch (normalised): thanks, goodbyes and calls to
subscribe from the video subtitles they learned on, and sound labels."""
_CREDITS: Final = re.compile(
    r"^(subtitles?|captions?|transcription|transcript|transcribed|translated|translation"
    r"|subtitled|untertitel|sous titres?|субтитры)\b.*\b(by|from|von|par|сделал|создавал)\b"
    r"|\bamara org\b"
)
"""Subtitle credits (``Subtitles by the Amara.org community``), in the normalised text."""
_APOSTROPHES: Final = re.compile(r"['’`]")
_NOT_WORD: Final = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """Case folded, apostrophes dropped, other punctuation and runs of spaces as one space."""
    return _NOT_WORD.sub(" ", _APOSTROPHES.sub("", text.casefold())).strip()


def _bigrams(text: str) -> Counter[str]:
    joined = text.replace(" ", "")
    return Counter(joined[i : i + 2] for i in range(len(joined) - 1))


def similarity(a: str, b: str) -> float:
    """The Dice coefficient of two normalised texts' character bigrams (spaces left out):
    1 for the same text, 0 for texts with no bigram in common."""
    if a.replace(" ", "") == b.replace(" ", ""):
        return 1.0
    left, right = _bigrams(a), _bigrams(b)
    total = left.total() + right.total()
    return 2 * (left & right).total() / total if total else 0.0


def is_invented(normalised: str) -> bool:
    """One of the phrases a speech model writes over near-silence, or a subtitle credit."""
    return normalised in INVENTED or _CREDITS.search(normalised) is not None


def _repetitive(words: list[str]) -> bool:
    if len(words) < REPEAT_MIN_WORDS:
        return False
    return Counter(words).most_common(1)[0][1] > REPEAT_SHARE * len(words)


class Filters:
    """The transcript filters of one relay (the ``TranscriptFilter`` protocol): the history
    they compare with, and the count of drops by reason."""

    def __init__(self) -> None:
        self._kept: dict[AudioSource, deque[tuple[int, str]]] = {
            "system": deque(maxlen=DUPLICATE_HISTORY),
            "mic": deque(maxlen=DUPLICATE_HISTORY),
        }
        """The newest texts kept of each source, with when, to tell a repeat."""
        self._system: deque[tuple[int, str]] = deque()
        """System-audio transcripts kept in the bleed window, oldest first, with when."""
        self._dropped: Counter[str] = Counter()

    @property
    def dropped(self) -> dict[str, int]:
        """Transcripts dropped so far, by reason (every reason, zeros included)."""
        return {reason: self._dropped[reason] for reason in DROP_REASONS}

    def check(self, source: AudioSource, text: str, quiet: bool, now_ms: int) -> str | None:
        """Why ``text`` is dropped, or ``None`` to keep it; a kept text is remembered."""
        reason = self._reason(source, text, quiet, now_ms)
        if reason is not None:
            self._dropped[reason] += 1
        return reason

    def _reason(
        self, source: AudioSource, text: str, quiet: bool, now_ms: int
    ) -> DropReason | None:
        normal = normalise(text)
        if len(text.strip()) < MIN_CHARS or not normal:
            return "short"
        if _repetitive(normal.split()):
            return "repetitive"
        if quiet and is_invented(normal):
            return "invented"
        if any(similarity(normal, kept) > DUPLICATE_SIMILARITY for _, kept in self._kept[source]):
            return "duplicate"
        recent = self._recent_system(now_ms)
        if source == "mic" and any(similarity(normal, s) > BLEED_SIMILARITY for s in recent):
            return "bleed"
        self._kept[source].append((now_ms, normal))
        if source == "system":
            self._system.append((now_ms, normal))
        return None

    def forget(self, span: Span) -> int:
        """Let go of the texts kept that were checked in ``span``; how many (a system-audio
        text is kept twice, and counted once)."""
        count = 0
        for source, kept in self._kept.items():
            left = [(at, text) for at, text in kept if not span.holds(at)]
            count += len(kept) - len(left)
            self._kept[source] = deque(left, maxlen=DUPLICATE_HISTORY)
        self._system = deque((at, text) for at, text in self._system if not span.holds(at))
        return count

    def _recent_system(self, now_ms: int) -> list[str]:
        """The system-audio transcripts kept in the last :data:`BLEED_WINDOW_MS`."""
        while self._system and now_ms - self._system[0][0] > BLEED_WINDOW_MS:
            self._system.popleft()
        return [text for _, text in self._system]
