"""pyswip finds SWI-Prolog by running ``swipl`` by name on ``PATH`` and loads the library that run names into
the gateway's own process; Sentinel also keys its kept location on the ``swipl`` found there
(``policy/swipl_location.py``). Both look only on ``PATH`` entries no other account could change
(``core/trusted_code.py``): a ``swipl`` planted in a shared folder, or in the working folder through a
relative entry, ahead of the real one, never runs, and the guard still answers. Before, the planted one ran
as Sentinel's user at every cold start. Each start is a real child process with the real SWI-Prolog."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REAL_SWIPL = shutil.which("swipl")
pytestmark = pytest.mark.skipif(
    REAL_SWIPL is None or not sys.platform.startswith("linux"), reason="needs swipl on Linux"
)

CHILD = """
import asyncio, json, os
from sentinel_mcp.policy.engine import shared_engine
async def main():
    row = await shared_engine().run(lambda p: [str(r["X"]) for r in p.query("X is 40 + 2")])
    print(json.dumps({"row": row, "path": os.environ.get("PATH")}))
asyncio.run(main())
"""


@pytest.mark.parametrize("entry", ["shared", "relative", "empty"])
def test_a_planted_swipl_ahead_on_path_never_runs(tmp_path: Path, entry: str) -> None:
    tmp_path.chmod(0o755)
    planted = tmp_path / "planted"
    planted.mkdir()
    marker = tmp_path / "ran"
    fake = planted / "swipl"
    # a swipl that notes its run, then answers as the real one would (so pyswip takes what it says)
    fake.write_text(f'#!/bin/sh\n: > {marker}\nexec {REAL_SWIPL} "$@"\n')
    fake.chmod(0o755)
    planted.chmod(0o777)
    first = {"shared": str(planted), "relative": ".", "empty": ""}[entry]
    path = f"{first}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {k: v for k, v in os.environ.items() if k not in ("LIBSWIPL_PATH", "SWI_HOME_DIR")}
    env.update(PATH=path, XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    env.pop("SENTINEL_SHARED_FILES", None)
    p = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=planted, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["row"] == ["42"] and not marker.exists()
    assert out["path"] == path  # put back after the import
