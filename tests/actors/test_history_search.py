"""The full-text index of the agent's entries: kept in step with inserts and retention, built
for entries stored before it, kept over restarts, and absent (but harmless) without FTS5."""

from __future__ import annotations

import sqlite3
from typing import Any

import pykka
import pytest

from actors.agent.core.completion import Analysis
from actors.agent.core.ticks import TickResult
from actors.agent.digest_store import AGENT_RING, DigestStore
from actors.core.errors import FeatureUnavailable
from actors.core.window import build_context_window
from actors.kernel import schemas, search_index
from actors.kernel.base import ChildHandle
from actors.kernel.clock import FakeClock
from actors.kernel.search_index import match_expression
from actors.kernel.storage import StorageInfo, close_storage, open_storage

NEVER = (None, None, None)


def result(n: int, digest: str) -> TickResult:
    window = build_context_window([], [], now_ms=0, max_age_ms=1)
    return TickResult(
        tick_id=n,
        analysis=Analysis(hud=f"hud {n}", digest=digest, parsed_ok=True),
        window=window,
        model="m",
        latency_ms=1,
        tokens_in=1,
        tokens_out=1,
        push_to_feed=False,
    )


def start(clock: FakeClock, storage: StorageInfo, **kwargs: Any) -> Any:
    return DigestStore.start(
        clock=clock, store=storage.stores["agent"], feed=ChildHandle("feed"), **kwargs
    ).proxy()


def found(store: Any, q: str, limit: int = 500) -> list[str]:
    page, _ = store.search(match_expression(q), *NEVER, limit).get(timeout=5)
    return [entry.digest for entry in page]


def integrity(path: str) -> None:
    """FTS5's own check that the index holds exactly the content's words (raises if not)."""
    db = sqlite3.connect(path)
    try:
        db.execute("INSERT INTO agent_search (agent_search, rank) VALUES ('integrity-check', 1)")
    finally:
        db.close()


@pytest.fixture
def no_fts5(monkeypatch: pytest.MonkeyPatch) -> None:
    """This Python's SQLite as if it had no FTS5."""
    monkeypatch.setattr(search_index, "fts5_available", lambda: False)


def test_retention_takes_pruned_entries_out_of_the_index(
    clock: FakeClock, storage: StorageInfo
) -> None:
    store = start(clock, storage, retention_days=1)
    for n in range(AGENT_RING + 10):
        store.record(result(n, f"{'ancient' if n < 10 else 'recent'} work {n}")).get(timeout=5)
        clock.advance(60)
    assert len(found(store, "ancient")) == 10

    clock.advance(86_400 + 3_600)  # past the retention; the hourly prune runs on the way

    assert found(store, "ancient") == []
    assert len(found(store, "recent")) == AGENT_RING
    store.stop()
    integrity(storage.stores["agent"].path)


def test_the_index_survives_a_restart(clock: FakeClock, tmp_path: Any) -> None:
    info = open_storage(str(tmp_path / "data"))
    try:
        store = start(clock, info)
        store.record(result(1, "Reviewing the deployment pipeline")).get(timeout=5)
        pykka.ActorRegistry.stop_all()
    finally:
        close_storage(info)
    info = open_storage(str(tmp_path / "data"))
    try:
        store = start(clock, info)
        assert found(store, "deploy") == ["Reviewing the deployment pipeline"]
    finally:
        pykka.ActorRegistry.stop_all()
        close_storage(info)


def test_the_migration_indexes_entries_stored_before_it(clock: FakeClock, tmp_path: Any) -> None:
    """A file at the version before the index, its entries written by an older relay, gets an
    index of them at its next start."""
    info = open_storage(str(tmp_path))
    store = start(clock, info)
    store.record(result(1, "Writing the café menu")).get(timeout=5)
    pykka.ActorRegistry.stop_all()
    close_storage(info)
    before = schemas.MIGRATIONS["agent"].index(search_index.build)
    db = sqlite3.connect(tmp_path / "agent.db", isolation_level=None)
    for kind, name in (("TRIGGER", t) for t in search_index.TRIGGERS):
        db.execute(f"DROP {kind} {name}")
    db.execute("DROP TABLE agent_search")
    db.execute("DROP VIEW agent_search_text")
    db.execute(f"PRAGMA user_version = {before}")
    db.close()

    info = open_storage(str(tmp_path))
    try:
        db = sqlite3.connect(tmp_path / "agent.db")
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(schemas.MIGRATIONS["agent"])
        db.close()
        store = start(clock, info)
        assert found(store, "cafe") == ["Writing the café menu"]
    finally:
        pykka.ActorRegistry.stop_all()
        close_storage(info)


def test_a_slow_search_is_stopped_and_the_store_goes_on(
    clock: FakeClock, storage: StorageInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = start(clock, storage)
    store.record(result(1, "Debugging the parser")).get(timeout=5)
    monkeypatch.setattr("actors.agent.entry_reads.SEARCH_BUDGET_S", -1.0)  # already over
    monkeypatch.setattr("actors.agent.entry_reads.SEARCH_CHECK_STEPS", 1)
    with pytest.raises(FeatureUnavailable, match="took longer"):
        found(store, "parser")
    monkeypatch.setattr("actors.agent.entry_reads.SEARCH_BUDGET_S", 0.5)
    store.record(result(2, "Debugging the lexer")).get(timeout=5)
    assert found(store, "debugging") == ["Debugging the lexer", "Debugging the parser"]


def test_without_fts5_the_store_works_and_search_says_so(
    clock: FakeClock, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file indexed by a build with FTS5, opened by one without, then with it again."""
    info = open_storage(str(tmp_path))
    store = start(clock, info)
    store.record(result(1, "before: deployment")).get(timeout=5)
    pykka.ActorRegistry.stop_all()
    close_storage(info)

    with monkeypatch.context() as patched:
        patched.setattr(search_index, "fts5_available", lambda: False)
        info = open_storage(str(tmp_path))
        store = start(clock, info)
        store.record(result(2, "without: deployment")).get(timeout=5)  # no trigger fails it
        with pytest.raises(FeatureUnavailable, match="FTS5"):
            found(store, "deployment")
        page, _ = store.history_range(*NEVER, 10).get(timeout=5)
        assert len(page) == 2
        pykka.ActorRegistry.stop_all()
        close_storage(info)

    info = open_storage(str(tmp_path))  # FTS5 again: the index is made whole
    try:
        store = start(clock, info)
        assert found(store, "deployment") == ["without: deployment", "before: deployment"]
    finally:
        pykka.ActorRegistry.stop_all()
        close_storage(info)
    integrity(str(tmp_path / "agent.db"))


def test_a_fresh_file_without_fts5_opens(clock: FakeClock, tmp_path: Any, no_fts5: None) -> None:
    info = open_storage(str(tmp_path))
    try:
        assert info.moved_aside == ()
        store = start(clock, info)
        store.record(result(1, "still stored")).get(timeout=5)
        with pytest.raises(FeatureUnavailable, match="FTS5"):
            found(store, "stored")
    finally:
        pykka.ActorRegistry.stop_all()
        close_storage(info)


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ("deploy", '"deploy"*'),
        ('say "hi"', '"say"* AND """hi"""*'),
        (
            "a OR b NEAR(c, 2) * ^d col:e",
            '"a"* AND "OR"* AND "b"* AND "NEAR(c,"* AND "2)"* AND "^d"* AND "col:e"*',
        ),
        ('* ( ) - + "', None),
        ("Straße café", '"Straße"* AND "café"*'),
        ("\x00nul\x01led\ud800", '"nul"* AND "led"*'),
    ],
)
def test_words_become_quoted_prefixes(q: str, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(search_index.QueryError, match="a letter or a digit"):
            match_expression(q)
    else:
        assert match_expression(q) == expected


def test_queries_too_long_or_too_wordy_are_refused() -> None:
    with pytest.raises(search_index.QueryError, match="at most 500 characters"):
        match_expression("x" * 501)
    with pytest.raises(search_index.QueryError, match="at most 16 words"):
        match_expression(" ".join(["w"] * 17))
