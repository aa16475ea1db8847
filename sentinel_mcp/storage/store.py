"""A store's life on the seam: open its database (schema migrated), hand it out while open, release it.

Every async store (facts, swarm builds, the agent's traces) opens the same way: ``open_database`` at its
location (a SQLite file, or a ``postgresql://`` URL replicas share), its ``Schema`` applied, the database
released again if that fails; ``db`` refuses while closed. What differs is named on the subclass: the
schema, the database's name, the SQLite options, and what "not open" raises.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Self

from sentinel_mcp.storage.database import Database
from sentinel_mcp.storage.location import is_server_url
from sentinel_mcp.storage.open import open_database, release
from sentinel_mcp.storage.schema import Schema
from sentinel_mcp.storage.sqlite import SHARED, SQLiteOptions


class SeamStore:
    schema: ClassVar[Schema]
    database_name: ClassVar[str]  # the database's name in health reports ("facts", "swarm", ...)
    # shared by default: a data dir's stores are written by every gateway on it (rollback journal, no -shm)
    options: ClassVar[SQLiteOptions] = SHARED

    def __init__(self, location: str | Path) -> None:
        # a SQLite file, or a postgresql:// URL shared by replicas (kept as text: a Path would mangle it)
        self.shared = is_server_url(location)
        self.path: Any = str(location) if self.shared else Path(location)
        self._db: Database | None = None

    @property
    def database(self) -> Database | None:
        """The open database (None before ``open`` and after ``close``): its health is the store's."""
        return self._db

    @property
    def is_open(self) -> bool:
        return self._db is not None

    async def open(self) -> Self:
        if self._db is not None:
            return self
        db = open_database(self.path, self.database_name, self.options)
        try:
            await db.migrate(self.schema)
        except BaseException:
            await release(db)
            raise
        self._db = db
        return self

    async def close(self) -> None:
        if self._db is not None:
            db, self._db = self._db, None
            await release(db)

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def not_open(self) -> Exception:
        """What using a closed store raises (a store with its own error names it here)."""
        return RuntimeError(f"the {self.database_name} store is not open")

    @property
    def db(self) -> Database:
        if self._db is None:
            raise self.not_open()
        return self._db
