"""SituationWriter: writes SITUATION.md for Sinain's OpenClaw plugin after each successful tick.

Where it lives, and why. The file is the last step of a tick, and the one that touches a disk
the relay does not own (a workspace in the user's home, maybe a synced or network folder), so
it is an actor of its own under the agent supervisor, started only when
``RELAY_SITUATION_FILE`` is set:

* the digest store, once it has committed an entry, posts the entry and the tick's window to
  the writer's outbox (:mod:`actors.situation_outbox`) and goes on: the tick's reply (the
  LLM caller tells the Ticker as soon as it has told the digest store), ingestion and every
  read never wait for the disk;
* a write that fails (a read-only disk, no permission, a directory at the path) is logged,
  counted by the digest store with the agent's other counters (``/health.agent``,
  ``/metrics``), and changes nothing else; the writer does not crash for it, so no
  supervisor restarts anything;
* a write that hangs holds only this actor's thread. It has no ping deadline on purpose:
  replacing it would leave a thread stuck in the kernel per attempt, while waiting costs
  nothing, since the outbox keeps only the newest situation. When the disk answers, the file
  shows the newest tick.

The text is rendered here, off the tick's path, by :func:`actors.core.situation.render_situation`
from the entry and the window the tick's prompt was made from.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from actors.core.error_text import safe_error_text
from actors.core.situation import Situation, render_situation
from actors.digest_store import DigestStore
from actors.kernel.base import ChildHandle, RelayActor, Reporter
from actors.situation_outbox import SituationOutbox, WritePending


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
        digest: ChildHandle[DigestStore],
        report: Reporter | None = None,
    ) -> None:
        super().__init__(report=report)
        self._path = Path(path)
        self._outbox = outbox
        self._digest = digest

    def started(self) -> None:
        """Take what was posted while no incarnation ran (its ring found none)."""
        if self._outbox.waiting:
            self.actor_ref.tell(WritePending())

    def on_receive(self, message: Any) -> Any:
        """Write on :class:`WritePending`."""
        if isinstance(message, WritePending):
            self.write_pending()
            return None
        return super().on_receive(message)

    def write_pending(self) -> None:
        """Render and write the situation waiting in the outbox, if any.

        A failure is logged and told to the digest store, which counts it; the writer lives
        on, and the next tick tries again.
        """
        situation = self._outbox.take()
        if situation is None:
            return
        try:
            write_atomically(self._path, render_situation(situation.entry, situation.window))
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

    def _failed(self, situation: Situation, error: str) -> None:
        self._log.warning(
            "situation.write_failed",
            path=str(self._path),
            tick_id=situation.tick_id,
            entry_id=situation.entry.id,
            error=error,
        )
        self._tell_peer(self._digest, DigestStore.record_situation_failure)
