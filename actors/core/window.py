"""The context window: a pure function over buffer snapshots.

The window holds the newest screen events and transcript chunks within ``maxAgeMs``, and the
app history. A screen event also carries what the capture client says of the window
(``meta.windowTitle``) and of the moment (``observation.title``, ``observation.narrative``)
when that says more than its OCR; repeated transcripts are kept once; and the window knows
when its newest event arrived (``newest_ms``), from which each agent entry's freshness is
measured.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import msgspec
from msgspec import UNSET

from actors.core import shapes
from actors.core.records import FeedRecord, JSONDict, SenseRecord
from actors.core.screen_image import ScreenImage
from actors.core.shapes import AGENT, MARKS, TRANSCRIPT_SOURCE, AppSwitch, AudioSource

MAX_AUDIO = 5
"""Transcript chunks the window keeps (the newest)."""
MAX_SCREEN = 10
"""Unique screen events the window keeps (the newest)."""
AUDIO_DEDUP_DEPTH = 3
"""A transcript equal (ignoring case and spacing) to one of this many before it is dropped."""

_SPEAKER_PREFIX = re.compile(r"^\[.*?openrouter\]\s*")


@dataclass(frozen=True, slots=True)
class AudioEvent:
    """Transcript text extracted from one feed item."""

    ts: int
    text: str
    source: AudioSource | None = None
    """Whose words its mark says they are: ``system`` (``[🔊] ``, what the user heard),
    ``mic`` (``[🎙] ``, what the user said), or ``None`` when no mark says."""


@dataclass(frozen=True, slots=True)
class ScreenEvent:
    """What the window keeps of one sense event."""

    ts: float
    type: str
    app: str
    ocr: str
    ssim: float | None
    received_at: int = 0
    """Server time (ms) the event arrived: what its age in the prompt is measured from."""
    window_title: str = ""
    """``meta.windowTitle``, when it says more than the OCR (else empty)."""
    title: str = ""
    """``observation.title``, when it says more than the OCR and the window title."""
    narrative: str = ""
    """``observation.narrative``, when it says more than the OCR."""

    def shape(self) -> shapes.ScreenLine:
        """``{ts, type, app, ocr, ssim?, windowTitle?, title?, narrative?}``."""
        unset = msgspec.UNSET
        return shapes.ScreenLine(
            ts=self.ts,
            type=self.type,
            app=self.app,
            ocr=self.ocr,
            ssim=unset if self.ssim is None else self.ssim,
            window_title=self.window_title or unset,
            title=self.title or unset,
            narrative=self.narrative or unset,
        )


@dataclass(frozen=True, slots=True)
class TickWindow:
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
    newest_ms: int | None = None
    """Server time (ms) of the newest event inside the window, or ``None`` when empty."""
    images: tuple[ScreenImage, ...] = ()
    """The screen images a call with this window sends, newest first
    (:func:`~actors.core.screen_image.pick_images`); none unless the context builder adds
    them."""

    @property
    def is_empty(self) -> bool:
        """No audio and no screen events inside the window."""
        return self.audio_count == 0 and self.screen_count == 0

    def shape(self) -> shapes.ContextWindow:
        """The shape ``/agent/context`` serves."""
        return shapes.ContextWindow(
            current_app=self.current_app,
            app_history=list(self.app_history),
            audio=[
                shapes.AudioChunk(ts=a.ts, text=a.text, source=a.source or UNSET)
                for a in self.audio
            ],
            screen=[s.shape() for s in self.screen],
            audio_count=self.audio_count,
            screen_count=self.screen_count,
            window_ms=self.window_ms,
            newest_event_ts=self.newest_ms,
            images=[
                shapes.ImageRef(sense_id=i.event_id, type=i.type, bytes=i.size) for i in self.images
            ],
        )

    def to_json(self) -> JSONDict:
        """:meth:`shape` as plain data."""
        out: JSONDict = msgspec.to_builtins(self.shape())
        return out


AUDIO_SOURCE = TRANSCRIPT_SOURCE
"""The ``source`` of a feed item that is a transcript as it stands."""
MEMO = "[📝] "
"""The mark that starts a transcript line of older versions of Sinain's capture pipeline,
which did not say whose words they were."""


def _marked(text: str) -> tuple[AudioSource | None, str] | None:
    """Whose words a transcript's mark says ``text`` holds, and the text without the mark;
    ``None`` when it starts with no mark."""
    if text.startswith(MEMO):
        return None, text.removeprefix(MEMO)
    for source, mark in MARKS.items():
        if text.startswith(mark):
            return source, text.removeprefix(mark)
    return None


def extract_audio(item: FeedRecord) -> AudioEvent | None:
    """Return the transcript in a feed item, or ``None`` if it carries none.

    Three forms are heard: an item posted with ``source: "audio"`` and one whose text starts
    with a transcript's mark (:data:`~actors.core.shapes.MARKS`: ``[🔊] `` for system
    audio, ``[🎙] `` for the microphone; or the older :data:`MEMO`) are a transcript as they
    stand, the mark dropped and the source it names kept; of an item of the audio bridge, one
    mentioning ``[PERIODIC]`` or ``openrouter]``, the lines naming ``openrouter]`` are kept,
    their ``[... openrouter]`` prefix removed. Anything else (a note, advice for the user,
    the agent's own hud lines) is not audio.
    """
    text = item.text
    if item.source == AGENT:
        return None
    marked = _marked(text)
    if item.source == AUDIO_SOURCE or marked is not None:
        source, said = marked if marked is not None else (None, text)
        lines = (line.strip() for line in said.split("\n"))
        plain = " ".join(line for line in lines if line)
        return AudioEvent(ts=item.ts, text=plain, source=source) if plain else None
    if "[PERIODIC]" not in text and "openrouter]" not in text:
        return None
    lines = (
        _SPEAKER_PREFIX.sub("", line, count=1).strip()
        for line in text.split("\n")
        if "openrouter]" in line
    )
    joined = " ".join(line for line in lines if line)
    return AudioEvent(ts=item.ts, text=joined) if joined else None


def _plain(text: str) -> str:
    return " ".join(text.split()).casefold()


def says_more(text: str, *known: str) -> bool:
    """Whether ``text`` adds anything to ``known``: not empty, and not contained (ignoring
    case and spacing) in any of them."""
    return _adds(_plain(text), [_plain(k) for k in known if k])


def _adds(plain: str, known: list[str]) -> bool:
    """:func:`says_more` of texts already made plain."""
    return bool(plain) and not any(plain in k for k in known)


def screen_event(event: SenseRecord) -> ScreenEvent:
    """What the window keeps of ``event``: the capture client's window title and observation
    only where they say more than its OCR.

    The capture client fills ``observation.title`` with ``"<type> in <app>"`` when it knows
    nothing better; that says nothing the line does not already show, so it is left out.
    """
    app = event.app or "unknown"
    window_title = title = narrative = ""
    if "meta" in event.payload or "observation" in event.payload:
        ocr = _plain(event.ocr)  # once: the OCR can be megabytes, and each test reads it
        window_title = event.window_title
        window_plain = _plain(window_title)
        if not _adds(window_plain, [ocr]):
            window_title = window_plain = ""
        title = event.title
        title_plain = _plain(title)
        generic = [_plain(g) for g in (f"{event.type} in {event.app}", f"{event.type} event", app)]
        if title and not _adds(title_plain, [ocr, window_plain, *generic]):
            title = title_plain = ""
        narrative = event.narrative
        if narrative and not _adds(_plain(narrative), [ocr, title_plain]):
            narrative = ""
    return ScreenEvent(
        ts=event.ts,
        type=event.type,
        app=app,
        ocr=event.ocr,
        ssim=event.ssim,
        received_at=event.received_at,
        window_title=window_title,
        title=title,
        narrative=narrative,
    )


def _newest_unique(audio: list[AudioEvent]) -> list[AudioEvent]:
    """The newest :data:`MAX_AUDIO` chunks, newest last, a chunk left out when a newer kept
    one within :data:`AUDIO_DEDUP_DEPTH` says the same (ignoring case and spacing).

    It walks back from the newest and stops once it has enough, so a long window costs no
    more than a short one.
    """
    kept: list[AudioEvent] = []
    newer: list[str] = []
    for chunk in reversed(audio):
        plain = _plain(chunk.text)
        if plain in newer[-AUDIO_DEDUP_DEPTH:]:
            continue
        kept.append(chunk)
        newer.append(plain)
        if len(kept) == MAX_AUDIO:
            break
    kept.reverse()
    return kept


def build_context_window(
    feed: Iterable[FeedRecord],
    sense: Iterable[SenseRecord],
    *,
    now_ms: int,
    max_age_ms: int,
) -> TickWindow:
    """Build the window of the last ``max_age_ms`` before ``now_ms``.

    Feed items are aged by their ``ts`` (server time), sense events by ``receivedAt``.
    Consecutive identical OCR (in the same window title) is kept once; a ``context`` event
    without OCR (an app switch) is always kept; an event with neither OCR nor a context type
    is kept when its observation says something. A transcript
    said again within :data:`AUDIO_DEDUP_DEPTH` chunks is kept once, at its newest.
    """
    cutoff = now_ms - max_age_ms
    heard = [
        chunk for item in feed if item.ts >= cutoff and (chunk := extract_audio(item)) is not None
    ]
    audio = _newest_unique(heard)
    screen = [screen_event(e) for e in sense if e.received_at >= cutoff]

    deduped: list[ScreenEvent] = []
    last_ocr: tuple[str, str] = ("", "")
    for event in screen:
        if event.ocr:
            if (event.ocr, event.window_title) == last_ocr:
                continue
            last_ocr = (event.ocr, event.window_title)
        elif event.type == "context":
            pass  # an app switch: always kept
        elif not (event.title or event.narrative):
            continue
        deduped.append(event)

    history: list[AppSwitch] = []
    last_app = ""
    for event in screen:
        if event.app != last_app:
            history.append(AppSwitch(app=event.app, ts=shapes.whole_ms(event.ts)))
            last_app = event.app

    times = [a.ts for a in heard] + [e.received_at for e in screen]
    return TickWindow(
        current_app=screen[-1].app if screen else "unknown",
        app_history=tuple(history),
        audio=tuple(audio),
        screen=tuple(deduped[-MAX_SCREEN:]),
        audio_count=len(heard),
        screen_count=len(screen),
        window_ms=max_age_ms,
        newest_ms=max(times) if times else None,
    )
