"""agent.db of a relay before the escalation slot gains its table and keeps its rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from actors.kernel.schemas import MIGRATIONS, migrate


def _at_version(db: sqlite3.Connection, version: int) -> None:
    """``db`` as a relay whose agent schema had ``version`` steps made it."""
    for step in MIGRATIONS["agent"][:version]:
        if callable(step):
            step(db)
        else:
            for statement in step:
                db.execute(statement)
    db.execute(f"PRAGMA user_version = {version}")


@pytest.mark.parametrize("version", [1, 2])
def test_an_older_agent_db_gains_the_escalation_table_and_keeps_its_entries(
    tmp_path: Path, version: int
) -> None:
    db = sqlite3.connect(tmp_path / "agent.db", isolation_level=None)
    _at_version(db, version)
    db.execute("INSERT INTO agent_entries (id, ts, entry) VALUES (1, 5, x'7b7d')")
    assert not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'escalation_slot'").fetchall()

    migrate(db, "agent")

    assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS["agent"])
    assert db.execute("SELECT COUNT(*) FROM agent_entries").fetchone()[0] == 1
    db.execute("INSERT INTO escalation_slot (key, value) VALUES ('slot', x'7b7d')")
    migrate(db, "agent")  # applied once: nothing left to do
    assert db.execute("SELECT COUNT(*) FROM escalation_slot").fetchone()[0] == 1
    db.close()
