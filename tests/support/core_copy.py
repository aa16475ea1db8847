"""A copy of the package's Prolog directory for the precompiled-core tests (policy/core_qlf.py): its sources
alone, or built as an install builds them."""

from __future__ import annotations

import shutil
from pathlib import Path

from sentinel_mcp.policy.core_qlf import MANIFEST, PROLOG_DIR, build


def core_sources(parent: Path) -> Path:
    """``parent``/prolog: the package's Prolog sources, no ``.qlf`` and no manifest."""
    directory = parent / "prolog"
    shutil.copytree(PROLOG_DIR, directory, ignore=shutil.ignore_patterns("*.qlf", MANIFEST))
    return directory


def core_built(parent: Path) -> Path:
    """``core_sources``, its core compiled and its manifest written."""
    directory = core_sources(parent)
    build(directory)
    return directory
