"""The data directory: created private, locked for one process at a time, and the modes of
the relay's files in it checked at every start (see :mod:`actors.kernel.storage`)."""

from __future__ import annotations

import fcntl
import os
import re
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path

import structlog

from actors.kernel.errors import InUse
from actors.kernel.file_modes import (
    PRIVATE_DIR,
    PRIVATE_FILE,
    inspect,
    open_to_others,
    readable_by_others,
)
from actors.kernel.schemas import MIGRATIONS, StorageError

log = structlog.get_logger("relay")

LOCK_FILE = "relay.lock"
"""The file in the data directory whose ``flock`` marks it in use; it holds the owner's pid."""


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


_OWN_FILE = re.compile(
    rf"({'|'.join(MIGRATIONS)})\.db(\.corrupt-\d{{8}}T\d{{6}})?(-wal|-shm|-journal)?"
)
"""The names of the files the relay makes in a data directory, besides :data:`LOCK_FILE`."""


def _is_own_file(name: str) -> bool:
    return name == LOCK_FILE or _OWN_FILE.fullmatch(name) is not None


def make_private_directory(directory: Path) -> None:
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


def check_privacy(directory: Path) -> None:
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
