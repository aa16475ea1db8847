"""One turn shared by every replica of a PostgreSQL store: a transaction-scoped advisory lock, held on a
connection of its own for as long as the turn is.

Why this shape: the lock is the server's and lives exactly as long as the transaction (or the session) that
took it. A replica that dies holding it (killed, crashed, its connection reset) ends its session, and the
server releases the lock with it: no lease, no timeout on which a holder is presumed dead. The server's
``idle_in_transaction_session_timeout`` is turned off for this connection (a holder waits on an upstream call,
idle in its transaction, and a server-wide setting must not end its turn under it), and its TCP keep-alives
are short, so a holder whose host vanished (no reset ever comes) is found gone within about 20 seconds. A
replica that hangs but lives keeps its turn: it may still be sending the write the turn is for.

Taking it waits at most ``wait`` seconds in all (``lock_timeout``, on the server, the time left for each
lock), counted from the call (a taker queued for a thread has waited already); 0 tries once. A turn of several
names takes their locks on its one connection in the order given (every taker sorts them: none holds one
another waits for). A turn that cannot be had, because another holds it or the server cannot be reached, is
refused (``why`` says which): the caller denies the call, never runs it without the turn.

A turn is taken on every write of a server store, and a fresh connection for each (a server process forked,
its settings sent) was most of its cost. So a few idle connections are kept for the next turns, in a list of
this module's own (no other code uses them): one goes back only once its transaction was rolled back without
fault (no lock left on it for a stranger), else it is closed. One found broken when used is closed and the
turn taken on a fresh connection, once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, AsyncIterator

from sentinel_mcp.storage.database import StorageError
from sentinel_mcp.storage.location import ServerLocation

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 3  # seconds: as the store's own connections (postgres.py)
# the server's side of the turn's connection, for its session: probe an idle peer after 5 s, every 5 s, gone
# after 3 misses; one round trip (no parameters: one simple query of several statements)
_KEEPALIVES = ("SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3; "
               "SET idle_in_transaction_session_timeout = 0")
_IDLE_MAX = 8  # idle connections kept, all stores together (a test run opens many databases)
_idle: list[tuple[str, Any]] = []  # (dsn, connection): no transaction open; the newest last
_idle_lock = threading.Lock()
# threads of their own: a taker may wait up to its bound on the server, and must not hold a worker of the
# loop's default pool (a few on a small machine) that every ``to_thread`` shares; writes to different
# upstreams each wait for their own turn (session_writes.py), so more than a few may wait at once
_THREADS = concurrent.futures.ThreadPoolExecutor(16, thread_name_prefix="server-turn")
_TAKE = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"
_TRY = "SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0))"


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a turn was not had: ``busy`` (another holds it past the wait) or the store's fault."""

    why: str
    busy: bool


def _connection(location: ServerLocation) -> tuple[Any, bool]:
    """An idle connection to the store (and True), else a fresh one (raises ``psycopg.Error``)."""
    import psycopg

    with _idle_lock:
        for i in range(len(_idle) - 1, -1, -1):
            if _idle[i][0] == location.dsn:
                return _idle.pop(i)[1], True
    conn = psycopg.connect(location.dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
    try:
        conn.execute(_KEEPALIVES)
        conn.autocommit = False
    except BaseException:
        conn.close()
        raise
    return conn, False


def _take(location: ServerLocation, names: tuple[str, ...], wait: float, deadline: float) -> Any:
    """The connection holding every turn of ``names``, or a Refusal (blocking: run in a thread).
    ``deadline``: ``time.monotonic()`` past which a wait (``wait`` > 0) is refused."""
    import psycopg

    while True:
        try:
            conn, reused = _connection(location)
        except psycopg.Error as e:
            return Refusal(_said(location, e), busy=False)
        try:
            _lock(conn, names, wait, deadline)
            return conn
        except psycopg.errors.LockNotAvailable:
            _give_back(location, conn)
            return Refusal(f"another replica held the turn for more than {wait:g} s", busy=True)
        except _Busy:
            _give_back(location, conn)
            return Refusal("another replica holds the turn", busy=True)
        except psycopg.Error as e:
            conn.close()
            if reused:  # gone stale while idle (the server restarted, the session ended): once more, fresh
                continue
            return Refusal(_said(location, e), busy=False)
        except BaseException:
            conn.close()
            raise


class _Busy(StorageError):
    """A lock tried once was held by another (caught within this module: never a storage fault)."""


def _lock(conn: Any, names: tuple[str, ...], wait: float, deadline: float) -> None:
    """Every lock of ``names`` in order, on ``conn``'s transaction (opened by the first statement)."""
    import psycopg

    for name in names:
        if wait <= 0:
            got = conn.execute(_TRY, (name,)).fetchone()
            if not (got and got[0] is True):
                raise _Busy
            continue
        ms = int((deadline - time.monotonic()) * 1000)
        if ms < 1:
            raise psycopg.errors.LockNotAvailable("no time left")
        conn.execute(f"SET LOCAL lock_timeout = {ms}; SET LOCAL statement_timeout = {ms + 5000}")
        conn.execute(_TAKE, (name,))


def _give_back(location: ServerLocation, conn: Any) -> None:
    """The transaction rolled back (every lock of it given back with it), the connection kept idle for the
    next turn; closed if that fails (closing ends the session, and its locks, all the same)."""
    try:
        conn.rollback()
    except Exception:  # noqa: BLE001 - closed below
        conn.close()
        return
    with _idle_lock:
        _idle.append((location.dsn, conn))
        gone = _idle.pop(0)[1] if len(_idle) > _IDLE_MAX else None
    if gone is not None:
        gone.close()


def _said(location: ServerLocation, e: BaseException) -> str:
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return location.scrub(f"the store {location.redacted} could not give the turn: {first}")


def _end(location: ServerLocation, conn: Any) -> None:
    """Give the turn back: the transaction rolled back (it wrote nothing), the connection kept idle. A
    connection lost while held is said in the log: the server ended the turn early then."""
    if conn.broken or conn.closed:
        log.warning("the cluster's turn was lost while held (its connection to the store broke)")
        conn.close()
        return
    _give_back(location, conn)


def _close_when_taken(fut: "asyncio.Future[Any]") -> None:
    """A taker that gave up (its caller cancelled) while the thread still waited: the turn, if it came, is
    given back at once (the connection closed: the server rolls back and ends the session; no round trip
    is waited for on the loop)."""
    if fut.cancelled() or fut.exception() is not None:
        return
    got = fut.result()
    if not isinstance(got, Refusal):
        got.close()


@contextlib.asynccontextmanager
async def server_turn(location: ServerLocation, name: str | tuple[str, ...], *,
                      wait: float) -> AsyncIterator[Refusal | None]:
    """None while the turn named ``name`` (or every one of the names, taken in their order) is held (given
    back on leaving); a ``Refusal`` when it was not had within ``wait`` seconds (0: tried once) or the server
    could not give it."""
    loop = asyncio.get_running_loop()
    names = (name,) if isinstance(name, str) else name
    taking = loop.run_in_executor(_THREADS, _take, location, names, wait, time.monotonic() + wait)
    try:
        got = await asyncio.shield(taking)
    except asyncio.CancelledError:
        taking.add_done_callback(_close_when_taken)
        raise
    if isinstance(got, Refusal):
        yield got
        return
    try:
        yield None
    finally:
        # shielded: a cancelled caller leaves, and the thread still gives the turn back
        await asyncio.shield(loop.run_in_executor(_THREADS, _end, location, got))
