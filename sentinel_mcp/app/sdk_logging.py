"""Keep the SDK's ``MCPServer`` from importing ``rich`` when the gateway's logging is already set up.

Every ``MCPServer`` (each in-process built-in makes one) calls the SDK's ``configure_logging``, which imports
``rich`` to build a handler and passes it to ``logging.basicConfig``. Once the root logger has handlers (the
CLI sets them up before anything else), ``basicConfig`` does nothing and the handler is dropped: the import is
pure cost, 0.05 to 0.2 s of the gateway's cold start (issue 21). Without handlers the SDK's own set-up runs as
before.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp.server.mcpserver import server as sdk_server

_original = sdk_server.configure_logging


def _configure_logging(level: Any = "INFO") -> None:
    if logging.getLogger().handlers:
        return  # basicConfig would not touch a configured root logger: nothing to build
    _original(level)


sdk_server.configure_logging = _configure_logging
