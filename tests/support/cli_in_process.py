"""The CLI's ``main`` run inside the test process, answered as ``subprocess.run`` answers.

A ``python -m sentinel_mcp`` subprocess costs ~0.7 s of interpreter start and imports before it does anything;
a test that runs the CLI dozens of times (``audit verify`` after each tampering) paid that each time. The same
``main`` runs here on the same argv, environment and files. What only a real process shows (the entry point,
its exit status) stays with the tests that still start one. An exception that escapes ``main`` comes back as
a process would show it: a traceback on stderr and exit status 1, so a check for "no traceback" still holds.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_main(argv: list[str]) -> subprocess.CompletedProcess:
    from sentinel_mcp.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        # argparse's exit (bad arguments, --help), or SystemExit("text"): its text printed as a process does
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if e.code is not None and not isinstance(e.code, int):
                print(e.code, file=sys.stderr)
        except Exception:
            traceback.print_exc()
            code = 1
    return subprocess.CompletedProcess(["sentinel-mcp", *argv], code, out.getvalue(), err.getvalue())


def run_command(
    argv: list[str], *, cwd: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess:
    """``sentinel-mcp argv`` in ``cwd`` with ``env`` added to this process's environment: ``run_main`` here
    with ``monkeypatch`` (which undoes the variables and the directory after the test), else the real command
    (``python -m sentinel_mcp``): a file's one end-to-end case of what its in-process cases check."""
    if monkeypatch is None:
        return subprocess.run([sys.executable, "-m", "sentinel_mcp", *argv], capture_output=True, text=True,
                              timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT), **env}, cwd=cwd)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(cwd)
    return run_main(argv)
