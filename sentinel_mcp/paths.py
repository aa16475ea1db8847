"""Where Sentinel finds its shipped files and keeps its state."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
RULEBASES_DIR = PROJECT_ROOT / "rulebases"
GRAMMARS_DIR = PROJECT_ROOT / "grammars"


def default_data_dir() -> Path:
    """State lives under $SENTINEL_DATA_DIR, else the XDG state dir."""
    env = os.environ.get("SENTINEL_DATA_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base).expanduser() / "sentinel"
