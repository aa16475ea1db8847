"""What a tool run left behind with its uid, removed before that uid is leased again (a root gateway).

A run's workspace is its uid's (``give_workspace``) and is removed by the gateway when the run ends; a gateway
killed (-9, the machine's OOM killer) leaves it, and a machine that refuses the tools a mount namespace of
their own (``tool_files.py``) keeps what a tool wrote in ``/tmp``, ``/var/tmp`` and ``/dev/shm``. The next run
leased that uid would own all of it: another build's sources, or what a hostile tool left for it. So once a
uid is leased (no process runs with it: nothing of it is still being written) every entry of those places,
and of the gateway's temporary directory, that the uid owns is removed, as root, its links not followed.
Only their top level is looked at, up to ``_LOOKED`` entries each: deeper, a run could only write in another
world-writable directory (a test's, a program's), which the mount namespace alone closes.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import shutil
import stat
import tempfile

from sentinel_mcp.swarm.tool_files import PRIVATE

log = logging.getLogger(__name__)

_LOOKED = 100_000  # entries of each place looked at per lease (of a /tmp with more, the rest is not)


def remove_left(uid: int) -> int:
    """Remove what ``uid`` owns at the top of the world-writable places; how many entries were removed."""
    removed = 0
    places = dict.fromkeys([*PRIVATE, tempfile.gettempdir()])
    for place in places:
        try:
            entries = os.scandir(place)
        except OSError:
            continue
        with entries:
            for entry in itertools.islice(entries, _LOOKED):
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if st.st_uid != uid:
                    continue
                with contextlib.suppress(OSError):
                    if stat.S_ISDIR(st.st_mode):
                        shutil.rmtree(entry.path)  # its fd-based walk: a link in it is removed, not followed
                    else:
                        os.unlink(entry.path)
                    removed += 1
    if removed:
        log.warning("swarm toolchain: removed %d entries a killed run of uid %d left", removed, uid)
    return removed
