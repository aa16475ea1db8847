"""Every rulebase this Sentinel loaded (or tried to): its version (the content hash), when, what loaded it
(start-up, hot reload after a file changed) and by whom (the OS user and process), and the files' texts, so
any two versions can be compared. Kept next to the facts (``<data dir>/policy_history.db``, shared: several
gateways on one data dir record into it); the texts are stored once per version.

Recording is best effort by design: the rulebase in force never depends on its history being written (a
history that cannot be written is logged, and the load stands).
"""

from __future__ import annotations

import difflib
import errno
import getpass
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from sentinel_mcp.core.outside_file import TooLarge, read_regular_bytes
from sentinel_mcp.policy.clause_bounds import MAX_FILE_BYTES
from sentinel_mcp.policy.rulebase_includes import named_files
from sentinel_mcp.storage import Schema, open_database
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.sqlite import SHARED

log = logging.getLogger(__name__)
KEEP_LOADS = 1000  # the newest loads kept; texts of versions no load names any more go with them
MAX_TEXT = 400_000  # characters of one version's files kept

_TABLES = [
    """CREATE TABLE IF NOT EXISTS rulebase_loads (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ts REAL NOT NULL,
        version TEXT NOT NULL,
        ok INTEGER NOT NULL,
        cause TEXT NOT NULL,
        loaded_by TEXT NOT NULL,
        error TEXT,
        files TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS rulebase_texts (
        version TEXT PRIMARY KEY,
        texts TEXT NOT NULL
    )""",
]
SCHEMA = Schema("policy_history", {"sqlite": list(_TABLES)})


def loader() -> str:
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name in this environment
        user = f"uid {os.getuid()}"
    return f"{user} (Sentinel pid {os.getpid()})"


def read_texts(files: list[Path]) -> dict[str, str]:
    """The files' texts as recorded with a version; only regular files are read (the attempted set may be a
    refused one: a FIFO would wait for a writer forever, /dev/zero never end)."""
    out: dict[str, str] = {}
    for name, f in named_files(files):  # the files they include too, by the name each include gives
        try:
            out[name] = read_regular_bytes(f, MAX_FILE_BYTES).decode("utf-8", errors="replace")
        except TooLarge:
            out[name] = f"% unreadable: larger than {MAX_FILE_BYTES} bytes"
        except OSError as e:
            out[name] = "% unreadable: " + ("not a regular file" if e.errno == errno.ENXIO else
                                            str(e.strerror or e))
    return out


class PolicyHistory:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.db: Any = None

    async def open(self) -> "PolicyHistory":
        self.db = open_database(self.path, "policy_history", SHARED)
        try:
            await self.db.migrate(SCHEMA)
        except Exception:
            await release(self.db)
            self.db = None
            raise
        return self

    async def close(self) -> None:
        if self.db is not None:
            db, self.db = self.db, None
            await release(db)

    async def record(self, *, version: str, ok: bool, cause: str, texts: dict[str, str],
                     error: str | None = None, by: str | None = None) -> None:
        if self.db is None:
            return
        body = json.dumps(texts, ensure_ascii=False)
        if len(body) > MAX_TEXT:
            body = json.dumps({name: "% (not kept: the files are too large)" for name in texts})
        await self.db.write(
            "INSERT INTO rulebase_texts (version, texts) VALUES (?, ?) ON CONFLICT DO NOTHING",
            (version, body),
        )
        await self.db.write(
            "INSERT INTO rulebase_loads (ts, version, ok, cause, loaded_by, error, files) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                time.time(),
                version,
                int(ok),
                cause[:300],
                (by or loader())[:200],
                (error or "")[:4000] or None,
                json.dumps(sorted(texts)),
            ),
        )
        await self.db.write(
            "DELETE FROM rulebase_loads WHERE id <= (SELECT max(id) FROM rulebase_loads) - ?", (KEEP_LOADS,)
        )
        await self.db.write(
            "DELETE FROM rulebase_texts WHERE version NOT IN (SELECT DISTINCT version FROM rulebase_loads)"
        )

    async def loads(self, limit: int = 200) -> list[dict[str, Any]]:
        """Newest first."""
        if self.db is None:
            return []
        rows = await self.db.query_dicts("SELECT * FROM rulebase_loads ORDER BY id DESC LIMIT ?", (limit,))
        return [r | {"files": json.loads(r["files"])} for r in rows]

    async def texts(self, version: str) -> dict[str, str] | None:
        if self.db is None:
            return None
        rows = await self.db.query("SELECT texts FROM rulebase_texts WHERE version = ?", (version[:64],))
        return json.loads(rows[0][0]) if rows else None


def diff(old: dict[str, str], new: dict[str, str], old_name: str, new_name: str) -> list[tuple[str, str]]:
    """A unified diff of two versions' files: (kind, line) with kind one of head | add | del | hunk | same."""
    out: list[tuple[str, str]] = []
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name, "").splitlines(), new.get(name, "").splitlines()
        for line in difflib.unified_diff(
            a, b, f"{name} @ {old_name}", f"{name} @ {new_name}", lineterm="", n=3
        ):
            kind = (
                "head"
                if line.startswith(("---", "+++"))
                else "hunk"
                if line.startswith("@@")
                else "add"
                if line.startswith("+")
                else "del"
                if line.startswith("-")
                else "same"
            )
            out.append((kind, line))
    return out
