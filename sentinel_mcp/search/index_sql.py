"""The passage index's SQL, all of it (one module, so the index can move behind the storage seam as a unit).

``passages`` holds every indexed text (policy paragraphs and memories) with where it came from and its
vector; ``passages_fts`` is an FTS5 index over its words (kept in step by triggers); ``sources`` remembers
the digest of each indexed document so an unchanged one is not indexed again.
"""

SCHEMA_VERSION = 1

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
    expires_at REAL,                  -- NULL: no expiry
    embedder TEXT NOT NULL,           -- which embedder made the vector
    vector BLOB NOT NULL              -- float32, L2-normalised
);
CREATE INDEX IF NOT EXISTS passages_by_namespace ON passages (namespace, created_at);
CREATE INDEX IF NOT EXISTS passages_by_expiry ON passages (expires_at);
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(
    heading, text, content='passages', content_rowid='id', tokenize='porter unicode61');
CREATE TRIGGER IF NOT EXISTS passages_ai AFTER INSERT ON passages BEGIN
    INSERT INTO passages_fts (rowid, heading, text) VALUES (new.id, new.heading, new.text);
END;
CREATE TRIGGER IF NOT EXISTS passages_ad AFTER DELETE ON passages BEGIN
    INSERT INTO passages_fts (passages_fts, rowid, heading, text) VALUES ('delete', old.id, old.heading, old.text);
END;
CREATE TABLE IF NOT EXISTS sources (
    namespace TEXT NOT NULL,
    source TEXT NOT NULL,
    digest TEXT NOT NULL,             -- of the text and the embedder
    PRIMARY KEY (namespace, source)
);
"""

INSERT = ("INSERT INTO passages (namespace, source, heading, text, line_start, line_end, tags, created_at, "
          "expires_at, embedder, vector) VALUES (?,?,?,?,?,?,?,?,?,?,?)")
DELETE_SOURCE = "DELETE FROM passages WHERE namespace = ? AND source = ?"
SOURCE_DIGEST = "SELECT digest FROM sources WHERE namespace = ? AND source = ?"
SET_SOURCE_DIGEST = ("INSERT INTO sources (namespace, source, digest) VALUES (?,?,?) "
                     "ON CONFLICT (namespace, source) DO UPDATE SET digest = excluded.digest")
_LIVE = "namespace = ? AND (expires_at IS NULL OR expires_at > ?)"
VECTORS = f"SELECT id, embedder, vector FROM passages WHERE {_LIVE}"
WORDS = ("SELECT p.id FROM passages_fts JOIN passages p ON p.id = passages_fts.rowid "
         "WHERE passages_fts MATCH ? AND p.namespace = ? AND (p.expires_at IS NULL OR p.expires_at > ?) "
         "ORDER BY bm25(passages_fts) LIMIT ?")
ROWS = ("SELECT id, namespace, source, heading, text, line_start, line_end, tags, created_at, expires_at "
        "FROM passages WHERE id IN ({ids})")
RECENT = ("SELECT id, namespace, source, heading, text, line_start, line_end, tags, created_at, expires_at "
          f"FROM passages WHERE {_LIVE} ORDER BY created_at DESC, id DESC LIMIT ?")
COUNT = f"SELECT COUNT(*) FROM passages WHERE {_LIVE}"
OLDEST_BEYOND = ("DELETE FROM passages WHERE id IN (SELECT id FROM passages WHERE namespace = ? "
                 "ORDER BY created_at DESC, id DESC LIMIT -1 OFFSET ?)")
PURGE = "DELETE FROM passages WHERE expires_at IS NOT NULL AND expires_at <= ?"
