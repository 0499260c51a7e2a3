"""The exceptions the kernel raises itself: the base of every error the relay raises on
purpose, a request refused as bad, an actor that is down, and a start refused because
another process holds what it needs. :mod:`actors.core.errors` adds the rest of the
relay's exceptions to these; ``transport`` maps them all to HTTP statuses in one place."""

from __future__ import annotations


class RelayError(Exception):
    """Base of every error the relay raises on purpose."""


class BadRequest(RelayError):
    """The client sent something the relay will not store (HTTP 400)."""


class ActorUnavailable(RelayError):
    """An actor is down (restarting) or did not answer in time (HTTP 503)."""


class InUse(RuntimeError):
    """Another process holds what a start needs (a port, a data directory): the start stops
    there, and the message says what is held and by whom.

    :attr:`setting` names the setting that picks another (a field of ``config.settings.Settings``)
    and :attr:`instead` what to give it, so that the entry point can name the remedy in the
    user's own terms (the flag and the environment variable).
    """

    def __init__(self, message: str, *, setting: str, instead: str) -> None:
        super().__init__(message)
        self.setting = setting
        self.instead = instead
