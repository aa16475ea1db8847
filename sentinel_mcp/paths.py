"""Where Sentinel finds its shipped files and keeps its state.

The shipped policies and grammars sit at the top of a checkout (``rulebases/``, ``grammars/``); an installed
wheel carries them inside the package (``sentinel_mcp/rulebases``, ``sentinel_mcp/grammars``, see setup.py).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = PACKAGE_DIR.parent


def _shipped(name: str) -> Path:
    inside = PACKAGE_DIR / name  # a wheel (pip, pipx, uvx): package data
    return inside if inside.is_dir() else PROJECT_ROOT / name  # a checkout or an editable install


RULEBASES_DIR = _shipped("rulebases")
GRAMMARS_DIR = _shipped("grammars")
# a config names a shipped file "shipped:rulebases/airline.pl" (relative to this directory); a plain relative
# path is relative to the config file only
SHIPPED_ROOT = RULEBASES_DIR.parent
SHIPPED_PREFIX = "shipped:"


def shipped_path(p: str) -> Path | None:
    """The file ``shipped:<relative path>`` names inside SHIPPED_ROOT; None for another spelling, or for a
    path that is absolute or leaves that folder."""
    if not p.startswith(SHIPPED_PREFIX):
        return None
    rel = Path(p[len(SHIPPED_PREFIX):])
    if not rel.parts or rel.is_absolute() or ".." in rel.parts:
        return None
    return (SHIPPED_ROOT / rel).resolve()


def default_data_dir() -> Path:
    """State lives under $SENTINEL_DATA_DIR, else the XDG state dir."""
    env = os.environ.get("SENTINEL_DATA_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base).expanduser() / "sentinel"


def default_anchor_dir(store_dir: Path) -> Path:
    """Where the audit anchor of the data dir ``store_dir`` lives unless configured
    (``gateway/audit_anchor.py``): ``$XDG_STATE_HOME/sentinel-mcp/anchors/<sha256 of its real path>``."""
    real = os.path.realpath(store_dir)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return Path(base).expanduser() / "sentinel-mcp" / "anchors" / digest
