"""DurableActor: an actor whose state is also in SQLite, written with group commit.

A write opens a transaction and tells the actor itself to flush. That message queues behind
everything already in the mailbox, so one commit covers a whole burst of writes: durability
costs one commit (and, with ``RELAY_SYNC=full``, one fsync) per burst, not per request.

While a transaction is open, the answers to :class:`~actors.kernel.base.Call` messages (what the
HTTP transport waits for) are held and released only after the commit: an HTTP 200 means
the data is on disk. If the commit fails, the held callers get the error (HTTP 503) and the
actor dies, so that its supervisor restarts it from what the database really holds.

A caller that waits for an answer held for the commit waits past its own timeout (it was
begun, so it will be stored: ``transport.shell.bridge``). Should the supervisor abandon the actor
as hung meanwhile, the held callers get the error at once and this incarnation never commits
again (its writes are rolled back): each caller is answered once, and truly. A commit under
way when the actor is abandoned is let finish, and answers its callers itself. When the hung
call comes back, the incarnation closes its connection on its way out, so that its open
transaction does not hold the database's write lock from its successor.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pykka

from actors.kernel.base import RelayActor, Reporter
from actors.kernel.errors import ActorUnavailable
from actors.kernel.storage import Store, connect, erase

R = TypeVar("R")

MAX_BATCH = 512
"""Writes in one transaction, about: the call that reaches it commits when it has finished,
so a larger burst commits in several."""
MAX_ROWS_PER_INSERT = 128
"""Rows in one INSERT at most (a power of two; SQLite allows 32766 parameters)."""


@dataclass(frozen=True, slots=True)
class _Flush:
    """Commit the open transaction (sent by the actor to itself)."""


@dataclass(frozen=True, slots=True)
class Prune:
    """Delete what the actor no longer keeps (sent by itself or by a timer, never in a request)."""


class DurableActor(RelayActor):
    """Base of the actors that own persistent state (the buffers and the digest store).

    Subclasses load their state in :meth:`restore`, write through :meth:`_write`, and may
    publish what is durable in :meth:`committed`.
    """

    def __init__(self, *, store: Store, report: Reporter | None = None) -> None:
        super().__init__(report=report)
        self._store = store
        self._db: sqlite3.Connection | None = None
        self._in_tx = False
        self._writes = 0
        self._held: list[tuple[concurrent.futures.Future[Any], Any]] = []
        self._failed = False
        self._prune_queued = False
        self._commit_lock = threading.RLock()
        """Held by a commit and by the supervisor letting the callers go, never both."""
        self._abandoned = False

    def started(self) -> None:
        """Open this actor's connection and load its state."""
        self._db = connect(self._store)
        self.restore(self._db)
        self.committed()

    def restore(self, db: sqlite3.Connection) -> None:
        """Load the state this actor owns (runs in the actor's thread, before any message)."""

    def committed(self) -> None:
        """Runs after :meth:`restore` and after each commit, before the held answers go out:
        the place to publish a snapshot that readers may see
        (:mod:`actors.kernel.published`)."""

    def stopped(self) -> None:
        """Commit what is pending (or, after a crash, drop it) and close the connection."""
        db, self._db = self._db, None
        if db is None:
            return
        try:
            if self._in_tx and not self._failed:
                self._commit_on(db)
            elif self._in_tx:
                db.execute("ROLLBACK")
                self._fail_held(ActorUnavailable(f"actor {self.name} crashed before its commit"))
        finally:
            db.close()

    def let_callers_go(self) -> None:
        """As :meth:`RelayActor.let_callers_go`; also the answers held for the commit, and no
        commit from now on. A commit under way (it holds the lock) answers them itself."""
        if not self._commit_lock.acquire(blocking=False):
            return
        try:
            self._abandoned = True
            super().let_callers_go()
            self._fail_held(ActorUnavailable(f"actor {self.name} hung before its commit; retry"))
        finally:
            self._commit_lock.release()

    def loop_ended(self) -> None:
        """The last step on this actor's thread, whatever ended its loop. After a normal
        stop or a crash :meth:`stopped` has closed the connection; an abandoned incarnation
        whose call came back never runs it, so here it rolls back what it wrote since its
        last commit and closes the connection. Left open, the transaction would hold
        SQLite's write lock from the successor until the garbage collector found it."""
        db, self._db = self._db, None
        if db is not None:
            try:
                self._fail_held(ActorUnavailable(f"actor {self.name} hung before its commit"))
                if self._in_tx:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
            finally:
                db.close()
        super().loop_ended()

    def on_failure(self, *args: Any) -> None:
        """Pending writes of a crashed actor are not committed: their callers never got a 200."""
        self._failed = True
        super().on_failure(*args)

    def inject_fault(self, kind: str, seconds: float = 0.0) -> None:
        """As :meth:`RelayActor.inject_fault`; a hang commits first, so the drill stalls this
        actor without also holding its database's write lock."""
        if kind == "hang" and self._in_tx and self._db is not None:
            self._commit_on(self._db)
        super().inject_fault(kind, seconds)

    # -- writing -----------------------------------------------------------------------------

    def _write(self, sql: str, params: Iterable[Any] = ()) -> None:
        """Run one statement in the current transaction, opening one if needed."""
        db = self._transaction()
        db.execute(sql, tuple(params))
        self._wrote(db, 1)

    def _insert(
        self, table: str, columns: tuple[str, ...], rows: Sequence[tuple[Any, ...]]
    ) -> None:
        """Insert ``rows`` in the current transaction with a few multi-row statements.

        ``executemany`` would step once per row, and SQLite releases the GIL at every step:
        while the event loop is busy, each step's return waits for the GIL for up to the
        switch interval, so a burst's commit (and every answer it holds) would wait that
        many times over. Here a burst takes one statement per set bit of its length
        (16 + 4 rows for 20), and the statements of each size are cached by SQLite's
        statement cache.
        """
        db = self._transaction()
        done = 0
        for size in _chunk_sizes(len(rows)):
            chunk = rows[done : done + size]
            db.execute(_insert_sql(table, columns, size), [v for row in chunk for v in row])
            done += size
        self._wrote(db, len(rows))

    def _transaction(self) -> sqlite3.Connection:
        db = self._db
        assert db is not None, "started() opened the connection"
        if not self._in_tx:
            db.execute("BEGIN")
            self._in_tx = True
            # A write made while stopping has no mailbox to flush it: stopped() commits it.
            with contextlib.suppress(pykka.ActorDeadError):
                self.actor_ref.tell(_Flush())
        return db

    def _wrote(self, db: sqlite3.Connection, count: int) -> None:  # noqa: ARG002
        self._writes += count

    def _deliver(self, reply: concurrent.futures.Future[Any], result: Any) -> None:
        """Hold the answer of a call that wrote until its commit.

        A transaction of :data:`MAX_BATCH` writes or more commits here, once the call that
        filled it has finished: never in the middle of a method, which may still be changing
        the state that :meth:`committed` publishes.
        """
        with self._commit_lock:  # the supervisor lets the callers go before or after, not amid
            if self._in_tx and self._writes >= MAX_BATCH and self._db is not None:
                self._commit_on(self._db)
            if self._in_tx and not self._abandoned:
                self._held.append((reply, result))
                return
            super()._deliver(reply, result)  # a no-op once its caller was let go

    def _erase(self, work: Callable[[sqlite3.Connection], R]) -> R:
        """Run ``work`` (deletes) in a transaction of its own, so that their bytes leave the
        files before this returns: what is pending commits first, the deletes run with
        ``secure_delete=ON`` (freed pages are zeroed, which ``FAST`` leaves as they were),
        and a checkpoint that truncates the WAL takes the older copies of the pages with it.

        The caller drops what it holds in memory and publishes (:meth:`committed`) after.

        Raises:
            sqlite3.Error: the deletes failed (rolled back) or could not be committed.
        """
        db = self._db
        assert db is not None, "started() opened the connection"
        if self._in_tx:
            self._commit_on(db)
        return erase(db, work)

    def prune(self) -> None:
        """Delete rows this actor no longer keeps (runs as its own message)."""

    def _request_prune(self) -> None:
        """Queue one :class:`Prune` message, so no request pays for the delete."""
        if not self._prune_queued:
            self._prune_queued = True
            self.actor_ref.tell(Prune())

    def on_receive(self, message: Any) -> Any:
        """Commit on :class:`_Flush`; prune on :class:`Prune`."""
        if isinstance(message, _Flush):
            if self._in_tx and self._db is not None:
                self._commit_on(self._db)
            return None
        if isinstance(message, Prune):
            self._prune_queued = False
            self.prune()
            return None
        return super().on_receive(message)

    def _commit_on(self, db: sqlite3.Connection) -> None:
        with self._commit_lock:
            if self._abandoned:  # its callers were let go: what they sent is not stored
                self._in_tx = False
                db.execute("ROLLBACK")
                return
            try:
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._in_tx = False
                self._writes = 0
                with contextlib.suppress(sqlite3.Error):  # the failed commit may have ended it
                    db.execute("ROLLBACK")
                self._fail_held(ActorUnavailable(f"actor {self.name} could not store: {exc}"))
                raise
            self._in_tx = False
            self._writes = 0
            self.committed()
            held, self._held = self._held, []
        for reply, result in held:
            reply.set_result(result)

    def _fail_held(self, error: Exception) -> None:
        held, self._held = self._held, []
        for reply, _ in held:
            with contextlib.suppress(concurrent.futures.InvalidStateError):  # let go already
                reply.set_exception(error)


def _chunk_sizes(count: int) -> list[int]:
    """Powers of two, largest first, at most :data:`MAX_ROWS_PER_INSERT`, that sum to ``count``."""
    sizes = [MAX_ROWS_PER_INSERT] * (count // MAX_ROWS_PER_INSERT)
    rest = count % MAX_ROWS_PER_INSERT
    size = MAX_ROWS_PER_INSERT
    while rest:
        size //= 2
        if rest >= size:
            sizes.append(size)
            rest -= size
    return sizes


@functools.cache
def _insert_sql(table: str, columns: tuple[str, ...], rows: int) -> str:
    marks = "(" + ", ".join("?" * len(columns)) + ")"
    values = ", ".join([marks] * rows)
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES {values}"  # noqa: S608 (our names)
