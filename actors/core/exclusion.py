"""Exclusion: screen events of excluded apps and windows, dropped at ingest.

:class:`ExclusionRule` (``RELAY_EXCLUDE_APPS``, ``RELAY_EXCLUDE_TITLES``) and its counter
:class:`Exclusions` drop whole screen events of excluded apps or windows. That is the
transport's decision: ``POST /sense`` answers ``{"ok": true, "dropped": "excluded"}`` before
anything reaches an actor, so such an event is never stored, served, streamed nor seen by a
tick.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import re2

from actors.core.records import JSONDict, SensePost
from config.app_names import normalize_app_name
from config.common.unicode_regex import compile_python

Counts = dict[str, int]


def _app_key(app: str) -> str:
    return app.strip().lower()


@dataclass(frozen=True, slots=True)
class ExclusionRule:
    r"""Which screen events are dropped at ingest (``RELAY_EXCLUDE_APPS``/``_TITLES``).

    ``apps``: lower-cased names, each as configured and as :func:`normalize_app_name` shows
    it, so ``code``, ``Code`` and ``VS Code`` exclude the same events. ``titles``: searched
    (as written: ``(?i)`` makes it case-insensitive) in ``meta.windowTitle`` and in
    ``observation.subtitle``, where Sinain's capture client repeats the window title. It is
    an RE2 pattern: the search runs on the event loop, in one pass over a title of any
    length, so a title cannot stall the relay whatever the pattern. Its ``\w``, ``\d`` and
    ``\s`` match as Python's do, non-ASCII letters, digits and spaces included
    (:mod:`config.common.unicode_regex`).
    """

    apps: frozenset[str] = frozenset()
    titles: re2._Regexp[str] | None = None

    @classmethod
    def of(cls, apps: Sequence[str] = (), titles: str = "") -> ExclusionRule:
        """The rule of the settings' ``exclude_apps`` and ``exclude_titles``."""
        names = {_app_key(a) for a in apps} | {_app_key(normalize_app_name(a)) for a in apps}
        names.discard("")
        return cls(frozenset(names), compile_python(titles) if titles else None)

    @property
    def active(self) -> bool:
        """Whether it excludes anything at all."""
        return bool(self.apps) or self.titles is not None

    def reason(self, event: SensePost) -> str | None:
        """``"app"`` or ``"title"`` when ``event`` is excluded, else ``None``."""
        if self.apps and event.app:
            if _app_key(event.app) in self.apps:
                return "app"
            if _app_key(normalize_app_name(event.app)) in self.apps:
                return "app"
        if self.titles is not None:
            for title in _titles(event.payload):
                if self.titles.search(title):
                    return "title"
        return None


def _titles(payload: JSONDict) -> list[str]:
    found = []
    for key, inner in (("meta", "windowTitle"), ("observation", "subtitle")):
        holder = payload.get(key)
        value = holder.get(inner) if isinstance(holder, dict) else None
        if isinstance(value, str) and value:
            found.append(value)
    return found


class Exclusions:
    """The exclusion rule and how many events it dropped, by reason (``app``, ``title``).

    Checked by the transport on its event loop; the counts may be read from any thread.
    """

    def __init__(self, rule: ExclusionRule | None = None) -> None:
        self.rule = rule or ExclusionRule()
        self._lock = threading.Lock()
        self._counts: Counts = {"app": 0, "title": 0}

    def check(self, event: SensePost) -> str | None:
        """Why ``event`` is excluded (and count it), or ``None`` to keep it."""
        if not self.rule.active:
            return None
        reason = self.rule.reason(event)
        if reason is not None:
            with self._lock:
                self._counts[reason] += 1
        return reason

    def counts(self) -> Counts:
        """Events dropped since start, by reason: ``{"app": n, "title": n}``."""
        with self._lock:
            return dict(self._counts)
