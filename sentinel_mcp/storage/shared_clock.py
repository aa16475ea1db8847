"""The clock expiries shared by replicas are kept by: the database's, on a server store.

Replicas run on machines whose clocks may disagree. An expiry written by one replica and checked by another
on their own clocks is stretched by a replica running ahead and ignored by one running behind (it uses what
expired everywhere else). On a server store such expiries are set and compared in SQL on the database's
clock (as the build and task leases are); a SQLite file is one machine's, read with the process's clock.
"""

from __future__ import annotations

from typing import Any, Callable

# seconds since the epoch on the database's clock, as a float (EXTRACT alone gives a numeric)
DB_NOW = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)"


def on_server_clock(db: Any) -> bool:
    return getattr(db, "backend", "") == "postgres"


def clocked(
    db: Any, sql: str, params: tuple[Any, ...], at: int, clock: Callable[[], float]
) -> tuple[str, tuple[Any, ...]]:
    """``sql`` with its one ``{now}``: the database's clock on a server store, else ``clock()`` bound as the
    parameter at position ``at`` (where ``{now}`` stands among the placeholders)."""
    if on_server_clock(db):
        return sql.format(now=DB_NOW), params
    return sql.format(now="?"), (*params[:at], clock(), *params[at:])


def not_expired(rows: list[tuple[Any, ...]]) -> bool:
    """The first row's ``(expiry, now)``: both numbers (type-strict, no booleans) and not expired."""
    if not rows or len(rows[0]) < 2:
        return False
    expires, now = rows[0][0], rows[0][1]
    numbers = (int, float)
    if not isinstance(expires, numbers) or isinstance(expires, bool):
        return False
    return isinstance(now, numbers) and not isinstance(now, bool) and float(expires) >= float(now)
