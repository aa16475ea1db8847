"""Notes: a local SQLite store in the built-in's data dir (nothing goes to the phone)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations

from ..results import error_result, read_result
from ..runtime import DeviceRuntime
from ..ui_tools import READ

SCHEMA = """CREATE TABLE IF NOT EXISTS notes (
  id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, body TEXT NOT NULL DEFAULT '',
  tags TEXT NOT NULL DEFAULT '', created TEXT NOT NULL)"""
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
DELETE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


class NoteStore:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        with closing(self._db()) as db, db:
            db.execute(SCHEMA)

    def _db(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=5)
        db.row_factory = sqlite3.Row
        return db

    def add(self, title: str, body: str, tags: list[str]) -> int:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with closing(self._db()) as db, db:
            cur = db.execute(
                "INSERT INTO notes (title, body, tags, created) VALUES (?, ?, ?, ?)",
                (title, body, ",".join(t.strip() for t in tags if t.strip()), now),
            )
            return int(cur.lastrowid)

    def list(self, query: str | None, limit: int) -> list[dict]:
        sql, args = "SELECT * FROM notes", []
        if query:
            sql += " WHERE title LIKE ? ESCAPE '\\' OR body LIKE ? ESCAPE '\\' OR tags LIKE ? ESCAPE '\\'"
            like = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            args = [like, like, like]
        sql += " ORDER BY id DESC LIMIT ?"
        with closing(self._db()) as db:
            return [dict(r) for r in db.execute(sql, [*args, limit])]

    def delete(self, note_id: int) -> bool:
        with closing(self._db()) as db, db:
            return db.execute("DELETE FROM notes WHERE id = ?", (note_id,)).rowcount > 0


def register(mcp: MCPServer, rt: DeviceRuntime) -> None:
    store = NoteStore(rt.data_dir / "notes.sqlite3")

    @mcp.tool(annotations=WRITE)
    def notes_add(title: str, body: str = "", tags: list[str] | None = None) -> CallToolResult:
        """Save a note (kept on this machine, in Sentinel's data dir)."""
        if not title.strip():
            return error_result("title must not be empty")
        note_id = store.add(title.strip(), body, tags or [])
        return read_result(f"saved note {note_id}", {"id": note_id})

    @mcp.tool(annotations=READ)
    def notes_search(query: str | None = None, limit: int = 20) -> CallToolResult:
        """Notes, newest first; with `query`, only those whose title, body or tags contain it."""
        notes = store.list(query, max(1, min(limit, 200)))
        text = "\n".join(f"[{n['id']}] {n['title']}: {n['body'][:120]}" for n in notes)
        return read_result(text or "no notes", {"notes": notes}, untrusted="notes")

    @mcp.tool(annotations=DELETE)
    def notes_delete(note_id: int) -> CallToolResult:
        """Delete one note by id."""
        if not store.delete(note_id):
            return error_result(f"no note {note_id}")
        return read_result(f"deleted note {note_id}", {"deleted": note_id})
