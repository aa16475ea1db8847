"""The one storage seam: every store (audit, facts, A2A tasks, swarm, sensors) goes through it.

A store names its schema (``Schema``: versioned migrations per backend) and talks to a ``Database``:
``query`` to read, ``write`` / ``run`` to change (atomic, durable when they return; many concurrent
writers share one commit), ``consume`` for atomic single-use reads (``DELETE ... RETURNING``). Faults
surface as ``StorageError`` and turn the database's ``health`` to degraded until a write succeeds again.

SQLite is the embedded backend (``sqlite.py``); a server backend (PostgreSQL) implements the same
``Database`` protocol, so stores and their callers do not change.
"""

from sentinel_mcp.storage.database import Database, Statement, StorageError, WriteResult
from sentinel_mcp.storage.health import StoreHealth, storage_problems
from sentinel_mcp.storage.open import close_all, open_database
from sentinel_mcp.storage.schema import Schema

__all__ = ["Database", "Schema", "Statement", "StorageError", "StoreHealth", "WriteResult", "close_all",
           "open_database", "storage_problems"]
