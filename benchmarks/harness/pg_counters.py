"""What the storage benchmark reads from the processes and PostgreSQL's own counters: CPU of a process tree
(/proc), the postmaster's pid, statements run (pg_stat_statements) and commits (pg_stat_database) in one
database. Used by ``benchmarks/storage_backends.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

from sentinel_mcp.storage.local_server import LocalServer


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) a live process and its live children used so far (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    todo, seen = [pid], set()
    while todo and len(seen) < 500:  # bounded walk
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError, IndexError):
            continue
    return total


def postmaster(server: LocalServer) -> int:
    return int((server.data / "postmaster.pid").read_text().split()[0])


def statements(url: str) -> int:
    """Statements the server ran in this database so far (pg_stat_statements: each one a round trip)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE dbid = "
            "(SELECT oid FROM pg_database WHERE datname = current_database())"
        ).fetchone()
        return int(row[0]) if row else 0


def top_statements(url: str, calls: int, n: int = 8) -> list[tuple[float, str]]:
    """The statements behind the round trips: (per call, text) of the most frequent ones."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT calls, regexp_replace(query, '\\s+', ' ', 'g') FROM pg_stat_statements "
            "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "ORDER BY calls DESC LIMIT %s",
            (n,),
        ).fetchall()
    return [(int(c) / calls, str(q)[:90]) for c, q in rows]


def commits(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return int(
            conn.execute(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
            ).fetchone()[0]
        )
