"""Before a command runs against a shared server store: its ``sentinel.cluster.seal_key`` checked against the
cluster's check row (``gateway/cluster_key_check.py``), as a replica's is at start.

Before, only ``serve`` checked: ``sentinel-mcp audit``, ``facts``, ``consent``, ``swarm`` ... with another key
read every signed row as nobody's (the audit as tampered) and wrote rows (a consent, a kept fact's clear, a
swarm build's end) that no replica would ever take, without a word. Every command is checked unless it never
opens the store (``OPENS_NO_STORE``): a new command is checked by default. A store that cannot be reached to
check refuses the command (fail closed): unlike a replica, which starts degraded and answers for what it
writes later, a command's whole work is reading or writing that store.
"""

from __future__ import annotations

import anyio

from sentinel_mcp.core.errors import ConfigError
from sentinel_mcp.storage import StorageError
from sentinel_mcp.storage.location import LocationError

# (command, sub-command or None for all): what never opens the shared store. ``serve`` checks at its own start
OPENS_NO_STORE = frozenset({("serve", None), ("tls", None), ("config", "show"), ("config", "claude")})

UNCHECKED = (
    "sentinel.cluster.seal_key could not be checked against the shared store named by sentinel.store (it "
    "cannot be reached): a command does not read or write it unchecked"
)


def needs_check(command: str | None, what: object) -> bool:
    """Whether the command may open the shared store (one not known never to is checked)."""
    return (command, None) not in OPENS_NO_STORE and (command, what) not in OPENS_NO_STORE


def check_command_key(config_path: str | None) -> None:
    """Raise ``ConfigError`` (another key than the cluster's, none, too short: the user's to fix, exit 2) or
    ``StorageError`` (the store cannot be reached to check) when the config names a server store; nothing for
    the embedded store."""
    from sentinel_mcp.config import load_config
    from sentinel_mcp.gateway.replica import checked_seal_key, shared_store

    try:
        shared, _ = shared_store(load_config(config_path))
        if shared is None:
            return
        problems = anyio.run(checked_seal_key, shared)
    except LocationError as e:  # its text names the setting, never a key
        raise ConfigError(str(e)) from None
    if problems:  # the store was not reached
        raise StorageError(UNCHECKED)
