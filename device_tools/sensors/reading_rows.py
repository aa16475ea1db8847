"""The signature of a retained sensor reading on a server store (``sensor_readings``), and its check.

A kept reading (a location, a photo, a scan) is handed back to the requester that read it, on any replica
(``sensor_retained``), until its retention ends. Unsigned, anyone who could write the shared database
without the seal key could hand one requester's readings to another in SQL, keep them past their retention,
or plant (or edit) a reading an agent then acts on. So the replica that keeps a reading signs it (the
sensors' key, ``SensorDatabase.row_key``, under its own purpose) over whose it is and what it says and for how
long: requester, task, sensor, scope, response, both times (read on the database's clock first, then
written as signed). A row that fails the check is nobody's: never returned. What a MAC cannot stop: a row
deleted and put back as it was, until its own expiry. Rows from before signing are no longer returned.
"""

from __future__ import annotations

from typing import Any, Mapping

from sentinel_mcp.storage.row_signature import sign_row, signed_row

PURPOSE = "sensor reading"
COLUMNS = ("requester", "task_id", "sensor", "scope", "response", "stored_at", "expires_at")


def mac(key: bytes, values: tuple[Any, ...]) -> str:
    """``values``: the ``COLUMNS`` in that order, as written."""
    return sign_row(key, PURPOSE, values)


def verified(key: bytes, row: Mapping[str, Any]) -> bool:
    """Whether a row read whole (``SELECT *``, as a mapping) carries the signature of its columns."""
    return signed_row(key, row.get("mac"), PURPOSE, tuple(row.get(c) for c in COLUMNS))
