"""A script that shows what its process was started with (test_forked_upstream_launch.py), then acts as asked
by its first argument: ``show`` (print, read stdin to EOF, exit with $CODE), ``sleep`` (print its pid and
wait), ``term`` (print its pid, exit 7 on SIGTERM), ``die`` (kill itself with SIGUSR1), ``close`` (close its
stdout, then wait)."""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time

how = sys.argv[1]
if how == "show":
    spec = globals().get("__spec__")
    shown = {"argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ), "path0": sys.path[0],
             "umask": os.umask(0), "nofile": resource.getrlimit(resource.RLIMIT_NOFILE),
             "main": __name__, "file": __file__, "spec": str(getattr(spec, "origin", None)),
             "gc": __import__("gc").isenabled(), "fds": sorted(os.listdir("/proc/self/fd")),
             "signals": [repr(signal.getsignal(s)) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD,
                                                            signal.SIGPIPE, signal.SIGHUP)]}
    print(json.dumps(shown), flush=True)
    print("to stderr", file=sys.stderr, flush=True)
    print(json.dumps({"stdin": sys.stdin.read(), "warm": "mcp" in sys.modules}), flush=True)
    sys.exit(int(os.environ.get("CODE", "0")))
if how == "term":  # before its pid is shown: the test signals it once it reads the pid
    # os.write: the signal may come while print() of the pid is still returning (a reentrant print fails)
    signal.signal(signal.SIGTERM, lambda *_: (os.write(1, b"term\n"), os._exit(7)))
print(os.getpid(), flush=True)
if how == "die":
    os.kill(os.getpid(), signal.SIGUSR1)
elif how == "close":
    os.close(1)
time.sleep(600)
