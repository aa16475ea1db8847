"""Notes: a local store in the built-in's data dir (nothing goes to the phone).

Each note is its writer's: behind the gateway a principal finds, lists and deletes only the notes it wrote
(another's note answers as a missing one), and fills only its own share of the store. Standalone calls, and
notes kept before notes had owners, are the owner principal's (the device's own user).

Behind the storage seam: the schema is migrated there, every change is committed before the tool answers,
and a store that cannot be written refuses. Shared (rollback journal): every gateway on a data dir serves
the same notes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations

from sentinel_mcp.core.call_meta import principal_of
from sentinel_mcp.identity.principal import OWNER_NAME
from sentinel_mcp.storage import Schema, open_database
from sentinel_mcp.storage.sqlite import SHARED

from ..results import error_result, read_result
from ..runtime import DeviceRuntime
from ..ui_tools import READ

# version 1 is the file kept before the seam (the same table: an old notes file gains the version row)
SCHEMA = Schema("notes", {"sqlite": ["""CREATE TABLE IF NOT EXISTS notes (
  id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, body TEXT NOT NULL DEFAULT '',
  tags TEXT NOT NULL DEFAULT '', created TEXT NOT NULL)""",
    # each note its writer's; the notes kept before are the owner principal's
    f"ALTER TABLE notes ADD COLUMN owner TEXT NOT NULL DEFAULT '{OWNER_NAME}'",
    "CREATE INDEX IF NOT EXISTS notes_by_owner ON notes (owner, id)"]})
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
DELETE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
# every caller that may use the device writes here: a bound on each note and on their number keeps one
# caller (a looping agent, a hostile peer) from filling the disk the gateway's own stores share
MAX_TITLE = 200
MAX_BODY = 64_000
MAX_TAGS = 32
MAX_TAG = 50
MAX_NOTES = 10_000  # a principal's
MAX_ALL_NOTES = 100_000  # every principal's together


class NoteStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = open_database(path, "notes", SHARED)
        self._db.migrate_blocking(SCHEMA)

    def add(self, owner: str, title: str, body: str, tags: list[str]) -> int:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        added = self._db.write_blocking(
            "INSERT INTO notes (title, body, tags, created, owner) VALUES (?, ?, ?, ?, ?) RETURNING id",
            (title, body, ",".join(t.strip() for t in tags if t.strip()), now, owner),
        )
        return int(added.rows[0][0])

    def list(self, owner: str, query: str | None, limit: int) -> list[dict[str, Any]]:
        sql, args = "SELECT id, title, body, tags, created FROM notes WHERE owner = ?", [owner]
        if query and "\x00" in query:
            return []  # SQLite's LIKE stops at a NUL: the pattern would match every note
        if query:
            sql += " AND (title LIKE ? ESCAPE '\\' OR body LIKE ? ESCAPE '\\' OR tags LIKE ? ESCAPE '\\')"
            like = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            args += [like, like, like]
        sql += " ORDER BY id DESC LIMIT ?"
        return self._db.query_dicts_blocking(sql, [*args, limit])

    def count(self, owner: str | None = None) -> int:
        """The notes of ``owner``, or of everyone."""
        sql, args = "SELECT count(*) AS n FROM notes", []
        if owner is not None:
            sql, args = sql + " WHERE owner = ?", [owner]
        return int(self._db.query_dicts_blocking(sql, args)[0]["n"])

    def delete(self, owner: str, note_id: int) -> bool:
        return self._db.write_blocking(
            "DELETE FROM notes WHERE id = ? AND owner = ?", (note_id, owner)
        ).rowcount > 0


def register(mcp: MCPServer, rt: DeviceRuntime) -> None:
    store = NoteStore(rt.data_dir / "notes.sqlite3")

    @mcp.tool(annotations=WRITE)
    def notes_add(
        title: str, body: str = "", tags: list[str] | None = None, ctx: Context | None = None
    ) -> CallToolResult:
        """Save a note (kept on this machine, in Sentinel's data dir)."""
        if not title.strip():
            return error_result("title must not be empty")
        tags = tags or []
        if len(title) > MAX_TITLE or len(body) > MAX_BODY:
            return error_result(f"a note's title is at most {MAX_TITLE} characters and its body {MAX_BODY:,} "
                                f"(this one: {len(title):,} and {len(body):,})")
        if len(tags) > MAX_TAGS or any(len(t) > MAX_TAG or "," in t for t in tags):
            return error_result(f"a note has at most {MAX_TAGS} tags of at most {MAX_TAG} characters each, "
                                "none with a comma")
        owner = _owner(ctx)
        if store.count(owner) >= MAX_NOTES:
            return error_result(f"you have {MAX_NOTES:,} notes, the most one caller keeps; delete some first")
        if store.count() >= MAX_ALL_NOTES:
            return error_result(f"the notes store holds {MAX_ALL_NOTES:,} notes, its most")
        note_id = store.add(owner, title.strip(), body, tags)
        return read_result(f"saved note {note_id}", {"id": note_id})

    @mcp.tool(annotations=READ)
    def notes_search(query: str | None = None, limit: int = 20, ctx: Context | None = None) -> CallToolResult:
        """Your notes, newest first; with `query`, only those whose title, body or tags contain it."""
        notes = store.list(_owner(ctx), query, max(1, min(limit, 200)))
        text = "\n".join(f"[{n['id']}] {n['title']}: {n['body'][:120]}" for n in notes)
        return read_result(text or "no notes", {"notes": notes}, untrusted="notes")

    @mcp.tool(annotations=DELETE)
    def notes_delete(note_id: int, ctx: Context | None = None) -> CallToolResult:
        """Delete one of your notes by id."""
        if not store.delete(_owner(ctx), note_id):
            return error_result(f"no note {note_id}")
        return read_result(f"deleted note {note_id}", {"deleted": note_id})


def _owner(ctx: Context | None) -> str:
    """Whose notes: the principal the gateway names for the call; standalone, the owner."""
    return principal_of(ctx, default=OWNER_NAME) if ctx is not None else OWNER_NAME
