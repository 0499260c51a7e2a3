"""What a destination is shown of a context window, as its column of the privacy matrix
says (:mod:`config.privacy`): a pure function over the window, read on every tick.

The window was built from what the buffers stored, with the relay's secret redaction applied
as it arrived, so ``full`` and ``redacted`` show the text as stored. ``summary`` keeps where
the user was and leaves out what it said: a screen event keeps its app and window (as
``TITLES`` allows) and loses its text; a transcript keeps how many words it had; a window
title, being all content, is left out. ``none`` leaves the kind out: screen events are not
listed (the app and the app history stay, as they say where, not what), transcripts are not
listed, titles are dropped. The counts stay as they were, so a window holding only what a
destination may not see is still a moment (the call is made with what may be shown).

Images are not text: whether a call carries any is the context builder's choice
(:class:`~config.privacy.Column` ``.images``), not :func:`disclosed`'s. What the sense buffer
stores of a screen event is :func:`actors.ingest.sense_buffer.stored_payload`'s.
"""

from __future__ import annotations

from dataclasses import replace

from actors.core.window import AudioEvent, ScreenEvent, TickWindow
from config.privacy import SHOWN, SPEECH_SUMMARY, Column, Level


def shows_all_text(column: Column) -> bool:
    """Whether ``column`` shows every kind of text as stored (the default matrix does)."""
    return SHOWN[column.ocr] and SHOWN[column.audio] and SHOWN[column.titles]


def disclosed(window: TickWindow, column: Column) -> TickWindow:
    """``window`` as a destination at ``column`` is shown it; ``window`` itself when the
    column shows all its text."""
    if shows_all_text(column):
        return window
    return replace(
        window,
        screen=_screen(window.screen, column),
        audio=_audio(window.audio, column.audio),
    )


def _screen(events: tuple[ScreenEvent, ...], column: Column) -> tuple[ScreenEvent, ...]:
    if column.ocr == "none":
        return ()
    keep_text = SHOWN[column.ocr]
    keep_title = SHOWN[column.titles]
    if keep_text and keep_title:
        return events
    return tuple(
        replace(
            event,
            ocr=event.ocr if keep_text else "",
            title=event.title if keep_text else "",
            narrative=event.narrative if keep_text else "",
            window_title=event.window_title if keep_title else "",
        )
        for event in events
    )


def _audio(chunks: tuple[AudioEvent, ...], level: Level) -> tuple[AudioEvent, ...]:
    if SHOWN[level]:
        return chunks
    if level == "none":
        return ()
    return tuple(
        replace(chunk, text=SPEECH_SUMMARY.format(words=len(chunk.text.split())))
        for chunk in chunks
    )
