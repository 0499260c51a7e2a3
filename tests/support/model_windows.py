"""The windows ``python -m bench models`` asks a model about: each case of the prompt corpus, then
the shipped demo session every few seconds, with what a tick would read and send of each."""

from __future__ import annotations

from dataclasses import dataclass

from actors.core.screen_image import ScreenImage, SentImages, pick_images
from actors.core.window import TickWindow
from tests.support.day_session import with_screens
from tests.support.prompt_corpus import (
    MAX_AGE_MS,
    Case,
    case_window,
    cases,
    session_window,
    stored,
    tick_ms,
)
from transport.demo.replay import DEMO_SESSION, load_session


@dataclass(frozen=True, slots=True)
class Window:
    """A corpus case (``case``) or a moment ``at_s`` seconds into the demo session."""

    name: str
    at_s: float | None
    case: Case | None = None


def windows(session_step_s: float, limit: int | None, sample: int | None = None) -> list[Window]:
    """The corpus's cases, then the demo session every ``session_step_s`` seconds; the first
    ``limit``, or ``sample`` of them spread evenly over the list (a slow model's quick run).

    """
    found = [Window(case.name, None, case) for case in cases()]
    length = max(event.at for event in load_session(DEMO_SESSION))
    at = session_step_s
    while at <= length:
        found.append(Window(f"demo@{at:.0f}s", at))
        at += session_step_s
    if sample and sample < len(found):
        found = [found[round(i * (len(found) - 1) / (sample - 1))] for i in range(sample)]
    return found[:limit] if limit else found


def tick(window: Window) -> tuple[TickWindow, int]:
    """The window the tick reads, and the tick's server time."""
    if window.case is not None:
        return case_window(window.case), tick_ms(window.case)
    assert window.at_s is not None, "a window is a corpus case or a moment of the session"
    return session_window(window.at_s)


def images(window: Window, most: int, sent: SentImages) -> tuple[ScreenImage, ...]:
    """What the relay's call would carry: of the window's screen events (each with its app's
    thumbnail), newest first, the images fit to send, picked by :func:`pick_images`."""
    now_ms = tick(window)[1]
    at_s = window.at_s or 0.0
    session = (e for e in load_session(DEMO_SESSION) if e.at <= at_s)
    events = window.case.events if window.case is not None else tuple(session)
    _, sense = stored(with_screens(events, every=True))
    fit: list[ScreenImage] = []
    for event in reversed(sense):
        if event.received_at < now_ms - MAX_AGE_MS:
            break
        if isinstance(image := event.image()[0], ScreenImage):
            fit.append(image)
    return pick_images(fit, most, sent)
