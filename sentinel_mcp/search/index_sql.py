"""The passage index's SQL, all of it (one module, so the index can move behind the storage seam as a unit).

``passages`` holds every indexed text (policy paragraphs and memories) with where it came from;
``passage_vectors`` holds each passage's vector, apart, so the rows a words search joins stay small and dense
(a 1024-dimension vector is 4 KB: in the same row, every row the search touched was a page of its own);
``passages_in`` is the view passages are inserted through (text and vector in one row, so a batch is one
``executemany``); ``passages_fts_<n>`` are FTS5 indexes over the words, one per namespace; ``sources``
remembers the digest of each indexed document so an unchanged one is not indexed again.

Version 1 kept the vector in ``passages``; ``MIGRATE_1_TO_2`` moves it out, keeping every passage (memories
are the only copy of what an agent stored).

Version 3: one FTS5 table per namespace, ``passages_fts_<n>`` (``n`` an integer from ``fts_namespaces``, never
the namespace's text), kept in step by the index's own statements in the writing transaction. bm25 takes a
word's rarity and the mean length from the table it ranks: over one shared table, the order of bob's results
moved with what alice had stored (a probe of other principals' memories word by word). Each namespace's
statistics are now its own passages only. The cost grows with the number of namespaces: each is five schema
entries, and SQLite's schema load per connection (again after any connection makes a table) was measured at
1 ms for 100 tables, 36 ms for 1,000 and 1,050 ms for 3,000 (superlinear); about 17 KB of file per table.
"""

SCHEMA_VERSION = 3

SCHEMA = """
CREATE TABLE IF NOT EXISTS index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS passages (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,          -- 'policy' or 'memory:<principal>'
    source TEXT NOT NULL,             -- document name, or 'memory'
    heading TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    line_start INTEGER,
    line_end INTEGER,
    tags TEXT NOT NULL DEFAULT '[]',  -- JSON array
    created_at REAL NOT NULL,
    expires_at REAL                   -- NULL: no expiry
);
CREATE INDEX IF NOT EXISTS passages_by_namespace ON passages (namespace, created_at);
CREATE INDEX IF NOT EXISTS passages_by_expiry ON passages (expires_at);
CREATE TABLE IF NOT EXISTS passage_vectors (
    id INTEGER PRIMARY KEY,           -- the passage's id
    embedder TEXT NOT NULL,           -- which embedder made the vector
    vector BLOB NOT NULL              -- float32, L2-normalised
);
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(
    heading, text, content='passages', content_rowid='id', tokenize='porter unicode61');
CREATE TRIGGER IF NOT EXISTS passages_ai AFTER INSERT ON passages BEGIN
    INSERT INTO passages_fts (rowid, heading, text) VALUES (new.id, new.heading, new.text);
END;
CREATE TRIGGER IF NOT EXISTS passages_ad AFTER DELETE ON passages BEGIN
    INSERT INTO passages_fts (passages_fts, rowid, heading, text) VALUES ('delete', old.id, old.heading, old.text);
    DELETE FROM passage_vectors WHERE id = old.id;
END;
CREATE VIEW IF NOT EXISTS passages_in AS
    SELECT p.namespace, p.source, p.heading, p.text, p.line_start, p.line_end, p.tags, p.created_at, p.expires_at,
           v.embedder, v.vector
    FROM passages p JOIN passage_vectors v ON v.id = p.id;
-- inside a trigger, last_insert_rowid() is the row the trigger itself just inserted
CREATE TRIGGER IF NOT EXISTS passages_in_insert INSTEAD OF INSERT ON passages_in BEGIN
    INSERT INTO passages (namespace, source, heading, text, line_start, line_end, tags, created_at, expires_at)
    VALUES (new.namespace, new.source, new.heading, new.text, new.line_start, new.line_end, new.tags,
            new.created_at, new.expires_at);
    INSERT INTO passage_vectors (id, embedder, vector)
    VALUES (last_insert_rowid(), new.embedder, new.vector);
END;
CREATE TABLE IF NOT EXISTS sources (
    namespace TEXT NOT NULL,
    source TEXT NOT NULL,
    digest TEXT NOT NULL,             -- of the text and the embedder
    PRIMARY KEY (namespace, source)
);
"""  # noqa: E501 (verbatim text)

# Version 1 (vectors in ``passages``) to 2, in the seam's migration transaction: the old table is renamed,
# the new schema made, every passage copied with its id (the FTS index is rebuilt by the insert trigger), the
# old table dropped.
MIGRATE_1_TO_2 = """
DROP TRIGGER IF EXISTS passages_ai;
DROP TRIGGER IF EXISTS passages_ad;
DROP TABLE IF EXISTS passages_fts;
DROP INDEX IF EXISTS passages_by_namespace;
DROP INDEX IF EXISTS passages_by_expiry;
ALTER TABLE passages RENAME TO passages_v1;
{schema}
INSERT INTO passages (id, namespace, source, heading, text, line_start, line_end, tags, created_at, expires_at)
    SELECT id, namespace, source, heading, text, line_start, line_end, tags, created_at, expires_at FROM passages_v1;
INSERT INTO passage_vectors (id, embedder, vector) SELECT id, embedder, vector FROM passages_v1;
DROP TABLE passages_v1;
""".format(schema=SCHEMA)  # noqa: E501 (verbatim text)

# Version 2 to 3 (``passage_index._version_3``): the shared FTS table and its triggers go (vectors are still
# deleted by a trigger); each namespace gets its table, filled from its passages.
MIGRATE_2_TO_3 = """
DROP TRIGGER IF EXISTS passages_ai;
DROP TRIGGER IF EXISTS passages_ad;
DROP TABLE IF EXISTS passages_fts;
CREATE TRIGGER passages_ad AFTER DELETE ON passages BEGIN
    DELETE FROM passage_vectors WHERE id = old.id;
END;
CREATE TABLE IF NOT EXISTS fts_namespaces (id INTEGER PRIMARY KEY, namespace TEXT NOT NULL UNIQUE);
INSERT OR IGNORE INTO fts_namespaces (namespace) SELECT DISTINCT namespace FROM passages ORDER BY namespace;
"""
FTS_NAMESPACES = "SELECT id FROM fts_namespaces ORDER BY id"
FTS_NAMESPACE_ID = "SELECT id FROM fts_namespaces WHERE namespace = ?"
NEW_FTS_NAMESPACE = "INSERT OR IGNORE INTO fts_namespaces (namespace) VALUES (?)"


def fts_table(ns_id: object) -> str:
    """A namespace's FTS table name: from its integer id only (an id that is anything else is refused, so no
    text stored in the database ever becomes part of an identifier)."""
    if type(ns_id) is not int or not 0 < ns_id < 2**63:
        raise TypeError("a namespace's FTS id is a positive integer")
    return f"passages_fts_{ns_id}"


def create_fts(table: str) -> str:
    return (f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5(heading, text, content='passages', "
            "content_rowid='id', tokenize='porter unicode61')")


def fill_fts(table: str) -> str:
    """Every passage of a namespace into its (new, empty) table: parameter the namespace."""
    return f"INSERT INTO {table} (rowid, heading, text) SELECT id, heading, text FROM passages WHERE namespace = ?"  # noqa: E501 (verbatim text)


# An insert, routed: the highest id before it is marked (under the write lock the transaction took with this
# statement, so every row above the mark afterwards is this insert's), then those rows go to the table.
MARK_NEW = "INSERT OR REPLACE INTO index_meta (key, value) VALUES ('fts_mark', (SELECT COALESCE(MAX(id), 0) FROM passages))"  # noqa: E501 (verbatim text)


def index_new(table: str) -> str:
    """The rows above the mark, of the namespace (the parameter), into its table."""
    return (f"INSERT INTO {table} (rowid, heading, text) SELECT id, heading, text FROM passages "
            "WHERE id > (SELECT CAST(value AS INTEGER) FROM index_meta WHERE key = 'fts_mark') "
            "AND namespace = ?")


def unindex(table: str, where: str) -> str:
    """The rows a delete with ``where`` is about to remove, out of the table first (an external-content FTS5
    table is told the old values of each row it forgets)."""
    return f"INSERT INTO {table} ({table}, rowid, heading, text) SELECT 'delete', id, heading, text FROM passages WHERE {where}"  # noqa: E501 (verbatim text)




def set_version(n: int) -> str:
    return f"INSERT OR REPLACE INTO index_meta (key, value) VALUES ('schema_version', '{int(n)}');"


TABLE_EXISTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"

HAS_VECTOR_COLUMN = "SELECT 1 FROM pragma_table_info('passages') WHERE name = 'vector'"
INSERT = (
    "INSERT INTO passages_in (namespace, source, heading, text, line_start, line_end, tags, created_at, "
    "expires_at, embedder, vector) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
)
SOURCE_ROWS = "namespace = ? AND source = ?"
DELETE_SOURCE = f"DELETE FROM passages WHERE {SOURCE_ROWS}"
SOURCE_DIGEST = "SELECT digest FROM sources WHERE namespace = ? AND source = ?"
SET_SOURCE_DIGEST = (
    "INSERT INTO sources (namespace, source, digest) VALUES (?,?,?) "
    "ON CONFLICT (namespace, source) DO UPDATE SET digest = excluded.digest"
)
# a passage with a lifetime is live from its making to its expiry: one made in the reader's future (the wall
# clock set back before this process started) is not, and is purged (never kept past its life by the step)
_LIVE = "namespace = ? AND (expires_at IS NULL OR (expires_at > ? AND created_at <= ?))"
VECTORS = (
    "SELECT p.id, v.embedder, v.vector FROM passages p JOIN passage_vectors v ON v.id = p.id "
    "WHERE p.namespace = ? AND (p.expires_at IS NULL OR (p.expires_at > ? AND p.created_at <= ?))"
)
SOONEST_EXPIRY = "SELECT MIN(expires_at) FROM passages WHERE namespace = ? AND expires_at > ?"


def words(table: str) -> str:
    """bm25 over the namespace's own table (its statistics are its passages' only)."""
    return (
        f"SELECT p.id FROM {table} JOIN passages p ON p.id = {table}.rowid "
        f"WHERE {table} MATCH ? AND p.namespace = ? "
        "AND (p.expires_at IS NULL OR (p.expires_at > ? AND p.created_at <= ?)) "
        f"ORDER BY bm25({table}) LIMIT ?"
    )


ROWS = (
    "SELECT id, namespace, source, heading, text, line_start, line_end, tags, created_at, expires_at "
    "FROM passages WHERE id IN ({ids})"
)
RECENT = (
    "SELECT id, namespace, source, heading, text, line_start, line_end, tags, created_at, expires_at "
    f"FROM passages WHERE {_LIVE} ORDER BY created_at DESC, id DESC LIMIT ?"
)
COUNT = f"SELECT COUNT(*) FROM passages WHERE {_LIVE}"
BEYOND_ROWS = (
    "id IN (SELECT id FROM passages WHERE namespace = ? ORDER BY created_at DESC, id DESC LIMIT -1 OFFSET ?)"
)
OLDEST_BEYOND = f"DELETE FROM passages WHERE {BEYOND_ROWS}"
EXPIRED_ROWS = "namespace = ? AND expires_at IS NOT NULL AND (expires_at <= ? OR created_at > ?)"
EXPIRED_NAMESPACES = (
    "SELECT DISTINCT namespace FROM passages "
    "WHERE expires_at IS NOT NULL AND (expires_at <= ? OR created_at > ?)"
)
PURGE = f"DELETE FROM passages WHERE {EXPIRED_ROWS}"
