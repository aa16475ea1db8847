"""The few shell programs the simulated phone answers, so terminal_run has something real to run."""

from __future__ import annotations

import time

PROPS = {
    "ro.product.model": "Sentinel Simulated Phone",
    "ro.build.version.release": "15",
    "ro.build.version.sdk": "35",
}


def shell_program(argv: list[str], *, packages: list[str]) -> str:
    """Output of ``argv`` as Android's toybox would print it; unknown programs are 'not found'."""
    prog = argv[0] if argv else ""
    if prog == "echo":
        return " ".join(argv[1:]) + "\n"
    if prog == "getprop":
        if len(argv) > 1:
            return PROPS.get(argv[1], "") + "\n"
        return "".join(f"[{k}]: [{v}]\n" for k, v in PROPS.items())
    if prog == "whoami":
        return "shell\n"
    if prog == "id":
        return "uid=2000(shell) gid=2000(shell)\n"
    if prog == "uptime":
        return " 02:00:00 up 1 day,  3:04,  0 users,  load average: 0.10, 0.20, 0.30\n"
    if prog == "date":
        return time.strftime("%a %b %d %H:%M:%S UTC %Y\n", time.gmtime())
    if prog == "ls":
        return "Alarms\nDCIM\nDownload\nMusic\nPictures\n"
    if argv[:3] == ["pm", "list", "packages"]:
        return "".join(f"package:{p}\n" for p in packages)
    if prog == "cat" and argv[1:] == ["/proc/version"]:
        return "Linux version 6.1.0-sentinel-simulated (android15)\n"
    return f"/system/bin/sh: {prog}: inaccessible or not found\n"
