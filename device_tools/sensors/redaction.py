"""Scope and redaction: what a reading may reveal at each scope, and which redactions were applied.

The redaction strings follow the design's SensorResponse ("Rounded to street-level precision",
"Removed altitude"). Location at minimal/standard carries only latitude and longitude, as in the design's
scope examples; detailed carries the full fix. Nothing outside a scope's allow-list ever leaves here. A
battery field the scope allows but the phone did not report is ``null`` and named in the payload's
``unknown`` list, so it reads as unknown, not as withheld or absent.
"""

from __future__ import annotations

from typing import Any

from device_tools.sensors.location_cells import LocationCells, cell_of
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind

# the cells (minimal ≈ 111 km, standard ≈ 1.1 km) are location_cells'
LOCATION_ROUNDING_TEXT = {Scope.minimal: "Rounded to city-level precision",
                          Scope.standard: "Rounded to street-level precision"}
DETAILED_LOCATION_FIELDS = ("latitude", "longitude", "altitude", "horizontalAccuracy", "verticalAccuracy",
                            "speed", "bearing", "provider", "ageSeconds")

UNKNOWN_KEY = "unknown"  # the battery fields the scope shows that the phone did not report (each one null)
BATTERY_FIELDS = {
    Scope.minimal: ("percentage",),
    Scope.standard: ("percentage", "charging", "status", "plugged"),
    Scope.detailed: ("percentage", "charging", "status", "plugged", "health", "temperature_c", "voltage_mv",
                     "technology", "present", "simulated_by_adb"),
}


def apply_scope(sensor: SensorKind, scope: Scope, values: dict[str, Any],
                cells: LocationCells | None = None, source: str = "") -> tuple[dict[str, Any], list[str]]:
    """Return the payload allowed at ``scope`` and the redactions applied, in the design's wording.
    ``cells``: the phone's coarse cells shown so far (a fix near a cell's edge shows the cell shown before);
    None: each fix its own cell. ``source``: whose phone the reading is (its cells are its own)."""
    if sensor is SensorKind.location:
        return _location(scope, values, cells, source)
    if sensor is SensorKind.battery:
        return _battery(scope, values)
    if sensor is SensorKind.nearby_devices:
        return _nearby(scope, values)
    # motion, compass, light, barometer: no scope levels in the design ("N/A")
    return dict(values), []


def _location(scope: Scope, v: dict[str, Any], cells: LocationCells | None,
              source: str) -> tuple[dict[str, Any], list[str]]:
    if scope is Scope.detailed:
        return {k: v[k] for k in DETAILED_LOCATION_FIELDS if v.get(k) is not None}, []
    lat, lon = float(v["latitude"]), float(v["longitude"])
    if cells is None:
        lat, lon = cell_of(scope, lat), cell_of(scope, lon)
    else:
        accuracy = v.get("horizontalAccuracy")
        if isinstance(accuracy, bool) or not isinstance(accuracy, (int, float)):
            accuracy = None  # unknown: the margin is half a cell
        lat, lon = cells.shown(scope, lat, lon, None if accuracy is None else float(accuracy), source)
    payload = {"latitude": lat, "longitude": lon}
    # the design lists the altitude removal even when the source had none, so the list is the same per scope
    return payload, [LOCATION_ROUNDING_TEXT[scope], "Removed altitude"]


def _battery(scope: Scope, v: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    allowed = BATTERY_FIELDS[scope]
    # a field the scope allows and the phone did not know (null) stays, as null, and is named under
    # "unknown": dropped, the model read it as withheld or never asked ("charging" missing: not charging);
    # a field the scope withholds is never shown, nor said to be unknown (that too is about the phone)
    payload = {k: v[k] for k in allowed if k in v}
    unknown = [k for k in allowed if k in v and v[k] is None]
    if unknown:
        payload[UNKNOWN_KEY] = unknown
    redactions = []
    if scope is not Scope.detailed:
        if scope is Scope.minimal:
            redactions.append("Removed charging state")
        redactions.append("Removed battery health, temperature and voltage")
    return payload, redactions


def _nearby(scope: Scope, v: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    devices = list(v.get("devices") or [])
    if scope is Scope.minimal:
        return {"count": len(devices)}, ["Removed device list"]
    if scope is Scope.standard:
        return (
            {
                "count": len(devices),
                "devices": [{"kind": d.get("kind"), "rssi": d.get("rssi")} for d in devices],
            },
            ["Removed device names", "Removed device addresses"],
        )
    return {"count": len(devices), "devices": devices}, []
