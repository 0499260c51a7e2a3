"""The full-text index of the agent's entries: an SQLite FTS5 table over each entry's digest
and hud, kept in step with ``agent_entries`` by triggers, and the words a user types turned
into a query it can run.

The index is an *external content* table: it stores only the index, not the text, and reads
the text from a view over ``agent_entries`` (each entry's JSON) when it is rebuilt. Triggers
add an entry's words on insert and take them out on delete, in the writer's own transaction:
what retention prunes leaves the index with the rows, and the DigestStore's code writes
entries as before.

Without FTS5 in this Python's SQLite, the relay still starts: no table, no triggers, and a
search answers that it is unavailable. A file whose index was made by a build with FTS5 and
is opened by one without loses its triggers (an insert would fail on them); a build with FTS5
that finds the index without its triggers builds it again (:func:`reconcile`).
"""

from __future__ import annotations

import sqlite3
import unicodedata

import structlog

from actors.kernel.errors import BadRequest

log = structlog.get_logger("relay")

TRIGGERS = ("agent_search_insert", "agent_search_delete", "agent_search_update")
_DIGEST = "json_extract(CAST({}.entry AS TEXT), '$.digest')"
_HUD = "json_extract(CAST({}.entry AS TEXT), '$.hud')"
_ADD = (
    "INSERT INTO agent_search (rowid, digest, hud) "
    "VALUES (new.id, " + _DIGEST.format("new") + ", " + _HUD.format("new") + ");"
)
_REMOVE = (
    "INSERT INTO agent_search (agent_search, rowid, digest, hud) "
    "VALUES ('delete', old.id, " + _DIGEST.format("old") + ", " + _HUD.format("old") + ");"
)
SCHEMA = (
    "CREATE VIEW IF NOT EXISTS agent_search_text (id, digest, hud) AS SELECT id, "
    "json_extract(CAST(entry AS TEXT), '$.digest'), json_extract(CAST(entry AS TEXT), '$.hud') "
    "FROM agent_entries",
    # remove_diacritics 2: "cafe" finds "café"; the index holds no text (content: the view)
    "CREATE VIRTUAL TABLE IF NOT EXISTS agent_search USING fts5(digest, hud, "
    "content='agent_search_text', content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
    "CREATE TRIGGER IF NOT EXISTS agent_search_insert AFTER INSERT ON agent_entries "
    "BEGIN " + _ADD + " END",
    "CREATE TRIGGER IF NOT EXISTS agent_search_delete AFTER DELETE ON agent_entries "
    "BEGIN " + _REMOVE + " END",
    "CREATE TRIGGER IF NOT EXISTS agent_search_update AFTER UPDATE ON agent_entries "
    "BEGIN " + _REMOVE + " " + _ADD + " END",
)
"""The view, the index and its triggers; each statement does nothing if its object exists."""
REBUILD = "INSERT INTO agent_search (agent_search) VALUES ('rebuild')"

MAX_QUERY_CHARS = 500
"""``q`` longer than this is refused: a search is a few words, not a document."""
MAX_TERMS = 16
"""Words of ``q`` at most: each is a prefix look-up the query intersects."""


def fts5_available() -> bool:
    """Whether this Python's SQLite has FTS5 (a module built in, or none)."""
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE probe USING fts5(text)")
    except sqlite3.OperationalError:
        return False
    finally:
        db.close()
    return True


def _triggers(db: sqlite3.Connection) -> set[str]:
    rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()
    return {row[0] for row in rows} & set(TRIGGERS)


def build(db: sqlite3.Connection) -> None:
    """Create the index (if FTS5 is there) and fill it from the entries already stored.

    Runs inside the caller's transaction. Rebuilding reads every entry once; an index that was
    already whole is made again the same, so this may run on a file that has it.
    """
    if not fts5_available():
        return
    for statement in SCHEMA:
        db.execute(statement)
    db.execute(REBUILD)


def reconcile(db: sqlite3.Connection) -> None:
    """Make the index agree with this build, at every start, after the migrations.

    With FTS5: an index missing any trigger (made by a build without FTS5, or left by one)
    is built again, in one transaction. Without: the triggers are dropped, so that inserts
    and deletes work; the table stays for a build that can read it.
    """
    have = _triggers(db)
    if fts5_available():
        if have == set(TRIGGERS):
            return
        db.execute("BEGIN")
        try:
            build(db)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        log.info("storage.search_index_rebuilt", actor="root")
        return
    for name in have:
        db.execute(f"DROP TRIGGER IF EXISTS {name}")


def compact(db: sqlite3.Connection) -> None:
    """Merge the index into one segment, dropping what deletes left of the entries' words.

    FTS5 writes a delete as a marker in a new segment; the older segments keep the words
    until a merge. After this, with ``secure_delete`` on, they are gone from the file. Reads
    every remaining entry's words once: run it after deleting by the user's wish, not in a
    prune.
    """
    db.execute("INSERT INTO agent_search (agent_search) VALUES ('optimize')")


def ready(db: sqlite3.Connection) -> bool:
    """Whether searches can run on ``db``: FTS5 is there and the index is kept in step."""
    return fts5_available() and _triggers(db) == set(TRIGGERS)


class QueryError(BadRequest):
    """``q`` cannot be searched for (HTTP 400; the message says why, in the user's terms)."""


def _words(q: str) -> list[str]:
    """``q`` split at white space and control characters (a NUL would end FTS5's reading of
    the query), keeping the words with a token."""
    spaced = "".join(" " if unicodedata.category(ch) in ("Cc", "Cs") else ch for ch in q)
    return [word for word in spaced.split() if _has_token(word)]


def _has_token(word: str) -> bool:
    """Whether the tokenizer finds a token in ``word``: a letter, a digit or a private-use
    character (unicode61's token characters); others separate tokens."""
    return any(ch.isalnum() or unicodedata.category(ch) == "Co" for ch in word)


def match_expression(q: str) -> str:
    """The FTS5 query for what a user typed: each word a quoted string, matched as a prefix
    (``deploy`` finds "deployment"), every word required.

    A quoted string is never FTS5 syntax: ``OR``, ``NEAR``, ``*``, ``:``, ``^`` and
    parentheses are words or separators in it, and a ``"`` is doubled. Words are split at white
    space and control characters; inside a word the tokenizer splits at punctuation
    (``foo-bar`` finds "foo bar"); words with no letter or digit are dropped.

    Raises:
        QueryError: ``q`` is over :data:`MAX_QUERY_CHARS`, has more than :data:`MAX_TERMS`
            words, or none with a letter or digit.
    """
    if len(q) > MAX_QUERY_CHARS:
        msg = f"q must be at most {MAX_QUERY_CHARS} characters, got {len(q)}"
        raise QueryError(msg)
    words = _words(q)
    if not words:
        msg = "q must have a word with a letter or a digit in it"
        raise QueryError(msg)
    if len(words) > MAX_TERMS:
        msg = f"q must have at most {MAX_TERMS} words, got {len(words)}"
        raise QueryError(msg)
    return " AND ".join('"' + word.replace('"', '""') + '"*' for word in words)
