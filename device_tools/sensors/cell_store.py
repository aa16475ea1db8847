"""Where the coarse cell each scope showed last is kept: the sensors' store, which replicas share.

Held in the process, the cell shown was lost on a restart and was another in each replica: each started
from the next fix's own cell, so a requester alternating replicas (or reading after restarts) got one fresh
rounding of a still phone per replica, and the share of each cell among them tells where between them it
lies. Kept in the store, one cell is shown by every replica and after a restart (``location_cells.py``).
Keyed by source (``termux``, ``adb:<serial>``, ``simulated``): one phone's cells. On a server store each
row is signed (``storage/row_signature.py``): a cell someone with write access to the database wrote, to
learn whether the phone lies within a margin of it, is not taken (the fix's own cell is shown and kept).
Two replicas reading at once may each write: whichever writes last is the cell kept, a cell either showed.
"""

from __future__ import annotations

from device_tools.sensors.database import SensorDatabase
from sentinel_mcp.storage.row_signature import sign_row, signed_row

PURPOSE = "sensor cell"  # the row signature's purpose
_PUT = (
    "INSERT INTO sensor_cells (source, scope, latitude, longitude, mac) VALUES (?,?,?,?,?) "
    "ON CONFLICT (source, scope) DO UPDATE SET latitude = excluded.latitude, longitude = excluded.longitude, "
    "mac = excluded.mac"
)


class CellStore:
    def __init__(self, db: SensorDatabase) -> None:
        self._db = db

    def get(self, source: str, scope: str) -> tuple[float, float] | None:
        rows = self._db.query(
            "SELECT latitude, longitude, mac FROM sensor_cells WHERE source=? AND scope=?", (source, scope)
        )
        if not rows:
            return None
        lat, lon = rows[0]["latitude"], rows[0]["longitude"]
        if not all(isinstance(v, float) for v in (lat, lon)):
            return None
        if self._db.shared and not signed_row(self._db.row_key, rows[0]["mac"], PURPOSE,
                                              (source, scope, lat, lon)):
            return None
        return lat, lon

    def put(self, source: str, scope: str, cell: tuple[float, float]) -> None:
        row = (source, scope, float(cell[0]), float(cell[1]))
        mac = sign_row(self._db.row_key, PURPOSE, row) if self._db.shared else ""
        self._db.execute(_PUT, (*row, mac))
