"""The signed-in principal's sensor consents (``device_tools/sensors/consent_registry.py``) for the consents
page: listed and revoked on the sensors built-in's own store, as ``sentinel-mcp sensors consent`` does
(``<data dir>/sensors/sensors.db``, or the replicas' shared database), so a revoke here is refused by the
built-in at its next read. Always the viewer's own (the requester is the sign-in's principal, never a form
value); the revoke goes through the sensors' bridge, so the readings kept under the consent go with it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from device_tools.sensors.bridge import SensorBridge
from device_tools.sensors.consent_registry import ANY_REQUESTER, Consent
from device_tools.sensors.database import DB_FILENAME, SensorDatabase
from device_tools.sensors.errors import StoreUnavailable
from device_tools.sensors.settings import SensorSettings
from device_tools.sensors.sources.factory import make_source
from sentinel_mcp.config import Config
from sentinel_mcp.core.sensor_kinds import SensorKind
from sentinel_mcp.gateway.replica import row_key
from sentinel_mcp.storage import StorageError

NAME = "sensors"  # the built-in's name: its data directory and its config section


def _bridge(config: Config) -> SensorBridge | None:
    """The sensors' bridge on the built-in's store; None when the built-in is not configured, or (a local
    file) has never stored anything (then there is no consent to show, and none is made up here)."""
    if NAME not in config.sentinel.builtins:
        return None
    data_dir: Path = config.data_dir / NAME
    if not config.store_url and not (data_dir / DB_FILENAME).exists():
        return None
    settings = SensorSettings.from_section(config.sentinel.builtin_settings(NAME))
    try:
        db = SensorDatabase(data_dir, config.store_url, key=row_key(config, "sensor consent"))
    except StorageError as e:  # a local file that cannot be opened: said on the page, never "no consent"
        raise StoreUnavailable(f"the sensors' store is unavailable: {e}") from None
    # the source is never read here: the bridge is what ties a revoke to the readings it covered
    return SensorBridge(make_source(settings), db, default_retention=settings.default_retention,
                        max_retention=settings.max_retention)


def _listed(config: Config, principal: str) -> list[Consent]:
    bridge = _bridge(config)
    if bridge is None:
        return []
    try:
        # a consent to any requester covers this principal too, so it is shown (not revocable here: the
        # owner's, at the command line); no other principal's own consent is ever read
        return bridge.consents.list(principal) + bridge.consents.list(ANY_REQUESTER)
    finally:
        bridge.db.close()


def _revoked(config: Config, principal: str, sensor: SensorKind) -> int:
    bridge = _bridge(config)
    if bridge is None:
        return 0
    try:
        return bridge.consents.revoke(principal, sensor)  # one sensor, never None (that is every sensor)
    finally:
        bridge.db.close()


async def listed(config: Config, principal: str) -> list[Consent]:
    """``principal``'s live sensor consents (a store that fails raises: the page says so, never "none")."""
    return await asyncio.to_thread(_listed, config, principal)


async def revoke(config: Config, principal: str, sensor: SensorKind) -> int:
    return await asyncio.to_thread(_revoked, config, principal, sensor)
