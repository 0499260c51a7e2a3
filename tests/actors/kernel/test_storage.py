"""Opening the data directory: schemas, the epoch, corrupt files, the in-memory mode."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.kernel.data_dir import LOCK_FILE, DataDirInUse
from actors.kernel.schemas import MIGRATIONS, StorageError
from actors.kernel.storage import (
    CACHE_KIB,
    MEMORY,
    Store,
    close_storage,
    connect,
    erase,
    open_storage,
)
from actors.tree import prepare_storage
from config.settings import Settings
from tests.support.observe import LogSink


def test_a_new_directory_gets_every_file_at_the_current_schema(tmp_path: Path) -> None:
    info = open_storage(str(tmp_path / "data"), "full")
    assert set(info.stores) == {"feed", "sense", "agent", "privacy"}
    assert info.created == ("feed", "sense", "agent", "privacy")
    for part, store in info.stores.items():
        db = sqlite3.connect(store.path)
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS[part])
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        db.close()
    assert info.to_json()["path"] == str(tmp_path / "data")
    assert info.to_json()["sync"] == "full"


@pytest.mark.parametrize(("sync", "level"), [("full", 2), ("normal", 1)])
def test_a_connection_has_the_relays_settings(tmp_path: Path, sync: str, level: int) -> None:
    info = open_storage(str(tmp_path / "data"), sync)
    db = connect(info.stores["sense"])
    try:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA synchronous").fetchone()[0] == level
        assert db.execute("PRAGMA secure_delete").fetchone()[0] == 2  # FAST, whatever the build
        assert db.execute("PRAGMA cache_size").fetchone()[0] == -CACHE_KIB
    finally:
        db.close()


def test_reopening_keeps_the_epoch_and_creates_nothing(tmp_path: Path) -> None:
    first = open_storage(str(tmp_path))
    close_storage(first)
    again = open_storage(str(tmp_path))
    assert again.epoch == first.epoch
    assert again.created == ()
    assert again.moved_aside == ()


def test_a_wiped_directory_gets_a_new_epoch(tmp_path: Path) -> None:
    first = open_storage(str(tmp_path / "a"))
    second = open_storage(str(tmp_path / "b"))
    assert first.epoch != second.epoch


def test_a_corrupt_file_is_moved_aside_and_only_that_part_starts_fresh(
    tmp_path: Path, logs: LogSink
) -> None:
    first = open_storage(str(tmp_path))
    sense = sqlite3.connect(first.stores["sense"].path)
    sense.execute("INSERT INTO sense (id, received_at, payload) VALUES (7, 1, x'7b7d')")
    sense.commit()
    sense.close()
    feed_path = Path(first.stores["feed"].path)
    for suffix in ("-wal", "-shm"):
        Path(f"{feed_path}{suffix}").unlink(missing_ok=True)
    feed_path.write_bytes(b"this is not a database" * 100)
    close_storage(first)

    again = open_storage(str(tmp_path))

    assert again.epoch != first.epoch
    assert again.created == ("feed",)
    (moved,) = again.moved_aside
    assert Path(moved).read_bytes().startswith(b"this is not a database")
    assert again.to_json()["recovered"] is True
    kept = sqlite3.connect(again.stores["sense"].path)
    assert kept.execute("SELECT id FROM sense").fetchall() == [(7,)]
    kept.close()
    assert logs.named("storage.corrupt_database_moved_aside")


def test_a_newer_schema_is_refused_not_overwritten(tmp_path: Path) -> None:
    info = open_storage(str(tmp_path))
    db = sqlite3.connect(info.stores["agent"].path)
    db.execute("PRAGMA user_version = 99")
    db.close()
    close_storage(info)
    with pytest.raises(StorageError, match="newer"):
        open_storage(str(tmp_path))
    assert lock_is_free(tmp_path)  # a refused start keeps no lock


def test_memory_mode_uses_a_private_directory_that_close_removes() -> None:
    info = open_storage(MEMORY)
    directory = Path(info.directory)
    assert directory.is_dir()
    assert info.to_json()["path"] == MEMORY
    assert (directory.stat().st_mode & 0o777) == 0o700
    close_storage(info)
    assert not directory.exists()


def test_an_unusable_data_directory_falls_back_to_memory_and_says_why(
    tmp_path: Path, logs: LogSink
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    info = prepare_storage(Settings(data_dir=str(blocker / "data")))
    try:
        assert info.in_memory
        assert info.problem is not None and "cannot create the data directory" in info.problem
        assert info.to_json()["problem"] == info.problem
        assert logs.named("storage.unusable_serving_from_memory")
    finally:
        close_storage(info)


def lock_is_free(directory: Path) -> bool:
    """Whether nobody holds the lock of ``directory`` (tried, and released at once)."""
    fd = os.open(directory / LOCK_FILE, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def test_a_data_directory_is_opened_by_one_holder_at_a_time(tmp_path: Path) -> None:
    directory = (tmp_path / "data").resolve()
    first = open_storage(str(directory))
    try:
        assert (directory / LOCK_FILE).read_text() == f"{os.getpid()}\n"
        with pytest.raises(DataDirInUse) as refused:
            open_storage(str(directory))
        assert refused.value.directory == str(directory)
        assert refused.value.pid == os.getpid()
        assert str(refused.value) == (
            f"data directory {directory} is in use by another relay (pid {os.getpid()})"
        )
    finally:
        close_storage(first)


def test_closing_releases_the_lock_and_the_directory_opens_again(tmp_path: Path) -> None:
    first = open_storage(str(tmp_path))
    assert not lock_is_free(tmp_path)
    close_storage(first)
    close_storage(first)  # a second close is harmless
    assert lock_is_free(tmp_path)
    again = open_storage(str(tmp_path))
    try:
        assert again.epoch == first.epoch
    finally:
        close_storage(again)


def test_a_holder_whose_pid_is_not_written_yet_is_still_refused(tmp_path: Path) -> None:
    fd = os.open(tmp_path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(DataDirInUse, match=r"in use by another relay \(pid unknown\)"):
            open_storage(str(tmp_path))
    finally:
        os.close(fd)


def test_memory_mode_takes_no_lock() -> None:
    first, second = open_storage(MEMORY), open_storage(MEMORY)
    try:
        assert not (Path(first.directory) / LOCK_FILE).exists()
    finally:
        close_storage(first)
        close_storage(second)


def test_a_locked_data_directory_is_refused_not_replaced_by_memory(
    tmp_path: Path, logs: LogSink
) -> None:
    held = open_storage(str(tmp_path))
    try:
        with pytest.raises(DataDirInUse):
            prepare_storage(Settings(data_dir=str(tmp_path)))
        assert not logs.named("storage.unusable_serving_from_memory")
    finally:
        close_storage(held)


# -- who else may read the files -----------------------------------------------------------------


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    """The common umask (022: new files readable by all), whatever the test process has."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode_of(path: Path | str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.usefixtures("permissive_umask")
def test_a_new_data_directory_and_every_file_in_it_are_the_users_alone(
    tmp_path: Path, logs: LogSink
) -> None:
    directory = tmp_path / "parent" / "data"
    info = open_storage(str(directory))
    dbs = [connect(store) for store in info.stores.values()]
    try:
        for db in dbs:  # a write makes the -wal and -shm files, which live while it is open
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('probe', 'x')")
        files = sorted(p.name for p in directory.iterdir())
        assert files == sorted(
            [LOCK_FILE] + [f"{part}.db{suffix}" for part in MIGRATIONS for suffix in WAL_FILES]
        )
        assert mode_of(directory) == 0o700
        assert {name: mode_of(directory / name) for name in files} == dict.fromkeys(files, 0o600)
    finally:
        for db in dbs:
            db.close()
        close_storage(info)
    assert not logs.named("storage.data_dir_not_private")


WAL_FILES = ("", "-wal", "-shm")


@pytest.mark.usefixtures("permissive_umask")
def test_a_fresh_file_after_a_corrupt_one_is_private_and_so_is_the_moved_copy(
    tmp_path: Path,
) -> None:
    close_storage(open_storage(str(tmp_path)))
    feed_path = tmp_path / "feed.db"
    feed_path.unlink()
    feed_path.write_bytes(b"this is not a database" * 100)
    os.chmod(feed_path, 0o644)

    again = open_storage(str(tmp_path))
    close_storage(again)

    (moved,) = again.moved_aside
    assert mode_of(moved) == 0o600
    assert mode_of(feed_path) == 0o600


@pytest.mark.usefixtures("permissive_umask")
def test_a_directory_others_can_read_is_left_as_it_is_with_a_warning_that_says_the_fix(
    tmp_path: Path, logs: LogSink
) -> None:
    directory = tmp_path / "shared"
    directory.mkdir()
    os.chmod(directory, 0o755)
    (directory / "notes.txt").write_text("the user's own file")
    os.chmod(directory / "notes.txt", 0o644)

    close_storage(open_storage(str(directory)))

    assert mode_of(directory) == 0o755  # the user chose it: theirs to change
    assert mode_of(directory / "notes.txt") == 0o644
    (warning,) = logs.named("storage.data_dir_not_private")
    assert warning["level"] == "warning"
    assert warning["path"] == str(directory)
    assert warning["mode"] == "0755"
    assert warning["fix"] == f"chmod 700 {directory}"
    assert warning["readable_files"] == ["notes.txt"]


def test_the_relays_own_files_left_readable_by_an_older_relay_are_made_private(
    tmp_path: Path, logs: LogSink
) -> None:
    close_storage(open_storage(str(tmp_path)))
    for name in ("feed.db", "agent.db", LOCK_FILE):
        os.chmod(tmp_path / name, 0o644)
    (tmp_path / "sense.db-wal").write_bytes(b"")  # left behind by a crash
    os.chmod(tmp_path / "sense.db-wal", 0o644)

    close_storage(open_storage(str(tmp_path)))

    for name in ("feed.db", "agent.db", "sense.db", LOCK_FILE):
        assert mode_of(tmp_path / name) == 0o600, name
    (tightened,) = logs.named("storage.file_modes_tightened")
    assert tightened["was"] == {
        "agent.db": "0644",
        "feed.db": "0644",
        LOCK_FILE: "0644",
        "sense.db-wal": "0644",
    }


def test_a_private_directory_gives_no_warning(tmp_path: Path, logs: LogSink) -> None:
    directory = tmp_path / "mine"
    directory.mkdir(mode=0o700)
    os.chmod(directory, 0o700)
    close_storage(open_storage(str(directory)))
    assert not logs.named("storage.data_dir_not_private")
    assert not logs.named("storage.file_modes_tightened")


def _filled(tmp_path: Path) -> sqlite3.Connection:
    """A WAL database of the relay's connection, with rows written and committed."""
    db = connect(Store(str(tmp_path / "part.db")))
    db.execute("CREATE TABLE t (ts INTEGER, text TEXT)")
    db.executemany("INSERT INTO t VALUES (?, ?)", [(n, f"row{n:04d} " * 20) for n in range(200)])
    return db


def test_erase_deletes_with_secure_delete_on_and_empties_the_wal(tmp_path: Path) -> None:
    db = _filled(tmp_path)
    assert (tmp_path / "part.db-wal").stat().st_size > 0

    def work(conn: sqlite3.Connection) -> tuple[int, int]:
        setting = conn.execute("PRAGMA secure_delete").fetchone()[0]
        return setting, conn.execute("DELETE FROM t WHERE ts BETWEEN 10 AND 19").rowcount

    assert erase(db, work) == (1, 10)  # ON while the deletes ran
    assert db.execute("PRAGMA secure_delete").fetchone()[0] == 2  # FAST again after
    assert (tmp_path / "part.db-wal").stat().st_size == 0
    files = b"".join(path.read_bytes() for path in tmp_path.iterdir())
    assert b"row0015" not in files
    assert b"row0025" in files
    db.close()


def test_erase_rolls_back_work_that_fails(tmp_path: Path) -> None:
    db = _filled(tmp_path)

    def work(conn: sqlite3.Connection) -> None:
        conn.execute("DELETE FROM t")
        raise sqlite3.OperationalError("stopped midway")

    with pytest.raises(sqlite3.OperationalError, match="midway"):
        erase(db, work)
    assert db.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 200
    assert db.execute("PRAGMA secure_delete").fetchone()[0] == 2
    assert not db.in_transaction
    db.close()
