"""An engine thread whose SWI-Prolog did not start says so to every caller, first and later, and never takes
a job no thread will run (a later caller returned at once and queued one: it waited forever). Run in a child
process: SWI-Prolog starts once per process, and this one must fail to."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import asyncio
    from pathlib import Path
    from sentinel_mcp.policy import engine_thread
    from sentinel_mcp.policy.engine_thread import EngineError, EngineThread

    engine_thread.CORE = Path("/nonexistent/sentinel_core.pl")  # its load fails: the start fails
    thread = EngineThread()
    said = []
    for attempt in ("start", "start again", "submit", "run", "try_now"):
        try:
            if attempt.startswith("start"):
                thread.start()
            elif attempt == "submit":
                thread.submit(lambda prolog: 1).result(5)
            elif attempt == "run":
                asyncio.run(asyncio.wait_for(thread.run(lambda prolog: 1), 5))
            else:
                thread.try_now(lambda prolog: 1)
            said.append(attempt + ": no error")
        except EngineError as e:
            said.append(attempt + ": " + ("refused" if "cannot start SWI-Prolog" in str(e) else repr(e)))
        except BaseException as e:
            said.append(attempt + ": " + type(e).__name__)
    print("|".join(said))
    """
)


def test_every_caller_after_a_failed_start_is_told_and_none_waits() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "|".join(
        f"{a}: refused" for a in ("start", "start again", "submit", "run", "try_now")
    ), out.stdout + out.stderr[-2000:]
