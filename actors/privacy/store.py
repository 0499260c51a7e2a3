"""PrivacyStore: the owner of the privacy controls (``GET``/``POST /privacy``).

It keeps what was set at runtime as one row of ``privacy.db`` and publishes the
:class:`~actors.core.exclusion.PrivacyState` in force after each commit, so that readers
(``POST /sense`` and ``POST /feed`` on every request, the ticker, the audio captures, the
overlay's status, the digest store's pruning) take it without a message, and a client that got
its answer to ``POST /privacy`` finds its change in force at its next request. A timed pause
ends by itself: a timer on the injected clock notes its end, stores it and publishes it.

Nothing private is logged: a change is logged with the counts of app names and title
patterns, never the names or the patterns.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from typing import Any

import msgspec
import pykka

from actors.core.control_bodies import PrivacyUpdate
from actors.core.exclusion import PrivacyState, StoredPrivacy, changed, expired, starting
from actors.kernel.base import Reporter
from actors.kernel.clock import Cancel, Clock
from actors.kernel.durable import DurableActor
from actors.kernel.published import Published
from actors.kernel.storage import Store


@dataclass(frozen=True, slots=True)
class _PauseOver:
    """The timed pause's end came (sent by the store's own timer)."""

    until_ms: int


class PrivacyStore(DurableActor):
    """Owns the privacy controls and ``privacy.db``."""

    name = "privacy"

    def __init__(
        self,
        *,
        clock: Clock,
        store: Store,
        start: PrivacyState,
        published: Published[PrivacyState],
        report: Reporter | None = None,
    ) -> None:
        """``start``: the environment's values, over which what was set at runtime goes."""
        super().__init__(store=store, report=report)
        self._clock = clock
        self._start = start
        self._published = published
        self._stored = StoredPrivacy()
        self._state = start
        self._timer: Cancel | None = None

    def restore(self, db: sqlite3.Connection) -> None:
        """Read what was set at runtime; a timed pause that ended meanwhile is over."""
        row = db.execute("SELECT value FROM privacy WHERE key = 'controls'").fetchone()
        if row is not None:
            self._stored = msgspec.json.decode(row[0], type=StoredPrivacy)
        now = self._clock.now_ms()
        self._state = starting(self._start, self._stored, now)
        if self._stored.paused and not self._state.paused:
            self._stored = expired(self._stored)
        if row is not None:
            self._log.info("privacy.restored", **_counts(self._state))

    def committed(self) -> None:
        """Publish the controls in force, and arm the end of a timed pause."""
        if self._published.value != self._state:
            self._published.publish(self._state)
        self._arm()

    def stopped(self) -> None:
        """Disarm the pause's timer, then commit and close."""
        self._disarm()
        super().stopped()

    def on_receive(self, message: Any) -> Any:
        """The timed pause's end."""
        if isinstance(message, _PauseOver):
            if self._state.paused and self._state.paused_until_ms == message.until_ms:
                self._state = PrivacyState.of(
                    self._state.exclude_apps,
                    self._state.exclude_titles,
                    self._state.retention_days,
                )
                self._stored = expired(self._stored)
                self._save()
                self._log.info("privacy.resumed", why="the timed pause ended")
            return None
        return super().on_receive(message)

    def controls(self) -> PrivacyState:
        """The controls in force."""
        return self._state

    def change(self, update: PrivacyUpdate) -> PrivacyState:
        """Apply ``update`` (checked as it was decoded); answered once it is stored and
        published."""
        before = self._state
        self._state, self._stored = changed(before, self._stored, update, self._clock.now_ms())
        self._save()
        self._log.info("privacy.changed", was_paused=before.paused, **_counts(self._state))
        return self._state

    def _save(self) -> None:
        self._write(
            "INSERT OR REPLACE INTO privacy (key, value) VALUES ('controls', ?)",
            (msgspec.json.encode(self._stored),),
        )

    def _arm(self) -> None:
        self._disarm()
        until = self._state.paused_until_ms
        if not self._state.paused or until is None:
            return
        ref = self.actor_ref

        def fire() -> None:
            with contextlib.suppress(pykka.ActorDeadError):  # its successor has its own timer
                ref.tell(_PauseOver(until))

        delay_s = max(0.0, (until - self._clock.now_ms()) / 1000)
        self._timer = self._clock.call_later(delay_s, fire)

    def _disarm(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer()


def _counts(state: PrivacyState) -> dict[str, object]:
    """What a log line may say of the controls: no app name, no title pattern."""
    return {
        "paused": state.paused,
        "paused_until_ms": state.paused_until_ms,
        "exclude_apps": len(state.exclude_apps),
        "exclude_titles": len(state.exclude_titles),
        "retention_days": state.retention_days,
    }
