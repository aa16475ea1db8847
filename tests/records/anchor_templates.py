"""A data dir that three real gateways wrote (and its audit anchor), built once for a test module and restored
for each test: starting the gateways is what costs, the tampering each test does is cheap."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Awaitable, Callable

import pytest

import sentinel_mcp.gateway.audit_anchor as anchor_module
from sentinel_mcp.paths import default_anchor_dir


class Templates:
    """Three gateways' data dir and its anchor, built once per module (per compaction setting) and restored
    fresh for each test: the anchor names the data dir's real path, so the copy goes back to the same path.
    The tests of this module run one after another (``--dist loadfile``), never two on one path at once."""

    def __init__(self, base: Path, build: Callable[[Path], Awaitable[Path]]) -> None:
        """Both built here, at set-up (outside any test's event loop)."""
        self.base, self.build = base, build
        self.saved = {compacted: self._build(compacted) for compacted in (False, True)}

    def _build(self, compacted: bool) -> Path:
        work = self.base / ("compacted" if compacted else "as-written")
        with pytest.MonkeyPatch.context() as mp:
            if compacted:  # every append compacts the anchor first: one carried line per chain is left
                mp.setattr(anchor_module, "COMPACT_AT", 1)
            data = asyncio.run(self.build(work))
        saved = work / "saved"
        shutil.copytree(data, saved / "data", symlinks=True)
        shutil.copytree(default_anchor_dir(data), saved / "anchor", symlinks=True)
        return saved

    def fresh(self, compacted: bool = False) -> Path:
        """The data dir as the three gateways left it (its anchor too), whatever an earlier test did to it."""
        saved = self.saved[compacted]
        data = saved.parent / "data"
        anchor = default_anchor_dir(data)
        for place, copy in ((data, saved / "data"), (anchor, saved / "anchor")):
            shutil.rmtree(place, ignore_errors=True)
            shutil.copytree(copy, place, symlinks=True)
        return data
