"""The database files' schemas: each file's changes in order, applied at start, and the error
of storage that cannot be used."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from actors.kernel import search_index

Step = tuple[str, ...] | Callable[[sqlite3.Connection], None]
"""One schema change: statements, or a function that makes it on the connection (inside the
step's transaction)."""
_META = "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
MIGRATIONS: dict[str, tuple[Step, ...]] = {
    "feed": (
        (
            _META,
            "CREATE TABLE feed (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL,"
            " text TEXT NOT NULL, priority TEXT NOT NULL, source TEXT)",
        ),
        ("ALTER TABLE feed ADD COLUMN channel TEXT NOT NULL DEFAULT 'stream'",),
    ),
    "sense": (
        (
            _META,
            "CREATE TABLE sense (id INTEGER PRIMARY KEY, received_at INTEGER NOT NULL,"
            " payload BLOB NOT NULL)",
        ),
    ),
    "agent": (
        (
            _META,
            "CREATE TABLE agent_entries (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL,"
            " entry BLOB NOT NULL)",
            "CREATE INDEX agent_entries_ts ON agent_entries (ts)",
            "CREATE TABLE agent_state (key TEXT PRIMARY KEY, value BLOB NOT NULL)",
        ),
        # the full-text index of the entries (nothing without FTS5), filled from those stored;
        # it may run on a file that has it already (RECONCILE also builds a missing one)
        search_index.build,
        # the escalation slot: one row, the pending escalation, its grace list, its counters
        ("CREATE TABLE IF NOT EXISTS escalation_slot (key TEXT PRIMARY KEY, value BLOB NOT NULL)",),
    ),
    # the privacy controls set at runtime: one row, what POST /privacy set
    "privacy": ((_META, "CREATE TABLE privacy (key TEXT PRIMARY KEY, value BLOB NOT NULL)"),),
}
"""Per file, the schema changes in order; ``PRAGMA user_version`` counts those applied."""

RECONCILE: dict[str, Callable[[sqlite3.Connection], None]] = {
    "agent": search_index.reconcile,
}
"""Per file, what runs at every start after the migrations: the parts of a schema that depend
on the SQLite build (FTS5) rather than on the file's version."""


class StorageError(RuntimeError):
    """The data directory cannot be used (the message says why)."""


def migrate(db: sqlite3.Connection, part: str) -> None:
    """Apply the changes of ``part``'s schema that ``db`` has not had yet, each in a
    transaction; then its :data:`RECONCILE` step, if it has one.

    Raises:
        StorageError: the file's schema is newer than this relay's.
    """
    steps = MIGRATIONS[part]
    version: int = db.execute("PRAGMA user_version").fetchone()[0]
    if version > len(steps):
        msg = (
            f"{part}.db has schema version {version}, newer than this relay's {len(steps)}; "
            "run a newer relay or point RELAY_DATA_DIR elsewhere"
        )
        raise StorageError(msg)
    for number in range(version, len(steps)):
        step = steps[number]
        db.execute("BEGIN")
        if callable(step):
            step(db)
        else:
            for statement in step:
                db.execute(statement)
        db.execute(f"PRAGMA user_version = {number + 1}")
        db.execute("COMMIT")
    if part in RECONCILE:
        RECONCILE[part](db)
