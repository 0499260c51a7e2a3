"""agent.db of a relay before the escalation slot gains its table and keeps its rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from actors.kernel.schemas import MIGRATIONS, migrate


def test_an_agent_db_of_version_1_gains_the_escalation_table_and_keeps_its_entries(
    tmp_path: Path,
) -> None:
    db = sqlite3.connect(tmp_path / "agent.db", isolation_level=None)
    for statement in MIGRATIONS["agent"][0]:
        db.execute(statement)
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO agent_entries (id, ts, entry) VALUES (1, 5, x'7b7d')")

    migrate(db, "agent")

    assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS["agent"])
    assert db.execute("SELECT COUNT(*) FROM agent_entries").fetchone()[0] == 1
    db.execute("INSERT INTO escalation_slot (key, value) VALUES ('slot', x'7b7d')")
    migrate(db, "agent")  # applied once: nothing left to do
    db.close()
