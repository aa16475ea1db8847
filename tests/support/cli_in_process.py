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
import subprocess
import sys
import traceback


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
