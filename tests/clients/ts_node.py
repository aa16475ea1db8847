"""The Node toolchain the Makefile installs into ``tests/ts`` (``make ts-deps``): node 22, the TypeScript SDK
client, the official conformance suite. Tests fail (never skip) when it is missing: ``make test`` installs it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

TS_DIR = Path(__file__).resolve().parent.parent / "ts"
NODE = TS_DIR / "node_modules" / ".bin" / "node"
CONFORMANCE = TS_DIR / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


def require_node() -> Path:
    if not NODE.exists() or not CONFORMANCE.exists():
        raise AssertionError(f"the Node test clients are not installed in {TS_DIR}: run `make ts-deps`")
    return NODE


def run_ts_client(plan: dict[str, Any], tmp_path: Path, timeout: float = 90) -> list[dict[str, Any]]:
    """Run ``sdk_client.mjs`` with a plan; its JSON lines, the listing first."""
    node = require_node()
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan))
    done = subprocess.run(
        [str(node), str(TS_DIR / "sdk_client.mjs"), str(plan_file)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise AssertionError(f"TypeScript client failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
