"""Exclusion, and the privacy controls it is part of, as plain data.

:class:`ExclusionRule` (``RELAY_EXCLUDE_APPS``, ``RELAY_EXCLUDE_TITLES``, or the lists
``POST /privacy`` set) and its counter :class:`Exclusions` drop whole screen events of
excluded apps or windows. That is the transport's decision: ``POST /sense`` answers
``{"ok": true, "dropped": "excluded"}`` before anything reaches an actor, so such an event is
never stored, served, streamed nor seen by a tick.

:class:`PrivacyState` is every control in force (the pause, the exclusion lists and their
rule, the retention), as the privacy store (:mod:`actors.privacy.store`) publishes it and
every reader takes it without a message: ``POST /sense`` and ``POST /feed`` on every request,
the ticker, the captures, the digest store at each pruning, the overlay's status. The
environment's values are the starting point; what was set at runtime
(:class:`StoredPrivacy`) is kept by the store and wins over them at the next start.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec
import re2
from msgspec import UNSET, UnsetType
from msgspec.structs import replace

from actors.core.control_bodies import PrivacyUpdate
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
    """How many events an exclusion rule dropped, by reason (``app``, ``title``); the rule is
    this one's, or the one in force that the caller hands over (the privacy controls').

    Checked by the transport on its event loop; the counts may be read from any thread.
    """

    def __init__(self, rule: ExclusionRule | None = None) -> None:
        self.rule = rule or ExclusionRule()
        self._lock = threading.Lock()
        self._counts: Counts = {"app": 0, "title": 0}

    def check(self, event: SensePost, rule: ExclusionRule | None = None) -> str | None:
        """Why ``event`` is excluded by ``rule`` (by default this one's), and count it; or
        ``None`` to keep it."""
        rule = rule or self.rule
        if not rule.active:
            return None
        reason = rule.reason(event)
        if reason is not None:
            with self._lock:
                self._counts[reason] += 1
        return reason

    def counts(self) -> Counts:
        """Events dropped since start, by reason: ``{"app": n, "title": n}``."""
        with self._lock:
            return dict(self._counts)


# -- the privacy controls ---------------------------------------------------------------------

MINUTE_MS = 60_000


def titles_pattern(titles: tuple[str, ...]) -> str:
    """One expression that finds a title any of ``titles`` finds (``""``: none)."""
    if len(titles) == 1:
        return titles[0]
    return "|".join(f"(?:{title})" for title in titles)


@dataclass(frozen=True, slots=True)
class PrivacyState:
    """The controls in force; ``rule`` is the exclusion rule of the two lists."""

    paused: bool = False
    paused_until_ms: int | None = None
    """When a timed pause ends (epoch ms); ``None``: until resumed."""
    exclude_apps: tuple[str, ...] = ()
    exclude_titles: tuple[str, ...] = ()
    retention_days: float = 7.0
    rule: ExclusionRule = field(default_factory=ExclusionRule, compare=False)

    @classmethod
    def of(
        cls,
        apps: tuple[str, ...] = (),
        titles: tuple[str, ...] = (),
        retention_days: float = 7.0,
        *,
        paused: bool = False,
        paused_until_ms: int | None = None,
    ) -> PrivacyState:
        """The state of these values, its rule compiled."""
        rule = ExclusionRule.of(apps, titles_pattern(titles))
        return cls(paused, paused_until_ms, apps, titles, retention_days, rule)

    def paused_at(self, now_ms: int) -> bool:
        """Whether capture is paused at ``now_ms``: a timed pause is over once its time came,
        even before the store has noted it."""
        return self.paused and (self.paused_until_ms is None or now_ms < self.paused_until_ms)


class StoredPrivacy(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """What was set at runtime, as the privacy store keeps it: a field never set is left out,
    and the environment's value stands for it."""

    paused: bool = False
    paused_until_ms: int | None = None
    exclude_apps: tuple[str, ...] | UnsetType = UNSET
    exclude_titles: tuple[str, ...] | UnsetType = UNSET
    retention_days: float | UnsetType = UNSET


def starting(start: PrivacyState, stored: StoredPrivacy, now_ms: int) -> PrivacyState:
    """The state at a start: the environment's ``start`` with what was set at runtime over it
    (a timed pause that ended meanwhile is over)."""
    paused = stored.paused and (stored.paused_until_ms is None or now_ms < stored.paused_until_ms)
    return PrivacyState.of(
        start.exclude_apps if stored.exclude_apps is UNSET else stored.exclude_apps,
        start.exclude_titles if stored.exclude_titles is UNSET else stored.exclude_titles,
        start.retention_days if stored.retention_days is UNSET else stored.retention_days,
        paused=paused,
        paused_until_ms=stored.paused_until_ms if paused else None,
    )


def changed(
    state: PrivacyState, stored: StoredPrivacy, update: PrivacyUpdate, now_ms: int
) -> tuple[PrivacyState, StoredPrivacy]:
    """The state and what is kept after ``update`` (checked as it was decoded); the fields it
    leaves out keep their values."""
    paused, until = state.paused_at(now_ms), state.paused_until_ms
    if update.paused is not UNSET:
        paused, until = update.paused, None
    if update.pause_minutes is not UNSET:
        paused, until = True, now_ms + round(update.pause_minutes * MINUTE_MS)
    apps, titles, days = state.exclude_apps, state.exclude_titles, state.retention_days
    kept = stored
    if update.exclude_apps is not UNSET:
        apps = tuple(name.strip() for name in update.exclude_apps if name.strip())
        kept = replace(kept, exclude_apps=apps)
    if update.exclude_titles is not UNSET:
        titles = tuple(title.strip() for title in update.exclude_titles if title.strip())
        kept = replace(kept, exclude_titles=titles)
    if update.retention_days is not UNSET:
        days = update.retention_days
        kept = replace(kept, retention_days=days)
    until = until if paused else None
    kept = replace(kept, paused=paused, paused_until_ms=until)
    new = PrivacyState.of(apps, titles, days, paused=paused, paused_until_ms=until)
    return new, kept


def expired(stored: StoredPrivacy) -> StoredPrivacy:
    """``stored`` after its timed pause ended."""
    return replace(stored, paused=False, paused_until_ms=None)
