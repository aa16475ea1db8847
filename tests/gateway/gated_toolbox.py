"""The toolbox upstream (toolbox_server.py), started only once the file named by ``$GATE`` exists: an upstream
whose first connection lasts as long as a test wants, with no clock involved. With ``$FAIL_ONCE`` set (a
path), its first start exits at once (and leaves that file): its first attempt fails, the later ones wait.
``$GATED_SERVER`` (a file beside this one) runs that server instead of the toolbox."""

from __future__ import annotations

import os
import runpy
import sys
import time
from pathlib import Path

if __name__ == "__main__":
    once = os.environ.get("FAIL_ONCE")
    if once and not Path(once).exists():
        Path(once).touch()
        sys.exit(1)
    gate = Path(os.environ["GATE"])
    while not gate.exists():
        time.sleep(0.05)
    toolbox = str(Path(__file__).with_name(os.environ.get("GATED_SERVER", "toolbox_server.py")))
    sys.argv = [toolbox]
    runpy.run_path(toolbox, run_name="__main__")
