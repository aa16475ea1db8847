"""``python -m device_tools.sensors``: serve the sensors built-in alone over stdio.

Settings come from $SENTINEL_SENSORS (a JSON object, the ``sentinel.sensors`` section); state goes to
``$SENTINEL_DATA_DIR/sensors`` (or the default data dir).
"""

from __future__ import annotations

import json
import os
import sys

from device_tools.sensors.server import create_server
from sentinel_mcp.config import ConfigError
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.standalone_entry import serve_alone
from sentinel_mcp.paths import default_data_dir


def main() -> int:
    return serve_alone("sensors", _serve)  # the command line's edge (standalone_entry)


def _serve() -> int:
    try:
        settings = json.loads(os.environ.get("SENTINEL_SENSORS", "{}"))
    except json.JSONDecodeError as e:
        raise ConfigError(f"SENTINEL_SENSORS: {e}") from None
    if not isinstance(settings, dict):
        raise ConfigError("SENTINEL_SENSORS: must be a JSON object")
    server = create_server(BuiltinContext(name="sensors", data_dir=default_data_dir() / "sensors",
                                          settings=settings))
    server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
