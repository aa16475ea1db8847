"""The coarse cells a location is shown in below ``detailed`` scope, and the one each scope showed last.

Plain rounding of a fix that jitters leaks what it rounds away: a phone lying still next to a cell's edge
shows one cell or the other at random, and the share of reads in each tells where between them it lies
(averaging rounded noisy values recovers the precision). So the cell a scope showed is shown again while each
coordinate of the fix stays within a margin of it: half a cell, or three times the fix's stated accuracy
when that is wider (a network fix wanders further than a GPS one). A phone that stays put shows one cell
however often, and by whomever, it is read; one that moves on shows its new cell once it is well inside
it. The accuracy counted is at most 2 km, so a phone that claims to know nothing cannot hold a cell for good.

The cell shown is kept in the sensors' store when one is given (``cell_store.py``), which replicas share and a
restart keeps: held in the process, each replica (and each restart) started from the next fix's own cell, one
fresh rounding per replica for a requester alternating them to average.
"""

from __future__ import annotations

import math

from device_tools.sensors.cell_store import CellStore
from sentinel_mcp.core.sensor_kinds import Scope

# minimal: the whole-degree cell, cut toward zero exactly as the design's example (37.7749, -122.4194 ->
# 37.0, -122.0; about 111 km, a city or region); standard: 2 decimals ≈ 1.1 km (street level, 37.78, -122.42)
CELL_DEGREES = {Scope.minimal: 1.0, Scope.standard: 0.01}
METRES_PER_DEGREE = 111_320.0
ACCURACY_FACTOR = 3.0
MAX_ACCURACY_M = 2_000.0


def cell_of(scope: Scope, value: float) -> float:
    """The value shown for a coordinate at ``scope``."""
    if scope is Scope.minimal:
        return float(math.trunc(value))
    return round(value, 2)


def _bounds(scope: Scope, shown: float) -> tuple[float, float]:
    """The coordinates that ``cell_of`` shows as ``shown``."""
    if scope is Scope.minimal:  # cut toward zero: [n, n+1) above zero, (n-1, n] below, (-1, 1) for 0
        return (shown - 1 if shown <= 0 else shown), (shown + 1 if shown >= 0 else shown)
    half = CELL_DEGREES[scope] / 2
    return shown - half, shown + half


def _margin(scope: Scope, accuracy_m: float | None, metres_per_degree: float) -> float:
    """How far (degrees) outside the shown cell a fix may lie and still show it."""
    half = CELL_DEGREES[scope] / 2
    if accuracy_m is None or not math.isfinite(accuracy_m) or accuracy_m <= 0:
        return half
    return max(half, ACCURACY_FACTOR * min(accuracy_m, MAX_ACCURACY_M) / metres_per_degree)


class LocationCells:
    """The (latitude, longitude) each coarse scope showed last, for every requester of this phone."""

    def __init__(self, store: CellStore | None = None) -> None:
        """``store``: where the cells are kept (the sensors' store); None: in this process only."""
        self._store = store
        self._shown: dict[tuple[str, Scope], tuple[float, float]] = {}

    def shown(self, scope: Scope, latitude: float, longitude: float,
              accuracy_m: float | None, source: str = "") -> tuple[float, float]:
        """The cell to show for a fix of ``source`` at ``scope`` (``minimal`` or ``standard``), remembered
        for the next. StoreUnavailable when the store cannot be read or written (nothing is shown)."""
        lon_metres = METRES_PER_DEGREE * max(math.cos(math.radians(latitude)), 0.01)  # a degree east
        before = self._store.get(source, scope.value) if self._store else self._shown.get((source, scope))
        cell = (
            self._steady(scope, latitude, before[0] if before else None, accuracy_m, METRES_PER_DEGREE),
            self._steady(scope, longitude, before[1] if before else None, accuracy_m, lon_metres),
        )
        if self._store is not None:
            if cell != before:
                self._store.put(source, scope.value, cell)
        else:
            self._shown[(source, scope)] = cell
        return cell

    @staticmethod
    def _steady(scope: Scope, value: float, before: float | None, accuracy_m: float | None,
                metres_per_degree: float) -> float:
        if before is not None:
            low, high = _bounds(scope, before)
            if max(low - value, value - high, 0.0) <= _margin(scope, accuracy_m, metres_per_degree):
                return before
        return cell_of(scope, value)
