"""One turn shared by every replica of a PostgreSQL store: a transaction-scoped advisory lock, held on a
connection of its own for as long as the turn is.

Why this shape: the lock is the server's and lives exactly as long as the transaction (or the session) that
took it. A replica that dies holding it (killed, crashed, its connection reset) ends its session, and the
server releases the lock with it: no lease, no timeout on which a holder is presumed dead. The server's
``idle_in_transaction_session_timeout`` is turned off for this connection (a holder waits on an upstream call,
idle in its transaction, and a server-wide setting must not end its turn under it), and its TCP keep-alives
are short, so a holder whose host vanished (no reset ever comes) is found gone within about 20 seconds. A
replica that hangs but lives keeps its turn: it may still be sending the write the turn is for.

A turn is exactly its name: each name the cluster has used has a number of its own (``turn_names``: a row per
name, its number from an identity column, written once the first time any replica takes that turn and never
changed), and the turn is the advisory lock of that number, in the two-key space (``pg_advisory_xact_lock(int,
int)``, a class of Sentinel's own and the number), which no lock keyed by one 64-bit value shares. They were
keyed by a 64-bit hash of the name: two names that collide shared one lock, and two turns of several names
colliding crosswise took the same locks in opposite orders (a deadlock, one of them killed by the server);
the hash is not keyed, so names a client can choose could be made to collide. A replica keeps the numbers it
has read (they never change), so a turn costs its locks only; a name new to this replica costs one committed
upsert and one read first. The names are the configuration's and the rulebase's (upstreams, the kept facts),
so the table stays small.

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
import zlib
from dataclasses import dataclass
from typing import Any, AsyncIterator

from sentinel_mcp.storage.database import StorageError
from sentinel_mcp.storage.location import ServerLocation
from sentinel_mcp.storage.server_schema import apply_schema
from sentinel_mcp.storage.server_serving import version_table
from sentinel_mcp.storage.schema import Schema
from sentinel_mcp.storage.search_path import pin

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
TURN_CLASS = 0x53544E54  # the first key of every turn's lock (the second is the name's number)
TAKE = f"SELECT pg_advisory_xact_lock({TURN_CLASS}, %s::int)"
_TRY = f"SELECT pg_try_advisory_xact_lock({TURN_CLASS}, %s::int)"
SCHEMA = Schema("turn_names", {"postgres": [
    "CREATE TABLE turn_names (name TEXT PRIMARY KEY, id INTEGER GENERATED ALWAYS AS IDENTITY UNIQUE)"]})
_REGISTER = "INSERT INTO turn_names (name) SELECT unnest(%s::text[]) ON CONFLICT (name) DO NOTHING"
_NUMBERS = "SELECT name, id FROM turn_names WHERE name = ANY(%s::text[])"
_IDS_MAX = 4096  # names whose numbers a process keeps (they never change: a name dropped is read again)
_ids: dict[tuple[str, str], int] = {}  # (dsn, name) -> its number
_ready: set[str] = set()  # the dsns whose ``turn_names`` this process has migrated


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
        pin(conn, location.dsn)
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
        except StorageError as e:  # a search path another role controls (search_path.py)
            return Refusal(_said(location, e), busy=False)
        try:
            numbers = turn_numbers(conn, location.dsn, names)
            _lock(conn, numbers, wait, deadline)
            return conn
        except psycopg.errors.LockNotAvailable:
            _give_back(location, conn)
            return Refusal(f"another replica held the turn for more than {wait:g} s", busy=True)
        except _Busy:
            _give_back(location, conn)
            return Refusal("another replica holds the turn", busy=True)
        except StorageError as e:
            conn.close()
            return Refusal(_said(location, e), busy=False)
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


def turn_numbers(conn: Any, dsn: str, names: tuple[str, ...]) -> list[int]:
    """Each name's number, in order: kept ones at once; others registered (committed, whichever replica is
    first: the primary key makes it one row) and read, with no transaction left open."""
    missing = sorted({n for n in names if (dsn, n) not in _ids})
    if missing:
        if dsn not in _ready:
            # (under the migrations' lock of this store: takers racing to create it would collide)
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (zlib.crc32(SCHEMA.store.encode()),))
            migrates = version_table(conn)  # a serving role sends no DDL (``server_serving.py``)
            conn.commit()
            conn.autocommit = True
            try:
                apply_schema(conn, SCHEMA, migrates)
            finally:
                conn.autocommit = False
            _ready.add(dsn)
        conn.execute(_REGISTER, (missing,))
        conn.commit()
        found = conn.execute(_NUMBERS, (missing,)).fetchall()
        conn.rollback()
        out = {str(name): int(number) for name, number in found}
        if set(out) != set(missing):
            raise StorageError("the turn of a name could not be numbered")
        known = {n: _ids.get((dsn, n)) for n in names if n not in out}
        if None in known.values():  # dropped meanwhile (another thread cleared the kept numbers): read again
            return turn_numbers(conn, dsn, names)
        if len(_ids) + len(out) > _IDS_MAX:
            _ids.clear()
        _ids.update(((dsn, n), i) for n, i in out.items())
        return [out[n] if n in out else known[n] for n in names]  # type: ignore[misc]
    try:
        return [_ids[(dsn, n)] for n in names]
    except KeyError:  # dropped meanwhile: read again
        return turn_numbers(conn, dsn, names)


def _lock(conn: Any, numbers: list[int], wait: float, deadline: float) -> None:
    """Every turn's lock of ``numbers`` in order, on ``conn``'s transaction (opened by the first
    statement)."""
    import psycopg

    for name in numbers:
        if wait <= 0:
            got = conn.execute(_TRY, (name,)).fetchone()
            if not (got and got[0] is True):
                raise _Busy
            continue
        ms = int((deadline - time.monotonic()) * 1000)
        if ms < 1:
            raise psycopg.errors.LockNotAvailable("no time left")
        conn.execute(f"SET LOCAL lock_timeout = {ms}; SET LOCAL statement_timeout = {ms + 5000}")
        conn.execute(TAKE, (name,))


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
