"""A PostgreSQL store's reads: off the writer thread, on a small pool of autocommit connections, and on a
fresh connection when the pool cannot serve (a server restarted under it, its reconnects backing off). While
the store is degraded one connection at a time tries the server and the other reads share its word
(``server_trial.py``). Mixed into ``PostgresDatabase``, which holds the pool and the connection set-up."""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any

from sentinel_mcp.storage.database import Params, StorageError
from sentinel_mcp.storage.health import StoreHealth
from sentinel_mcp.storage.server_connection import fetch
from sentinel_mcp.storage.server_driver import VALUE_ERRORS, is_fault, psycopg_driver, reported_fault
from sentinel_mcp.storage.server_trial import ServerTrial


class PooledReads:
    """The reads of ``PostgresDatabase`` (its fields and connection set-up are its own)."""

    name: str
    health: StoreHealth
    _pool: Any
    _readers: concurrent.futures.ThreadPoolExecutor
    _trial: ServerTrial
    _pool_doubtful: bool
    _moved: str | None

    def _fresh_connection(self) -> Any:
        """A new autocommit connection to the server, not yet configured."""
        raise NotImplementedError

    def _configure(self, conn: Any) -> None:
        raise NotImplementedError

    def _recheck(self, conn: Any) -> bool:
        raise NotImplementedError

    def _say(self, e: BaseException) -> str:
        raise NotImplementedError

    def _refused(self, e: BaseException) -> BaseException:
        raise NotImplementedError

    def _fault(self, e: BaseException) -> StorageError:
        raise NotImplementedError

    async def _read_async(self, sql: str, params: Params, dicts: bool) -> Any:
        attempt = self._trial.running
        if attempt is not None:  # degraded, a read is trying the server: its word, awaited off the readers
            failed = await self._trial.heard(attempt, self._unavailable())
            if failed is not None:
                raise StorageError(str(failed))
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._readers, self._read, sql, params, dicts)

    def _read(self, sql: str, params: Params, dicts: bool) -> Any:
        try:
            return self._read_pooled(sql, params, dicts)
        except StorageError:
            raise
        except (psycopg_driver().Error, *VALUE_ERRORS) as e:
            # faults are StorageErrors by now: the statement's own
            raise self._refused(e) from None

    def _read_pooled(self, sql: str, params: Params, dicts: bool) -> Any:
        if self._pool is None:
            raise StorageError(f"{self.name} store is closed")
        if self._moved is not None:  # a newer replica migrated a store of ours: never again in this process
            self.health.degrade(self._moved)
            raise StorageError(self._moved)
        psycopg = psycopg_driver()
        started = self.health.reading()
        if not self.health.ok:
            self._pool_doubtful = True
        if self._pool_doubtful and not self._pool.get_stats().get("pool_available"):
            # a fault since the pool last served, none idle: its reconnects back off (1 s, 2 s, 4 s... even
            # once the server is back), and a read waiting on it would wait its whole timeout on every call's
            # way (past a balancer's patience, past a rulebase follower's ``stale_after``)
            rows = self._read_direct(sql, params, dicts, None, started)
            self._pool.check()  # it grows again at once if it gave up its reconnects (a no-op otherwise)
            return rows
        try:
            with self._pool.connection() as conn:
                rows = fetch(conn, sql, params, dicts) if self._recheck(conn) else None
                if rows is None:
                    conn.close()  # the pool drops it when it comes back, and opens another
            if rows is None:  # the server closed that one: on a fresh connection (as after a fault)
                return self._read_direct(sql, params, dicts, None, started)
            self._pool_doubtful = False  # the pool serves again: reads wait on it as usual
            return rows
        except psycopg.Error as e:
            if not is_fault(e):
                raise
            self._pool_doubtful = True
            # the pool hands out idle connections unchecked (a check would cost a round trip per read):
            # after a server restart each one it held is dead. A read changes nothing, so it is run once
            # more on a fresh connection; once that works the pool drops its other dead ones in one sweep.
            rows = self._read_direct(sql, params, dicts, e, started)
            self._pool.check()
            return rows
        except Exception as e:  # the pool's own timeout (server unreachable)
            if type(e).__name__ == "PoolTimeout":
                self._pool_doubtful = True
                # after an outage the pool may still be backing off its reconnects while the server is back:
                # one direct connection decides (so the first call after a restart is not refused)
                return self._read_direct(sql, params, dicts, e, started)
            raise

    def _unavailable(self) -> str:
        return self.health.cause or f"{self.name} store is unavailable"

    def _read_fault(self, e: BaseException, started: float) -> StorageError:
        """A read's fault degrades health, unless the store recovered while the read was failing (a slow read
        begun during an outage must not mark a store that works again as down)."""
        if self.health.recovered_after(started):
            return StorageError(self._say(e))
        return self._fault(e)

    def _read_direct(
        self, sql: str, params: Params, dicts: bool, cause: BaseException | None, started: float
    ) -> Any:
        """A read on a fresh connection; while the store is degraded one such connection at a time tries the
        server and the others share its word (``server_trial.py``)."""
        psycopg = psycopg_driver()
        unavailable = self._unavailable()
        attempt = None
        if not self.health.ok:
            mine, attempt = self._trial.enter()
            if not mine:
                failed = self._trial.word(attempt, unavailable)
                if failed is not None:
                    raise StorageError(str(failed))
                attempt = None  # the server took a connection: this read runs on its own
        failed = StorageError(unavailable)
        try:
            try:
                conn = self._fresh_connection()
            except psycopg.Error as e:
                if is_fault(e):
                    failed = self._read_fault(reported_fault(e, cause), started)
                    raise failed from None
                raise
            failed = None
        finally:
            if attempt is not None:
                self._trial.settle(attempt, failed)
        try:
            with conn:
                self._configure(conn)
                return fetch(conn, sql, params, dicts)
        except psycopg.Error as e:
            if is_fault(e):
                raise self._read_fault(reported_fault(e, cause), started) from None
            raise
