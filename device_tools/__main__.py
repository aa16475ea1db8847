"""``python -m device_tools``: serve the device tools alone over stdio.

Settings come from SENTINEL_DEVICE_* environment variables (backend, serial, adb_host, adb_port,
physical_confirmation, ...); the data dir from SENTINEL_DEVICE_DATA_DIR or the default.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.standalone_entry import serve_alone


def main() -> int:
    return serve_alone("device", _serve)  # the command line's edge (standalone_entry): errors in one line


def _serve() -> None:
    from sentinel_mcp.paths import default_data_dir

    from .server import create_server
    from .settings import DeviceSettings

    prefix = "SENTINEL_DEVICE_"
    settings: dict[str, object] = {
        k[len(prefix) :].lower(): v
        for k, v in os.environ.items()
        if k.startswith(prefix) and k[len(prefix) :].lower() in DeviceSettings.model_fields
    }
    allow = settings.get("terminal_allow")
    if isinstance(allow, str):
        settings["terminal_allow"] = [s.strip() for s in allow.split(",") if s.strip()]
    data_dir = Path(os.environ.get("SENTINEL_DEVICE_DATA_DIR") or Path(default_data_dir()) / "device")
    create_server(BuiltinContext(name="device", data_dir=data_dir, settings=settings)).run()


if __name__ == "__main__":
    sys.exit(main())
