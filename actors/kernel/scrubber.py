"""What the kernel says of an error it reports: the reason a child gives for its death, a
supervisor's log line, a database it could not recover.

An exception's message may quote what was being handled (a request's ``Authorization``
header, a key a server echoed back, a person's screen), and the kernel knows nothing of
secrets or redaction: whoever starts it hands it a scrubber with :func:`use_scrubber` (the
composition root hands :func:`actors.core.error_text.safe_text`), and every error text the
kernel writes passes through it. Until one is handed, the kernel shows an error's type alone,
never its message, so an error text is never less safe for a scrubber missing.
"""

from __future__ import annotations

from collections.abc import Callable

Scrubber = Callable[[str], str]
"""A text made fit to leave the process: what it must not show taken out."""

WITHHELD = "(withheld: no scrubber)"
"""What :func:`scrubbed` gives for a text while no scrubber is handed."""

_scrubber: Scrubber | None = None


def use_scrubber(scrubber: Scrubber | None) -> Scrubber | None:
    """Pass every error text of the kernel through ``scrubber`` from now on (``None``: show
    the type of an error alone); returns the one it replaces."""
    global _scrubber
    previous, _scrubber = _scrubber, scrubber
    return previous


def described(exc: BaseException) -> str:
    """``Type: message`` of ``exc`` (``Type`` alone without a message), not yet scrubbed.
    Never ``repr(exc)``: a ``UnicodeEncodeError``'s repr holds the whole text it could not
    encode."""
    name = type(exc).__name__
    try:
        message = str(exc)
    except Exception:  # a broken __str__ still leaves the type to show
        message = ""
    return f"{name}: {message}" if message else name


def error_text(exc: BaseException) -> str:
    """:func:`described` of ``exc`` through the scrubber; the type alone without one."""
    scrubber = _scrubber
    return type(exc).__name__ if scrubber is None else scrubber(described(exc))


def scrubbed(text: str) -> str:
    """``text`` through the scrubber; :data:`WITHHELD` without one."""
    scrubber = _scrubber
    return WITHHELD if scrubber is None else scrubber(text)
