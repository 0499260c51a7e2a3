"""The embedded SQLite store: where it lives, its schemas, and how it recovers.

One database file per owning actor, so no actor ever waits for another's write lock and
each file has one owner: ``feed.db`` (FeedBuffer), ``sense.db`` (SenseBuffer), ``agent.db``
(DigestStore) and ``privacy.db`` (PrivacyStore), in WAL mode, in ``RELAY_DATA_DIR``. Each
file records a random token when it is created; the **epoch** is a hash of the tokens of the
three that hand out the ids clients follow (:data:`EPOCH_PARTS`), so it changes exactly when
some part of that data is new (first start, a wiped directory, a replaced corrupt file).

``:memory:`` puts the same files in a temporary directory (in ``/dev/shm`` where there is
one) that :func:`close_storage` removes: the data lives as long as the process, and actors
that restart get their state back all the same.

A file that cannot be read at start is moved aside with a loud log line and a fresh one is
created, so the relay always serves; ``/health.storage`` says what happened.

One process at a time: :func:`open_storage` takes an exclusive ``flock`` on ``relay.lock`` in
the directory before it reads a file, and holds it until :func:`close_storage`. Two relays on
one directory would hand out the same ids and interleave their rows, and a second one could
move aside a file the first is writing; the second is refused instead
(:class:`~actors.kernel.data_dir.DataDirInUse`). The kernel drops the lock when its process
ends, however it ends, so a killed relay never leaves a stale lock behind. The lock is per
open file: a second open in the same process is refused too.

Only the relay's user may read the data: a directory it creates is ``0700``, and every file
it makes there is ``0600`` whatever the umask (the lock file, and each database file,
created before SQLite opens it, since SQLite gives a database's ``-wal``, ``-shm`` and
journal files the database file's mode). A directory that already exists is the user's
choice and is left as it is; if others may enter it, a warning says so at every start, with
the command that fixes it. The relay's own files in it that others may read (left by a
crash or an older relay) are made ``0600``, with an info line naming them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import structlog

from actors.kernel.data_dir import (
    DirectoryLock,
    check_privacy,
    lock_directory,
    make_private_directory,
)
from actors.kernel.file_modes import PRIVATE_FILE
from actors.kernel.schemas import MIGRATIONS, StorageError, migrate
from actors.kernel.scrubber import scrubbed

log = structlog.get_logger("relay")

R = TypeVar("R")

MEMORY = ":memory:"
SYNC_MODES = ("full", "normal")
EPOCH_PARTS = ("feed", "sense", "agent")
"""The files whose ids clients follow: a new one of them is a new epoch."""


@dataclass(frozen=True, slots=True)
class Store:
    """How the owning actor reaches its database file; the same for every incarnation."""

    path: str
    sync: str = "full"


@dataclass(frozen=True, slots=True)
class StorageInfo:
    """Where the data lives, its epoch, and what happened when it was opened."""

    directory: str
    in_memory: bool
    sync: str
    epoch: str
    stores: dict[str, Store] = field(repr=False)
    created: tuple[str, ...] = ()
    """Parts whose file was new at this start."""
    moved_aside: tuple[str, ...] = ()
    """Unreadable files moved aside at this start."""
    problem: str | None = None
    """Why ``RELAY_DATA_DIR`` could not be used (the data is then in memory only)."""
    lock: DirectoryLock | None = field(default=None, repr=False, compare=False)
    """The data directory's lock, held until :func:`close_storage` (None in memory)."""

    def to_json(self) -> dict[str, object]:
        """The ``/health.storage`` object."""
        return {
            "path": MEMORY if self.in_memory else self.directory,
            "epoch": self.epoch,
            "sync": self.sync,
            "schemaVersions": {part: len(MIGRATIONS[part]) for part in MIGRATIONS},
            "recovered": bool(self.moved_aside),
            "movedAside": list(self.moved_aside),
            "problem": self.problem,
        }


CACHE_KIB = 256
"""SQLite's page cache per connection, in KiB (its default is 2000). The rings live in
memory and the files are read only at start and for history ranges, so a small cache costs
no speed and keeps the resident size down."""


def _create_private(path: str | Path) -> None:
    """Create ``path`` empty and ``0600`` (whatever the umask) if it does not exist.

    Raises:
        OSError: it cannot be created.
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, PRIVATE_FILE)
    finally:
        os.close(fd)


def connect(store: Store) -> sqlite3.Connection:
    """A connection for the calling thread, in autocommit mode (transactions are explicit).

    A missing database file is created ``0600`` first, so SQLite's files beside it are too.

    Raises:
        sqlite3.OperationalError: the file cannot be created or opened.
    """
    try:
        _create_private(store.path)
    except OSError as exc:
        msg = f"unable to create {store.path}: {exc}"
        raise sqlite3.OperationalError(msg) from exc
    db = sqlite3.connect(store.path, isolation_level=None, timeout=10.0)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={store.sync.upper()}")
        # Builds differ (Debian's SQLite overwrites every deleted byte, upstream's none); FAST
        # zeroes what it can without extra writes (ON writes each pruned payload again, twice).
        # Deleted text can stay
        # in free pages and in old WAL frames, with either setting, until they are reused;
        # what the user asks to forget is deleted with ON and the WAL truncated (erase).
        db.execute("PRAGMA secure_delete=FAST")
        db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    except BaseException:
        db.close()
        raise
    return db


def read_rows(store: Store, sql: str, params: Sequence[Any] = ()) -> list[Any]:
    """The rows of one query on a read-only connection of its own.

    Safe from any thread: one statement sees one committed state of the file, and never
    waits for the actor that owns it (WAL), nor holds a reader past its answer.
    """
    db = sqlite3.connect(f"{Path(store.path).as_uri()}?mode=ro", uri=True)
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()


def erase(db: sqlite3.Connection, work: Callable[[sqlite3.Connection], R]) -> R:
    """Run ``work`` (deletes) in one transaction on ``db``, with no copy of what it deleted
    left in the files once this returns: ``secure_delete=ON`` zeroes each deleted cell and
    freed page (``FAST`` leaves freed pages as they were), and ``wal_checkpoint(TRUNCATE)``
    writes the pages back and empties the WAL, where their older copies were. It waits (the
    connection's busy timeout) for readers of an older state to finish.

    Raises:
        sqlite3.Error: ``work`` failed (rolled back), or the commit did.
    """
    db.execute("PRAGMA secure_delete=ON")
    try:
        db.execute("BEGIN")
        try:
            result = work(db)
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise
    finally:
        db.execute("PRAGMA secure_delete=FAST")
    busy = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    if busy:
        log.warning("storage.checkpoint_busy", path=_path_of(db))
    return result


def _path_of(db: sqlite3.Connection) -> str:
    row = db.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row is not None else ""


def _open_part(store: Store, part: str) -> tuple[str, bool]:
    """Check, migrate and return (creation token, created now) of one file."""
    db = connect(store)
    try:
        check = db.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            msg = f"quick_check: {check}"
            raise sqlite3.DatabaseError(msg)
        migrate(db, part)
        row = db.execute("SELECT value FROM meta WHERE key = 'token'").fetchone()
        if row is not None:
            return str(row[0]), False
        token = f"{int(time.time() * 1000):x}-{secrets.token_hex(6)}"
        db.execute("INSERT INTO meta (key, value) VALUES ('token', ?)", (token,))
        return token, True
    finally:
        db.close()


def _move_aside(path: Path) -> str:
    """Rename ``path`` and its ``-wal`` and ``-shm`` files; the copies are ``0600``, since
    whatever can still be read in them is the user's."""
    target = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
    for suffix in ("", "-wal", "-shm"):
        part = Path(f"{path}{suffix}")
        if part.exists():
            moved = part.replace(Path(f"{target}{suffix}"))
            with contextlib.suppress(OSError):  # another user's file: the rename was enough
                os.chmod(moved, PRIVATE_FILE)
    return str(target)


def _memory_directory() -> Path:
    shm = Path("/dev/shm")  # noqa: S108 - mkdtemp makes a private (0700) directory in it
    parent = str(shm) if shm.is_dir() else None
    return Path(tempfile.mkdtemp(prefix="sinain-relay-", dir=parent))


def open_storage(data_dir: str, sync: str = "full") -> StorageInfo:
    """Lock ``data_dir`` and prepare its three database files (or the same in memory).

    The lock is taken before any file is read, and released again if the opening fails;
    on success it is held until :func:`close_storage`.

    Raises:
        DataDirInUse: another relay (or another open in this process) holds the directory.
        StorageError: the directory cannot be created or written, or a schema is newer.
    """
    in_memory = data_dir == MEMORY
    lock = None
    if in_memory:
        directory = _memory_directory()
        sync = "off"
    else:
        directory = Path(data_dir).expanduser().resolve()
        make_private_directory(directory)
        lock = lock_directory(directory)
    try:
        if lock is not None:
            check_privacy(directory)
        info = _open_parts(directory, sync)
    except BaseException:
        if lock is not None:
            lock.release()
        if in_memory:
            shutil.rmtree(directory, ignore_errors=True)
        raise
    return replace(info, in_memory=in_memory, lock=lock)


def _open_parts(directory: Path, sync: str) -> StorageInfo:
    """Check, migrate (or move aside and recreate) every file of a locked directory."""
    stores: dict[str, Store] = {}
    tokens: list[str] = []
    created: list[str] = []
    moved: list[str] = []
    for part in MIGRATIONS:
        path = directory / f"{part}.db"
        store = Store(path=str(path), sync=sync)
        try:
            token, new = _open_part(store, part)
        except StorageError:
            raise
        except sqlite3.DatabaseError as exc:
            if not path.exists():
                msg = f"cannot create {path}: {exc}"
                raise StorageError(msg) from exc
            aside = _move_aside(path)
            moved.append(aside)
            log.critical(
                "storage.corrupt_database_moved_aside",
                actor="root",
                path=str(path),
                moved_to=aside,
                error=scrubbed(str(exc)),
            )
            try:
                token, new = _open_part(store, part)
            except sqlite3.Error as again:
                msg = f"cannot create a fresh {path}: {again}"
                raise StorageError(msg) from again
        stores[part] = store
        if part in EPOCH_PARTS:
            tokens.append(token)
        if new:
            created.append(part)
    epoch = hashlib.sha256("|".join(tokens).encode()).hexdigest()[:16]
    return StorageInfo(
        directory=str(directory),
        in_memory=False,
        sync=sync,
        epoch=epoch,
        stores=stores,
        created=tuple(created),
        moved_aside=tuple(moved),
    )


def with_problem(info: StorageInfo, problem: str) -> StorageInfo:
    """``info`` noting why the configured directory could not be used."""
    return replace(info, problem=problem)


def close_storage(info: StorageInfo) -> None:
    """Release the data directory's lock, or remove an in-memory store's temporary directory.

    The files of a data directory stay. Call it once the actors that write them have stopped;
    a second call does nothing.
    """
    if info.lock is not None:
        info.lock.release()
    if info.in_memory:
        shutil.rmtree(info.directory, ignore_errors=True)
