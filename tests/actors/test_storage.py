"""Opening the data directory: schemas, the epoch, corrupt files, the in-memory mode."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from actors.storage import (
    CACHE_KIB,
    MEMORY,
    MIGRATIONS,
    StorageError,
    close_storage,
    connect,
    open_storage,
)
from config.settings import Settings
from run import prepare_storage
from tests.conftest import LogSink


def test_a_new_directory_gets_every_file_at_the_current_schema(tmp_path: Path) -> None:
    info = open_storage(str(tmp_path / "data"), "full")
    assert set(info.stores) == {"feed", "sense", "agent"}
    assert info.created == ("feed", "sense", "agent")
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
    with pytest.raises(StorageError, match="newer"):
        open_storage(str(tmp_path))


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
