"""The gateway's audit rows of finished calls, from every instance's log under a data dir."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from sentinel_mcp.gateway.audit import audit_files


def audit_rows(data_dir: Path, columns: str, where: str = "1", *args: Any) -> list[tuple[Any, ...]]:
    """``SELECT columns FROM audit WHERE where`` over every log, leaving out the decision rows that an allowed
    call writes before it runs (one row per finished call). Read it once the gateway has stopped (its writer
    holds the log while it runs)."""
    rows: list[tuple[Any, ...]] = []
    for file in audit_files(data_dir / "sentinel.db"):
        with sqlite3.connect(file) as db:
            rows += db.execute(f"SELECT {columns} FROM audit WHERE event != 'decision' AND {where}",
                               args).fetchall()
        db.close()
    return rows
