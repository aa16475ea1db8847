"""Folders pytest made opened to traversal, for tests whose stand-in tools a root gateway runs as ``nobody``
(``sentinel_mcp/swarm/tool_user.py``): pytest's own are owner-only, and xdist adds one (``popen-gwN``)."""

from __future__ import annotations

import tempfile
from pathlib import Path


def open_the_way(path: Path) -> None:
    """Every folder on the way to ``path`` under the temporary directory opened to traversal (not listing)."""
    top = Path(tempfile.gettempdir()).resolve()
    for parent in Path(path).resolve().parents:
        if parent == top or top not in parent.parents:
            break
        parent.chmod(parent.stat().st_mode & 0o7777 | 0o711)
