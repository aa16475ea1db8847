"""Whether this machine allows one of the separations a tool is given, tried once by a child: each of
``tool_network.py``, ``tool_files.py``, ``tool_pids.py`` and ``tool_userns.py`` runs itself as a script that
tries what it will do for a tool (exit status 0: it works here). Asked on the gateway's side only: those files
are also loaded by path by the supervisor (standard library only), so they import this where they ask."""

from __future__ import annotations

import os
import subprocess
import sys


def probe_passes(path: str) -> bool:
    """Whether the probe file at ``path``, run isolated (``-I -S``) in a child, exits 0 within a minute."""
    try:
        tried = subprocess.run(
            [sys.executable, "-I", "-S", os.path.abspath(path)], capture_output=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return tried.returncode == 0
