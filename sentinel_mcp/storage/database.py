"""The backend-neutral contract of a database behind the storage seam.

SQL is written once for all backends: ``?`` placeholders, ``ON CONFLICT`` upserts, ``RETURNING``; the
backend translates placeholders. Anything backend-specific (types, functions) lives in a ``Schema``'s
per-backend migrations. Rows come back as tuples (plain data: this is the hot path).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

from sentinel_mcp.storage.health import StoreHealth
from sentinel_mcp.core.errors import SentinelError

Params = Sequence[Any]


class StorageError(SentinelError):
    """The store cannot be read or written (disk fault, read-only, deleted, full). Callers fail closed."""
    area = "storage"
    prefixed = False  # its messages say "the store ..." themselves


class StatementError(StorageError):
    """A statement refused for what it carries, not for the store: a value its column cannot hold (a NUL
    character, a lone surrogate, a number out of range: a client's), a constraint. That job fails (callers
    fail closed, as on any StorageError); the store stays healthy."""


@dataclass(frozen=True, slots=True)
class Statement:
    sql: str
    params: Params = ()
    many: bool = False  # params is a sequence of parameter rows (executemany)


@dataclass(slots=True)
class WriteResult:
    rowcount: int
    lastrowid: int | None
    rows: list[tuple[Any, ...]]  # what a RETURNING clause gave


class Database(Protocol):
    """One database (file or server) shared by every store that lives in it."""

    name: str
    health: StoreHealth
    # a multi-row ``VALUES`` list keeps each bound value's own type, and an upsert may meet a row twice in one
    # statement (SQLite); PostgreSQL types the list's columns on its own, so its rows keep a statement each
    multi_row_values: bool

    async def migrate(self, schema: Any) -> None: ...

    async def query(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]: ...

    async def query_dicts(self, sql: str, params: Params = ()) -> list[dict[str, Any]]: ...

    async def write(self, sql: str, params: Params = ()) -> WriteResult: ...

    async def run(self, statements: Sequence[Statement]) -> list[WriteResult]:
        """All statements in one transaction, committed (durably) before this returns."""
        ...

    def submit_write(self, statements: Sequence[Statement]) -> "asyncio.Future[list[WriteResult]]":
        """``run(statements)`` queued now, in order with the writes queued before and after it; its future is
        returned at once (awaited when the caller must know it is durable)."""
        ...

    async def consume(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Atomic single use: a ``DELETE ... RETURNING`` (or ``UPDATE ... RETURNING``) whose rows only one
        caller can ever get, across processes and replicas."""
        ...

    async def probe(self) -> bool:
        """Try a tiny durable write; health follows the answer (how a degraded store notices recovery)."""
        ...

    def write_inline(self, make: Callable[[], list[Statement]]) -> list[WriteResult] | None:
        """``run(make())`` committed on the calling thread now if that is cheaper than the writer's round trip
        (it is idle, the store local and healthy); None, without calling ``make``, when it is not."""
        ...

    def query_blocking(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]: ...

    def query_dicts_blocking(self, sql: str, params: Params = ()) -> list[dict[str, Any]]: ...

    def write_blocking(self, sql: str, params: Params = ()) -> WriteResult: ...

    def run_blocking(self, statements: Sequence[Statement]) -> list[WriteResult]: ...

    async def close(self) -> None: ...
