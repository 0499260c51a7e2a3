"""The context window (v2 spec, section 3): a pure function over buffer snapshots."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from actors.records import FeedItem, JSONDict, SenseEvent

MAX_AUDIO = 5
"""Transcript chunks the window keeps (the newest)."""
MAX_SCREEN = 10
"""Unique screen events the window keeps (the newest)."""

_SPEAKER_PREFIX = re.compile(r"^\[.*?openrouter\]\s*")


@dataclass(frozen=True, slots=True)
class AudioEvent:
    """Transcript text extracted from one feed item."""

    ts: int
    text: str

    def to_json(self) -> JSONDict:
        """``{ts, text}``."""
        return {"ts": self.ts, "text": self.text}


@dataclass(frozen=True, slots=True)
class ScreenEvent:
    """What the window keeps of one sense event."""

    ts: float
    type: str
    app: str
    ocr: str
    ssim: float | None

    def to_json(self) -> JSONDict:
        """``{ts, type, app, ocr, ssim?}``."""
        out: JSONDict = {"ts": self.ts, "type": self.type, "app": self.app, "ocr": self.ocr}
        if self.ssim is not None:
            out["ssim"] = self.ssim
        return out


@dataclass(frozen=True, slots=True)
class AppSwitch:
    """The moment the active app changed."""

    app: str
    ts: float

    def to_json(self) -> JSONDict:
        """``{app, ts}``."""
        return {"app": self.app, "ts": self.ts}


@dataclass(frozen=True, slots=True)
class ContextWindow:
    """What the agent sees at one tick."""

    current_app: str
    app_history: tuple[AppSwitch, ...]
    audio: tuple[AudioEvent, ...]
    """The last :data:`MAX_AUDIO` transcript chunks, newest last."""
    screen: tuple[ScreenEvent, ...]
    """The last :data:`MAX_SCREEN` deduplicated screen events, newest last."""
    audio_count: int
    screen_count: int
    window_ms: int

    @property
    def is_empty(self) -> bool:
        """No audio and no screen events inside the window."""
        return self.audio_count == 0 and self.screen_count == 0

    def to_json(self) -> JSONDict:
        """The spec's shape, as ``/agent/context`` serves it."""
        return {
            "currentApp": self.current_app,
            "appHistory": [a.to_json() for a in self.app_history],
            "audio": [a.to_json() for a in self.audio],
            "screen": [s.to_json() for s in self.screen],
            "audioCount": self.audio_count,
            "screenCount": self.screen_count,
            "windowMs": self.window_ms,
        }


def extract_audio(item: FeedItem) -> AudioEvent | None:
    """Return the transcript in a bridge feed item, or ``None`` if it carries none.

    Only items mentioning ``[PERIODIC]`` or ``openrouter]`` are transcripts; of those, the
    lines naming ``openrouter]`` are kept, their ``[... openrouter]`` prefix removed.
    """
    text = item.text
    if "[PERIODIC]" not in text and "openrouter]" not in text:
        return None
    lines = (
        _SPEAKER_PREFIX.sub("", line, count=1).strip()
        for line in text.split("\n")
        if "openrouter]" in line
    )
    joined = " ".join(line for line in lines if line)
    return AudioEvent(ts=item.ts, text=joined) if joined else None


def build_context_window(
    feed: Iterable[FeedItem],
    sense: Iterable[SenseEvent],
    *,
    now_ms: int,
    max_age_ms: int,
) -> ContextWindow:
    """Build the window of the last ``max_age_ms`` before ``now_ms``.

    Feed items are aged by their ``ts`` (server time), sense events by ``receivedAt``.
    Consecutive identical OCR is kept once; a ``context`` event without OCR (an app switch)
    is always kept.
    """
    cutoff = now_ms - max_age_ms
    audio = [
        heard for item in feed if item.ts >= cutoff and (heard := extract_audio(item)) is not None
    ]
    screen = [
        ScreenEvent(ts=e.ts, type=e.type, app=e.app or "unknown", ocr=e.ocr, ssim=e.ssim)
        for e in sense
        if e.received_at >= cutoff
    ]

    deduped: list[ScreenEvent] = []
    last_ocr = ""
    for event in screen:
        if event.ocr and event.ocr != last_ocr:
            deduped.append(event)
            last_ocr = event.ocr
        elif not event.ocr and event.type == "context":
            deduped.append(event)

    history: list[AppSwitch] = []
    last_app = ""
    for event in screen:
        if event.app != last_app:
            history.append(AppSwitch(app=event.app, ts=event.ts))
            last_app = event.app

    return ContextWindow(
        current_app=screen[-1].app if screen else "unknown",
        app_history=tuple(history),
        audio=tuple(audio[-MAX_AUDIO:]),
        screen=tuple(deduped[-MAX_SCREEN:]),
        audio_count=len(audio),
        screen_count=len(screen),
        window_ms=max_age_ms,
    )
