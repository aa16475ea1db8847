"""The environment the model's helper children (the template child, the grammar child) start with.

The interpreter's own settings only: the gateway's secrets in its environment (tokens, a store URL with its
password, keys) are not the child's. The package's own tree comes first on the path, as the model probe's.
"""

from __future__ import annotations

import os
from pathlib import Path

KEPT = ("PYTHON", "LANG", "LC_", "PATH", "VIRTUAL_ENV")


def child_environment() -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[2])
    env = {k: v for k, v in os.environ.items() if k.startswith(KEPT)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    return env
