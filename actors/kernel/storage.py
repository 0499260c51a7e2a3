"""The embedded SQLite store: where it lives, its schemas, and how it recovers.

One database file per owning actor, so no actor ever waits for another's write lock and
each file has one owner: ``feed.db`` (FeedBuffer), ``sense.db`` (SenseBuffer) and
``agent.db`` (DigestStore), in WAL mode, in ``RELAY_DATA_DIR``. Each file records a random
token when it is created; the **epoch** is a hash of the three, so it changes exactly when
some part of the data is new (first start, a wiped directory, a replaced corrupt file).

``:memory:`` puts the same files in a temporary directory (in ``/dev/shm`` where there is
one) that :func:`close_storage` removes: the data lives as long as the process, and actors
that restart get their state back all the same.

A file that cannot be read at start is moved aside with a loud log line and a fresh one is
created, so the relay always serves; ``/health.storage`` says what happened.

One process at a time: :func:`open_storage` takes an exclusive ``flock`` on ``relay.lock`` in
the directory before it reads a file, and holds it until :func:`close_storage`. Two relays on
one directory would hand out the same ids and interleave their rows, and a second one could
move aside a file the first is writing; the second is refused instead (:class:`DataDirInUse`).
The kernel drops the lock when its process ends, however it ends, so a killed relay never
leaves a stale lock behind. The lock is per open file: a second open in the same process is
refused too.

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
import fcntl
import hashlib
import os
import re
import secrets
import shlex
import shutil
import sqlite3
import stat
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import structlog

from actors.core.error_text import safe_text
from actors.core.errors import InUse
from actors.kernel.file_modes import (
    PRIVATE_DIR,
    PRIVATE_FILE,
    inspect,
    open_to_others,
    readable_by_others,
)

log = structlog.get_logger("relay")

MEMORY = ":memory:"
SYNC_MODES = ("full", "normal")
LOCK_FILE = "relay.lock"
"""The file in the data directory whose ``flock`` marks it in use; it holds the owner's pid."""

_META = "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
MIGRATIONS: dict[str, tuple[tuple[str, ...], ...]] = {
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
    ),
}
"""Per file, the schema changes in order; ``PRAGMA user_version`` counts those applied."""


class StorageError(RuntimeError):
    """The data directory cannot be used (the message says why)."""


class DataDirInUse(InUse):
    """Another process holds the data directory's lock.

    Not a :class:`StorageError`: an unusable directory may be replaced by memory, a directory
    in use must stop the start, since the holder is serving its data.
    """

    def __init__(self, directory: str, pid: int | None) -> None:
        holder = "unknown" if pid is None else str(pid)
        super().__init__(
            f"data directory {directory} is in use by another relay (pid {holder})",
            setting="data_dir",
            instead="another directory",
        )
        self.directory = directory
        self.pid = pid
        """The holder's pid as it wrote it in the lock file; None if it has not yet."""


@dataclass(slots=True, eq=False)
class DirectoryLock:
    """The open lock file of a data directory; the ``flock`` lasts while it is open."""

    path: str
    fd: int | None

    def release(self) -> None:
        """Close the lock file, which drops the lock (once; later calls do nothing).

        The file stays: removing it would let a newcomer lock a new file while a third
        process still waits on the old one.
        """
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)


def _holder(fd: int) -> int | None:
    """The pid written in a lock file; None while the holder has not written it yet."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdecimal() else None


def lock_directory(directory: Path) -> DirectoryLock:
    """Take the exclusive lock of ``directory`` without waiting, and write our pid in it.

    Raises:
        DataDirInUse: another open file (in any process) holds it.
        StorageError: the lock file cannot be opened, locked or written.
    """
    path = directory / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
    except OSError as exc:
        msg = f"cannot open the lock file {path}: {exc}"
        raise StorageError(msg) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = _holder(fd)
        os.close(fd)
        raise DataDirInUse(str(directory), pid) from None
    except OSError as exc:
        os.close(fd)
        msg = f"cannot lock {path}: {exc}"
        raise StorageError(msg) from exc
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError as exc:
        os.close(fd)
        msg = f"cannot write the lock file {path}: {exc}"
        raise StorageError(msg) from exc
    return DirectoryLock(path=str(path), fd=fd)


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
        # in free pages and in old WAL frames, with either setting, until they are reused.
        db.execute("PRAGMA secure_delete=FAST")
        db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    except BaseException:
        db.close()
        raise
    return db


def _migrate(db: sqlite3.Connection, part: str) -> None:
    steps = MIGRATIONS[part]
    version: int = db.execute("PRAGMA user_version").fetchone()[0]
    if version > len(steps):
        msg = (
            f"{part}.db has schema version {version}, newer than this relay's {len(steps)}; "
            "run a newer relay or point RELAY_DATA_DIR elsewhere"
        )
        raise StorageError(msg)
    for number in range(version, len(steps)):
        db.execute("BEGIN")
        for statement in steps[number]:
            db.execute(statement)
        db.execute(f"PRAGMA user_version = {number + 1}")
        db.execute("COMMIT")


def _open_part(store: Store, part: str) -> tuple[str, bool]:
    """Check, migrate and return (creation token, created now) of one file."""
    db = connect(store)
    try:
        check = db.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            msg = f"quick_check: {check}"
            raise sqlite3.DatabaseError(msg)
        _migrate(db, part)
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


_OWN_FILE = re.compile(
    rf"({'|'.join(MIGRATIONS)})\.db(\.corrupt-\d{{8}}T\d{{6}})?(-wal|-shm|-journal)?"
)
"""The names of the files the relay makes in a data directory, besides :data:`LOCK_FILE`."""


def _is_own_file(name: str) -> bool:
    return name == LOCK_FILE or _OWN_FILE.fullmatch(name) is not None


def _make_private_directory(directory: Path) -> None:
    """Create ``directory`` ``0700`` (its missing parents as the umask says); leave an
    existing one as it is.

    Raises:
        StorageError: it cannot be created, or something else stands at its path.
    """
    try:
        directory.mkdir(mode=PRIVATE_DIR, parents=True)
    except FileExistsError:
        if directory.is_dir():
            return
        msg = f"cannot create the data directory {directory}: a file stands there"
        raise StorageError(msg) from None
    except OSError as exc:
        msg = f"cannot create the data directory {directory}: {exc}"
        raise StorageError(msg) from exc
    try:
        os.chmod(directory, PRIVATE_DIR)  # mkdir's mode went through the umask
    except OSError as exc:
        msg = f"cannot make the data directory {directory} private: {exc}"
        raise StorageError(msg) from exc


def _check_privacy(directory: Path) -> None:
    """Make the relay's own files in ``directory`` ``0600``; warn if others may enter it.

    Files that are not the relay's are never changed: they are named in the warning when
    others may read them through the directory.
    """
    tightened: dict[str, str] = {}
    readable: list[str] = []
    try:
        paths = sorted(directory.iterdir())
    except OSError:  # a directory we may write but not list (-wx): nothing to see in it
        paths = []
    for path in paths:
        try:
            entry = inspect(path, follow=False)
        except OSError:
            continue  # gone meanwhile
        if not stat.S_ISREG(entry.mode) or not readable_by_others(entry):
            continue
        if not _is_own_file(path.name):
            readable.append(path.name)
            continue
        try:
            os.chmod(path, PRIVATE_FILE)
        except OSError:  # not ours to change (another user's): the warning below names it
            readable.append(path.name)
            continue
        tightened[path.name] = entry.octal
    if tightened:
        log.info(
            "storage.file_modes_tightened",
            actor="root",
            path=str(directory),
            was=tightened,
            now=f"{PRIVATE_FILE:04o}",
        )
    entry = inspect(directory)
    if open_to_others(entry):
        log.warning(
            "storage.data_dir_not_private",
            actor="root",
            path=str(directory),
            mode=entry.octal,
            readable_files=readable,
            fix=f"chmod 700 {shlex.quote(str(directory))}",
            note="other users of this machine may open the data directory, which holds "
            "what the user heard and saw; the relay does not change the mode of a directory "
            "that was there before it started",
        )


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
        _make_private_directory(directory)
        lock = lock_directory(directory)
    try:
        if lock is not None:
            _check_privacy(directory)
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
                error=safe_text(str(exc)),
            )
            try:
                token, new = _open_part(store, part)
            except sqlite3.Error as again:
                msg = f"cannot create a fresh {path}: {again}"
                raise StorageError(msg) from again
        stores[part] = store
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
