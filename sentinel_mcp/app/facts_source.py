"""Where a command (``sentinel-mcp query``, ``facts``, ``replay``) reads the facts a gateway decides on.

With a server store (``sentinel.store = "postgresql://…"``) that is the shared database itself, which replicas
write while the command reads (no copy: PostgreSQL serves concurrent readers). With the embedded SQLite store
it
is the facts file, or a consistent copy while a running gateway holds it.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Iterator

from sentinel_mcp.config import Config


@contextlib.contextmanager
def facts_location(config: Config) -> Iterator[tuple[str | Path, Path]]:
    """(the facts' store location, a directory for the command's own scratch indexes)."""
    from sentinel_mcp.policy.guard_of_config import facts_db_path
    from sentinel_mcp.storage.snapshot import readable_copy

    if config.store_url:
        with tempfile.TemporaryDirectory(prefix="sentinel-cli-") as scratch:
            yield config.store_url, Path(scratch)
        return
    with readable_copy(facts_db_path(config)) as path:  # a running gateway holds it: read a copy
        yield path, path.parent


def has_facts(config: Config) -> bool:
    from sentinel_mcp.policy.guard_of_config import facts_db_path

    return bool(config.store_url) or facts_db_path(config).exists()
