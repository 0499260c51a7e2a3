"""The digest store's reads of its stored entries: a page of a time range, a search, and what
a stream replays.

Each runs on the digest store's own connection, in its thread (the store calls them): a
page is the entries newest first with the next page's ``before`` cursor, and a search is
stopped once it has run for :data:`SEARCH_BUDGET_S`, since the ticks the store records wait
for it.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from actors.agent.core.entries import AgentRecord
from actors.core import shapes
from actors.core.errors import FeatureUnavailable
from actors.kernel.clock import Clock

SEARCH_BUDGET_S = 0.5
"""A longer search is stopped (a 503): the ticks the store records wait for it (2 s at most)."""
SEARCH_CHECK_STEPS = 1000
"""SQLite's steps between two looks at the clock while a search runs."""
NO_SEARCH = (
    "search is unavailable: this Python's SQLite has no FTS5 (every other route works; "
    "a Python whose sqlite3 has FTS5 builds the index at its next start)"
)
_SEARCH_SQL = (
    "SELECT e.entry FROM agent_search JOIN agent_entries AS e ON e.id = agent_search.rowid "
    "WHERE agent_search MATCH ? AND agent_search.rowid < ? AND e.ts >= ? AND e.ts < ? "
    "ORDER BY agent_search.rowid DESC LIMIT ?"
)
_RANGE_SQL = (
    "SELECT entry FROM agent_entries WHERE ts >= ? AND ts < ? AND id < ? ORDER BY id DESC LIMIT ?"
)

Page = tuple[list[shapes.AgentEntry], int | None]
"""Entries newest first, and the next page's ``before`` cursor (``None`` on the last)."""
Bounds = tuple[int | None, int | None, int | None]
"""``(since, until, before)``: ``since <= ts < until`` and ``id < before``; none is no bound."""


def _sql_int(value: int) -> int:
    """``value`` within SQLite's integers (a larger Python int raises ``OverflowError``)."""
    return min(max(value, -(2**63)), 2**63 - 1)


def _bounds(bounds: Bounds) -> tuple[int, int, int]:
    """``bounds`` as SQL bounds, each clamped to SQLite's integers (beyond them, they select
    the same rows)."""
    since, until, before = bounds
    return (
        _sql_int(since) if since is not None else 0,
        _sql_int(until) if until is not None else 2**62,
        _sql_int(before) if before is not None else 2**62,
    )


def _page(rows: list[Any], limit: int) -> Page:
    """The first ``limit`` of ``rows`` (``limit + 1`` asked for), and the next page's cursor."""
    page = [AgentRecord.from_record(row[0]) for row in rows[:limit]]
    cursor = page[-1].id if len(rows) > limit else None
    return [entry.shape() for entry in page], cursor


def entries_in_range(
    db: sqlite3.Connection, since: int | None, until: int | None, before: int | None, limit: int
) -> Page:
    """Entries with ``since <= ts < until`` and ``id < before``, newest first."""
    low, high, below = _bounds((since, until, before))
    return _page(db.execute(_RANGE_SQL, (low, high, below, limit + 1)).fetchall(), limit)


def search_entries(
    db: sqlite3.Connection, clock: Clock, match: str, bounds: Bounds, limit: int
) -> Page:
    """As :func:`entries_in_range`, of the entries whose digest or hud match ``match`` (an
    FTS5 query: :func:`~actors.kernel.search_index.match_expression`), for at most
    :data:`SEARCH_BUDGET_S` on ``clock``.

    Raises:
        FeatureUnavailable: the search took too long.
    """
    low, high, below = _bounds(bounds)
    deadline = clock.monotonic() + SEARCH_BUDGET_S
    db.set_progress_handler(lambda: clock.monotonic() > deadline, SEARCH_CHECK_STEPS)
    try:
        rows = db.execute(_SEARCH_SQL, (match, below, low, high, limit + 1)).fetchall()
    except sqlite3.OperationalError as exc:
        if "interrupted" not in str(exc):
            raise
        msg = (
            f"the search took longer than {SEARCH_BUDGET_S:g} s and was stopped: "
            "narrow it with more words, or with since and until"
        )
        raise FeatureUnavailable(msg) from None
    finally:
        db.set_progress_handler(None, 0)
    return _page(rows, limit)


def entries_after(db: sqlite3.Connection, after: int, limit: int) -> tuple[AgentRecord, ...]:
    """Up to ``limit`` stored entries with an id above ``after``, oldest first."""
    rows = db.execute(
        "SELECT entry FROM agent_entries WHERE id > ? ORDER BY id LIMIT ?", (after, limit)
    ).fetchall()
    return tuple(AgentRecord.from_record(row[0]) for row in rows)
