"""Device paths as the phone resolves them, before any rule looks at them.

A path in a shell argument can be spelled many ways: ``//data/x``, ``/./data/x``, ``/sdcard/../data/x``,
``data/data/x`` (the adb shell starts in ``/``), ``/DATA/x``, ``/proc/self/root/data/x``,
``/proc/1/root/../data/x``. A path is private when either of its two readings is: the *normal* form (resolved
from ``/``, empty and ``.`` segments dropped, ``..`` undoing the segment before it, aliases mapped) and the
*physical* form (the same, but a link is followed the moment it is reached, as the kernel does, so a ``..``
after it climbs from its target). Both are lower case: Android's shared storage is case-insensitive, and on
the
case-sensitive parts lower case only ever refuses more. The same rules live in ``rulebases/device.pl``.
"""

from __future__ import annotations

import posixpath

# (link segments, what they lead to): the symlinks, bind mounts and magic links that lead somewhere else
ALIASES: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    (("sdcard",), ("storage", "emulated", "0")),
    (("mnt", "sdcard"), ("storage", "emulated", "0")),
    (("storage", "self", "primary"), ("storage", "emulated", "0")),
    (("cache",), ("data", "cache")),  # a symlink to /data/cache on A/B devices
    (("d",), ("sys", "kernel", "debug")),  # Android's short link to debugfs
]
UNKNOWN = "?"  # where a process's cwd or open file leads: anywhere, so treated as private
_PROC_ANYWHERE = ("cwd", "fd", "map_files")


def _segments(path: str) -> list[str]:
    return path.strip().replace("\\", "/").lower().split("/")


def _proc_link(parts: list[str]) -> int:
    """How many leading segments name a process's magic link (``/proc/<pid>/root``, ``cwd``, ``fd``,
    ``map_files``, and the same one level down for a thread: ``/proc/<pid>/task/<tid>/root``); 0 if none."""
    if parts[:1] != ["proc"]:
        return 0
    if len(parts) >= 3 and parts[2] in ("root", *_PROC_ANYWHERE):
        return 3
    if len(parts) >= 5 and parts[2] == "task" and parts[4] in ("root", *_PROC_ANYWHERE):
        return 5
    return 0


def _proc_target(link: list[str]) -> list[str]:
    return [] if link[-1] == "root" else [UNKNOWN]


def _follow(parts: list[str]) -> list[str]:
    """The link the path has just reached, replaced by its target (as the kernel does before a '..')."""
    n = _proc_link(parts)
    if n and n == len(parts):
        return _proc_target(parts)
    for link, real in ALIASES:
        if tuple(parts) == link:
            return list(real)
    return parts


def _resolve(path: str, follow_links: bool) -> str:
    parts: list[str] = []
    for seg in _segments(path):
        if seg in ("", "."):
            continue
        if seg == "..":
            if parts and parts != [UNKNOWN]:
                parts.pop()
            continue
        parts.append(seg)
        if follow_links:
            parts = _follow(parts)
    if not follow_links:
        n = _proc_link(parts)
        parts = _proc_target(parts[:n]) + parts[n:] if n else _follow_prefix(parts)
    return "/" + "/".join(parts)


def _follow_prefix(parts: list[str]) -> list[str]:
    for link, real in ALIASES:
        if tuple(parts[: len(link)]) == link:
            return [*real, *parts[len(link) :]]
    return parts


def normal_path(path: str) -> str:
    """The path as its words say (``..`` undoing the segment before it), aliases mapped."""
    return _resolve(path, follow_links=False)


def physical_path(path: str) -> str:
    """The path as the phone resolves it (links followed before each ``..``)."""
    return _resolve(path, follow_links=True)


# trees that are app data under another name: /data_mirror (Android 11+: every app's data again, by volume
# and user), /mnt/expand (adopted storage's /data), /mnt/installer and /mnt/androidwritable (views of shared
# storage with Android/data open)
PRIVATE_TREES = ("/data", "/data_mirror", "/mnt/expand", "/mnt/installer", "/mnt/androidwritable")


def _private_normal(n: str) -> bool:
    if any(n == t or n.startswith(t + "/") for t in PRIVATE_TREES) or n.startswith("/" + UNKNOWN):
        return True
    if "/android/data" in n or "/android/obb" in n or "shared_prefs" in n:
        return True
    return posixpath.basename(n).endswith((".db", ".db-wal", ".db-shm", ".db-journal", ".sqlite", ".sqlite3"))


def private_path(path: str) -> bool:
    """Private app data, databases and preferences (never readable through the terminal), read either way."""
    return _private_normal(normal_path(path)) or _private_normal(physical_path(path))


# the kernel's view of what the sensors built-in guards (consent, scope, redaction): /sys (the battery's
# temperature and voltage, iio motion and light sensors, the radios' addresses), /dev (the input devices:
# every touch and key) and the network tables (the router's address in the ARP table places the phone on
# public Wi-Fi maps), which each process sees again as /proc/<pid>/net; and the boot's own word on which phone
# this is (androidboot.serialno in /proc/cmdline and /proc/bootconfig, the board's serial-number in
# /proc/device-tree), which getprop's allow list keeps out (readable_state.py). The /proc ones are off the
# /proc allow list below; named here too so that the list's reasons stay written down.
SENSOR_TREES = ("/sys", "/dev", "/proc/net", "/proc/cmdline", "/proc/bootconfig", "/proc/device-tree")


# /proc by an allow list, because what there names the phone has no one name: cpuinfo's Serial line, the
# boot's random id (/proc/sys/kernel/random/boot_id), the adopted storage's UUIDs in mounts, the hostname, a
# process's environment, a new kernel's new file. Readable: the kernel's version, memory and load, and of a
# process (a number, self or thread-self, and its threads under task/) what ps shows of it.
READABLE_PROC = frozenset({"version", "meminfo", "uptime", "loadavg"})
READABLE_PROCESS = frozenset({"status", "stat", "statm", "comm", "cmdline", "limits", "oom_score",
                              "oom_score_adj", "wchan"})


def _process(seg: str) -> bool:
    return seg in ("self", "thread-self") or (seg.isascii() and seg.isdigit())


def _readable_proc(rest: list[str]) -> bool:
    """Whether the path under /proc (its segments after ``proc``) is on the allow list."""
    if len(rest) <= 1:
        return not rest or rest[0] in READABLE_PROC or _process(rest[0])
    if not _process(rest[0]):
        return False
    if rest[1:2] == ["task"]:
        rest = rest[2:]
        if len(rest) == 0 or (len(rest) == 1 and _process(rest[0])):
            return True
        return len(rest) == 2 and _process(rest[0]) and rest[1] in READABLE_PROCESS
    return len(rest) == 2 and rest[1] in READABLE_PROCESS


def _sensor_normal(n: str) -> bool:
    if any(n == t or n.startswith(t + "/") for t in SENSOR_TREES):
        return True
    parts = n.split("/")[1:]
    return parts[:1] == ["proc"] and not _readable_proc(parts[1:])


def sensor_state_path(path: str) -> bool:
    """The phone's sensor, input and radio state (never read through the terminal, around the sensors'
    consent), read either way."""
    return _sensor_normal(normal_path(path)) or _sensor_normal(physical_path(path))


def path_operands(args: list[str]) -> list[str]:
    """The arguments a command may read as paths: every operand, and the value of ``--opt=value``."""
    out = []
    for a in args:
        if a.startswith("-"):
            if "=" in a:
                out.append(a.split("=", 1)[1])
        else:
            out.append(a)
    return out
