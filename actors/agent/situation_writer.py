"""SituationWriter: writes SITUATION.md for Sinain's OpenClaw plugin after each successful tick.

Where it lives, and why. The file is the last step of a tick, and the one that touches a disk
the relay does not own (a workspace in the user's home, maybe a synced or network folder), so
it is an actor of its own under the agent supervisor, started only when
``RELAY_SITUATION_FILE`` is set:

* the digest store, once it has committed an entry, posts the entry and the tick's window to
  the writer's outbox (a :class:`~actors.kernel.doorbell.Doorbell` that keeps the newest
  situation only, across the writer's restarts) and goes on: the tick's reply (the
  LLM caller tells the Ticker as soon as it has told the digest store), ingestion and every
  read never wait for the disk;
* a write that fails (a read-only disk, no permission, a directory at the path) is logged,
  and reported as an event (:mod:`actors.agent.core.events`) that the digest store counts
  with the agent's other counters (``/health.agent``,
  ``/metrics``), and changes nothing else; the writer does not crash for it, so no
  supervisor restarts anything;
* a write that hangs holds only this actor's thread. It has no ping deadline on purpose:
  replacing it would leave a thread stuck in the kernel per attempt, while waiting costs
  nothing, since the outbox keeps only the newest situation. When the disk answers, the file
  shows the newest tick.

The text is rendered here, off the tick's path, by
:func:`actors.agent.core.situation.render_situation` from the entry and the window the tick's
prompt was made from.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from actors.agent.core.events import AgentEvent, SituationWriteFailed
from actors.agent.core.situation import (
    Situation,
    lines_removed,
    render_situation,
    without_span,
    written_at,
)
from actors.common.forgetting import Forgotten, Span
from actors.core.error_text import safe_error_text
from actors.core.errors import ActorUnavailable
from actors.kernel.base import ChildHandle, RelayActor, Reporter
from actors.kernel.doorbell import Doorbell
from actors.kernel.file_modes import risks_on_disk
from actors.kernel.listeners import Listeners

log = structlog.get_logger("relay")


@dataclass(frozen=True, slots=True)
class WritePending:
    """Outbox -> SituationWriter: a situation waits in the outbox."""


SituationOutbox = Doorbell[Situation]
"""The digest store's outbox to the writer: the newest situation only, across the writer's
restarts (the store posts after each commit, the writer takes when rung)."""


def situation_outbox(writer: ChildHandle[Any]) -> SituationOutbox:
    """An outbox that rings the writer behind ``writer`` with :class:`WritePending`."""
    return Doorbell(writer, WritePending())


def warn_if_replaceable(path: str) -> None:
    """Log a warning for each directory on the way to ``path`` where another user could put
    a file of their own in its place."""
    for risk in risks_on_disk(path, "RELAY_SITUATION_FILE"):
        log.warning(
            "situation.file_replaceable_by_others",
            actor="root",
            path=path,
            directory=risk.directory,
            mode=risk.mode,
            why=risk.why,
            fix=risk.fix,
            note="the plugin reads SITUATION.md as its context: a file another user puts there "
            "would speak to it in the user's name",
        )


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` by a file holding ``text`` (UTF-8), whole or not at all.

    The text goes to a temporary file in the same directory (created if missing), flushed to
    disk, then renamed over ``path``: a reader sees the old file or the new one, never a part.
    If anything fails, the temporary file is removed and the old file is left as it was. The
    file keeps the temporary file's mode, readable and writable by the relay's user only: it
    holds what was on the user's screen.

    Raises:
        OSError: the directory cannot be made or written, or ``path`` cannot be replaced
            (a directory stands there, the file system is read-only or full).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class SituationWriter(RelayActor):
    """Writes the newest situation the outbox holds to ``path``."""

    name = "situation"

    def __init__(
        self,
        *,
        path: str,
        outbox: SituationOutbox,
        events: Listeners[AgentEvent] | None = None,
        report: Reporter | None = None,
    ) -> None:
        super().__init__(report=report)
        self._path = Path(path)
        self._outbox = outbox
        self._events: Listeners[AgentEvent] = events or Listeners()
        """Where a failed write is reported (the digest store counts it)."""
        self._shown: Situation | None = None
        """What the file holds, once this incarnation wrote it."""

    def started(self) -> None:
        """Take what was posted while no incarnation ran (its ring found none)."""
        if self._outbox.waiting is not None:
            self.actor_ref.tell(WritePending())

    def on_receive(self, message: Any) -> Any:
        """Write on :class:`WritePending`."""
        if isinstance(message, WritePending):
            self.write_pending()
            return None
        return super().on_receive(message)

    def write_pending(self) -> None:
        """Render and write the situation waiting in the outbox, if any.

        A failure is logged and reported as an event (the digest store counts it); the writer
        lives on, and the next tick tries again.
        """
        situation = self._outbox.take()
        if situation is None:
            return
        try:
            write_atomically(self._path, render_situation(situation.entry, situation.window))
            self._shown = situation
        except OSError as exc:
            self._failed(situation, safe_error_text(exc))
        except Exception as exc:  # a text that cannot be rendered: logged and counted like a
            # failed write, so that it never restarts the agent's supervisor tick after tick
            self._log.exception("situation.render_failed", tick_id=situation.tick_id)
            self._failed(situation, safe_error_text(exc))
        else:
            self._log.debug(
                "situation.written",
                path=str(self._path),
                tick_id=situation.tick_id,
                entry_id=situation.entry.id,
            )

    def forget(self, span: Span, reach_ms: int) -> Forgotten:
        """Rewrite the file without the lines that quote what arrived in ``span``: the
        window's screen lines and transcripts, and the digest of an entry in it (a situation
        waiting in the outbox is written first, so none is written after with them).

        A file this incarnation did not write (the relay restarted since) is not known line
        by line: it is removed when the moment it was written for (and its window, ``reach_ms``
        before) may meet ``span``.

        Raises:
            ActorUnavailable: the file could not be rewritten or removed.
        """
        self.write_pending()
        try:
            return self._forget(span, reach_ms)
        except OSError as exc:
            msg = f"SITUATION.md could not be rewritten: {safe_error_text(exc)}"
            raise ActorUnavailable(msg) from exc

    def _forget(self, span: Span, reach_ms: int) -> Forgotten:
        if self._shown is None:
            try:
                text = self._path.read_text(encoding="utf-8")
            except FileNotFoundError:
                return Forgotten()
            at = written_at(text)
            if at is not None and (at < span.since or at - reach_ms > span.until):
                return Forgotten()
            self._path.unlink()
            return Forgotten(situation_lines=len(text.splitlines()))
        before = render_situation(self._shown.entry, self._shown.window)
        kept = without_span(self._shown, span)
        after = render_situation(kept.entry, kept.window)
        if after != before:
            write_atomically(self._path, after)
        self._shown = kept
        return Forgotten(situation_lines=lines_removed(before, after))

    def _failed(self, situation: Situation, error: str) -> None:
        self._log.warning(
            "situation.write_failed",
            path=str(self._path),
            tick_id=situation.tick_id,
            entry_id=situation.entry.id,
            error=error,
        )
        self._events.send(SituationWriteFailed())
