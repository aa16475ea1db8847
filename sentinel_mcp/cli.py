"""The ``sentinel-mcp`` command. Each area registers its own sub-commands (``register(subparsers)``)."""

from __future__ import annotations

import argparse
import os
import importlib
import logging
import sqlite3
import sys
from typing import Callable

from sentinel_mcp import __version__
from sentinel_mcp.core.import_collector import imports_uncollected
from sentinel_mcp.core.errors import SentinelError, user_message
from sentinel_mcp.core.log_window import bound_log

# modules that add sub-commands; a missing one is skipped so a partial install still runs
_COMMAND_MODULES = [
    "sentinel_mcp.app.gateway_cli",
    "sentinel_mcp.app.consent_cli",
    "sentinel_mcp.app.pins_cli",
    "sentinel_mcp.app.builtin_cli",
    "sentinel_mcp.app.policy_cli",
    "sentinel_mcp.tls.cli",
    "sentinel_mcp.policy.draft_cli",
    "sentinel_mcp.swarm.cli",
    "device_tools.sensors.cli",
    "sentinel_mcp.a2a.cli",
    "sentinel_mcp.console.cli",
    "sentinel_mcp.app.chat_cli",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sentinel-mcp", description="Sentinel: a governed MCP gateway.")
    parser.add_argument("--version", action="version", version=f"sentinel-mcp {__version__}")
    # SENTINEL_CONFIG: for hosts that pass settings as environment (a container, a desktop bundle); empty =
    # unset
    parser.add_argument(
        "-c",
        "--config",
        default=os.environ.get("SENTINEL_CONFIG") or None,
        help="config file (JSON; default: $SENTINEL_CONFIG, else the embedded airline demo)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name and name.startswith(e.name):
                continue  # area not present
            raise
        register: Callable[[argparse._SubParsersAction], None] = getattr(module, "register")
        register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    with imports_uncollected(_COMMAND_MODULES[0]):  # the command modules, config and storage: uncollected
        parser = build_parser()
        from sentinel_mcp.config import ConfigError
        from sentinel_mcp.storage import StorageError
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    bound_log()  # what outsiders make Sentinel or the SDK log (an upstream's garbage lines) is bounded
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        return int(func(args) or 0)
    except ConfigError as e:
        print(f"sentinel-mcp: {_shown(user_message(e))}", file=sys.stderr)
        return 2
    except StorageError as e:  # a store that cannot be read or written (held, read-only, full, ...)
        print(f"sentinel-mcp: {_shown(user_message(e))}", file=sys.stderr)
        return 1
    except SentinelError as e:  # any other deliberate error: its area and its text, no traceback
        print(f"sentinel-mcp: {_shown(user_message(e))}", file=sys.stderr)
        return e.exit_code
    except sqlite3.DatabaseError as e:  # a damaged store met past the readers' own checks: no traceback
        print(f"sentinel-mcp: a store cannot be read: {_shown(str(e))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _shown(message: str) -> str:
    """An error's text may echo a config key, a path or a stored value: shown cleaned, never raw."""
    from sentinel_mcp.core.display_text import safe_text

    return safe_text(message, 20_000, keep_newlines=True)
