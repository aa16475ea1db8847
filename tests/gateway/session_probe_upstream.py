"""A stdio upstream that first writes where it was started into a file (its session, process group, parent,
and whether it could open the controlling terminal ``/dev/tty``), then serves as the test toolbox.

python session_probe_upstream.py OUT.json
"""

from __future__ import annotations

import errno
import json
import os
import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    out = sys.argv[1]
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
        os.close(fd)
        tty = "opened"
    except OSError as e:
        tty = errno.errorcode.get(e.errno or 0, str(e.errno))
    probe = {"pid": os.getpid(), "ppid": os.getppid(), "sid": os.getsid(0), "pgid": os.getpgrp(), "tty": tty}
    Path(out + ".tmp").write_text(json.dumps(probe))
    os.replace(out + ".tmp", out)
    sys.argv = [str(Path(__file__).with_name("toolbox_server.py"))]
    runpy.run_path(sys.argv[0], run_name="__main__")
