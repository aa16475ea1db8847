"""What the PostgreSQL store does with one connection, apart from its life: an idle one's goodbye told
without a round trip, a read's rows, a writer's answer handed back to the caller's event loop."""

from __future__ import annotations

import asyncio
import select
from typing import Any, Callable

from sentinel_mcp.storage.database import Params
from sentinel_mcp.storage.row_bytes import bounded_sql


_translated: dict[str, str] = {}


def translate(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (a literal ``%`` doubled); no literal of ours holds ``?``."""
    out = _translated.get(sql)
    if out is None:
        out = sql.replace("%", "%%").replace("?", "%s")
        if len(_translated) < 4096:
            _translated[sql] = out
    return out


def resolver(
    loop: asyncio.AbstractEventLoop, fut: "asyncio.Future[Any]"
) -> Callable[[Any, BaseException | None], None]:
    def settle(value: Any, error: BaseException | None) -> None:
        if fut.done():
            return
        fut.set_exception(error) if error is not None else fut.set_result(value)

    def done(value: Any, error: BaseException | None) -> None:
        try:
            loop.call_soon_threadsafe(settle, value, error)
        except RuntimeError:
            pass

    return done


def said_goodbye(conn: Any) -> bool:
    """Whether the server wrote to (or closed) this idle connection: it only does when it ends the session
    (a shutdown, a restart, a terminated backend). Told without a round trip (a poll of the socket), so a
    write is never sent on a connection that is already gone, where its failure could not say whether it
    had been run."""
    try:
        return bool(select.select([conn.fileno()], [], [], 0)[0])
    except Exception:  # noqa: BLE001 - OSError, ValueError, the driver's own error for a socketless one
        return True


def fetch(conn: Any, sql: str, params: Params, dicts: bool) -> Any:
    """One read's rows, as tuples or as dicts by column name (the pooled and the direct read alike); a row
    over the bound refused by the server before it is sent (``row_bytes.py``)."""
    cur = conn.execute(bounded_sql(translate(sql), False), tuple(params))
    rows = cur.fetchall() if cur.description else []
    if dicts:
        names = [d.name for d in cur.description or ()]
        return [dict(zip(names, r)) for r in rows]
    return rows


QUIET, TOLD, GONE = "quiet", "told", "gone"
_NOTICES = 100_000  # notices drained at once at most (what one read of the socket brought: bounded anyway)


def heard(conn: Any) -> str:
    """What an idle connection heard since its last use, without a round trip: nothing (QUIET), a notice on a
    channel it listens to (TOLD: the notices are read off it), or the server's goodbye (GONE: anything
    else, a closed socket, an error). A notice can come from any role that may connect (NOTIFY needs no
    grant): the caller checks what it says on this same connection, it never reconnects for it."""
    if not said_goodbye(conn):
        return QUIET
    pgconn = conn.pgconn
    try:
        pgconn.consume_input()
    except Exception:  # noqa: BLE001 - the driver's error: the connection is gone
        return GONE
    told = False
    for _ in range(_NOTICES):
        if pgconn.notifies() is None:
            break
        told = True
    if not told or conn.broken or conn.closed or pgconn.status != 0:  # 0: CONNECTION_OK
        return GONE
    return TOLD
