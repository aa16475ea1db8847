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
refused (``why`` says which): the caller denies the call, never runs it without the turn. The connection is
made fresh for each turn and closed after: a pooled connection handed back with its transaction open would
keep the lock for a stranger.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any, AsyncIterator

from sentinel_mcp.storage.location import ServerLocation

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 3  # seconds: as the store's own connections (postgres.py)
# the server's side of the turn's connection: probe an idle peer after 5 s, every 5 s, gone after 3 misses;
# one round trip (no parameters: one simple query of several statements)
_KEEPALIVES = ("SET LOCAL tcp_keepalives_idle = 5; SET LOCAL tcp_keepalives_interval = 5; "
               "SET LOCAL tcp_keepalives_count = 3; SET LOCAL idle_in_transaction_session_timeout = 0")
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


def _take(location: ServerLocation, names: tuple[str, ...], wait: float, deadline: float) -> Any:
    """The connection holding every turn of ``names``, or a Refusal (blocking: run in a thread).
    ``deadline``: ``time.monotonic()`` past which a wait (``wait`` > 0) is refused."""
    import psycopg

    try:
        conn = psycopg.connect(location.dsn, autocommit=False, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.Error as e:
        return Refusal(_said(location, e), busy=False)
    try:
        conn.execute(_KEEPALIVES)
        for name in names:
            if wait <= 0:
                got = conn.execute(_TRY, (name,)).fetchone()
                if not (got and got[0] is True):
                    conn.close()
                    return Refusal("another replica holds the turn", busy=True)
                continue
            ms = int((deadline - time.monotonic()) * 1000)
            if ms < 1:
                raise psycopg.errors.LockNotAvailable("no time left")
            conn.execute(f"SET LOCAL lock_timeout = {ms}")
            conn.execute(f"SET LOCAL statement_timeout = {ms + 5000}")
            conn.execute(_TAKE, (name,))
        return conn
    except psycopg.errors.LockNotAvailable:
        conn.close()
        return Refusal(f"another replica held the turn for more than {wait:g} s", busy=True)
    except psycopg.Error as e:
        conn.close()
        return Refusal(_said(location, e), busy=False)
    except BaseException:
        conn.close()
        raise


def _said(location: ServerLocation, e: BaseException) -> str:
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return location.scrub(f"the store {location.redacted} could not give the turn: {first}")


def _end(conn: Any) -> None:
    """Give the turn back: the transaction rolled back (it wrote nothing), the connection closed. A
    connection lost while held is said in the log: the server ended the turn early then."""
    try:
        if conn.broken or conn.closed:
            log.warning("the cluster's turn was lost while held (its connection to the store broke)")
            return
        conn.rollback()
    except Exception:  # noqa: BLE001 - closing below ends the session (and the turn) all the same
        log.warning("the cluster's turn ended with its connection's fault", exc_info=True)
    finally:
        conn.close()


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
        await asyncio.shield(loop.run_in_executor(_THREADS, _end, got))
