"""A verification tool's view of the files: the machine's system directories read-only, its workspace, and a
``/tmp``, ``/var/tmp`` and ``/dev/shm`` of its own, empty; nothing else of the machine's.

Each run has a uid of its own (``tool_uids.py``), but a uid comes back: what one run left in a world-writable
place (``/tmp/x``, a file in ``/dev/shm``) the next run leased that uid read, and any tool running at the same
time read what another made world-readable there (a channel between two builds). So the tool's first
process, as root (or with every capability of its user namespace: ``tool_userns.py``) before it drops its
user, takes a mount namespace of its own (changes private to it, and gone with its last process) and a new
root (red team 'swarm' 7: with the machine's root, read-only, a gateway not root gave its tool, its own uid
outside its user namespace, every file it owns: its data dir, config, keys, audit database, ``~/.config``):
a small tmpfs holding ``SYSTEM`` (an allow list: ``/usr``, ``/lib``... bound), an ``/etc`` of its own
(``ETC``: an allow list; its own accounts), a ``/dev`` of its own (``DEVICES``) and the directories of its
program and the files the gateway runs it with (a jar, the platform file; a JDK's ``bin``: its home), all
read-only (``mount_setattr``, recursive: no world-writable directory is left to it, whatever the machine has),
then one tmpfs (``_own_scratch``: its pages are charged to the tool's cgroup's memory too) whose parts are its
``PRIVATE`` places (mode 1777, empty) and the directory it runs in (its workspace, a copy), bounded together,
and, writable, those kept directories under them. It then takes that root (``pivot_root``) and leaves the
machine's. A JVM's temporary files (``hsperfdata``, native libraries it unpacks) go to the new ``/tmp``. The
same holds for System V and POSIX IPC objects (a shared memory segment outlives its process): the tool has an
IPC namespace of its own, gone with it. This process's Python may not be in that view: what it runs after is
imported before.

The supervisor loads this file by its path (standard library only). A machine that refuses the namespace
(a container without CAP_SYS_ADMIN) is seen by ``files_here`` (tried once, by a child) and said.
"""

from __future__ import annotations

import ctypes
import errno
import fnmatch
import functools
import os
import stat
import sys
from collections.abc import Callable

_CLONE_NEWNS, _CLONE_NEWIPC = 0x00020000, 0x08000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT, _MS_BIND = 2, 4, 8, 0x20, 0x1000
_MS_REC, _MS_PRIVATE = 0x4000, 0x40000
_AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = -100, 0x8000, 1
_MOUNT_SETATTR = {"x86_64": 442, "aarch64": 442}
# the world-writable places of a Linux machine's tools: each given empty, of the tool's own
PRIVATE = ("/tmp", "/var/tmp", "/dev/shm")
# the machine's directories a tool's programs run from, read-only in its view, and nothing else of the
# machine's (an allow list): not /home, /root, /var, /srv, /opt, /run, /mnt, where the gateway keeps its data
# dir, config, keys and audit (a gateway not root: its tool is its uid outside its user namespace, and read
# them) and other users keep theirs; a link among them (``/bin`` to ``usr/bin``) is made again as that link
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc")
# its /etc: a small tmpfs of its own with only these of the machine's bound in it, read-only (an allow list:
# what the dynamic loader, a JDK (its ``conf`` links to ``/etc/java-N-openjdk``) and ``alternatives``' links
# need), and a ``passwd``, ``group`` and ``hosts`` written for it: not the machine's accounts, hosts, TLS
# keys, the gateway's or any service's configuration (``/etc/ssl``, ``/etc/postgresql``, ``/etc/ssh``...)
ETC = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "nsswitch.conf",
    "alternatives",
    "localtime",
    "java-[0-9]*",
)
# its /dev: a tmpfs of its own with these of the machine's devices bound in it (an allow list: what a JVM or
# aapt opens), the usual links, and its own shm; not the machine's terminals (``ptmx``, ``pts``), FUSE, loop
# devices, the kernel log, ``net/tun``, ``kvm`` or whatever else its modes would let it open
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
_DEV_LINKS = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
}
_ROOT_SIZE = "size=1m,nr_inodes=4096,mode=0755"  # the new root's own: its mount points and links only
# what a tool may write, all in one tmpfs of its own (in memory, charged to its cgroup): its workspace (a
# copy), its /tmp, /var/tmp and /dev/shm, together at most the bytes it is given, and one inode per this many
# of them
_BYTES_PER_INODE = 8192
_MIN_INODES = 1024
# the parts of that tmpfs, each bound where the tool sees it ("work": its workspace)
_PARTS = {"/var/tmp": "var-tmp", "/dev/shm": "shm", "/tmp": "tmp"}
PROBE_DISK_BYTES = 1 << 20  # a probe's: it writes one empty file
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
_MNT_DETACH = 2


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _checked(r: int, what: str) -> None:
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def kept_dirs(programs: list[str]) -> list[str]:
    """The directories given back to a tool besides its workspace: those of its program and the files it is
    run with (a jar, the platform file), the gateway's own paths; never one the models wrote (a file named
    ``/tmp/other-build/A.kt`` would otherwise bring that directory into its view)."""
    found: list[str] = []
    for p in programs:
        d = os.path.realpath(os.path.dirname(os.path.abspath(p)))
        # a JDK's program: its home (its ``release`` file says it is one), beside which are its libraries;
        # never a ``bin`` of a home's, which would bring that home into the view
        if os.path.basename(d) == "bin" and os.path.isfile(os.path.join(os.path.dirname(d), "release")):
            d = os.path.dirname(d)
        if d not in found:
            found.append(d)
    return found


def own_files(cwd: str, kept: list[str], disk_bytes: int, user: tuple[int, int] | None = None) -> None:
    """Give this process (root) the view described above, for a tool run in ``cwd`` (then its working
    directory, writable) with ``kept`` given back (``kept_dirs``: writable where under one of ``PRIVATE``,
    read-only elsewhere), ``disk_bytes`` for all it writes, and ``user`` (uid, gid) named in its /etc/passwd.
    OSError when any step fails (the tool is then not run)."""
    keep = [os.path.realpath(cwd), *kept]
    if keep[0] == "/":
        raise OSError(errno.EINVAL, "a tool is never run in /")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
    libc.syscall.restype = ctypes.c_long
    # and an IPC namespace: System V shared memory, semaphores, message queues and POSIX queues outlive
    # their process (a segment of the uid's, left for its next run) and are shared by every tool otherwise
    _checked(libc.unshare(_CLONE_NEWNS | _CLONE_NEWIPC), "no mount or IPC namespace could be made")
    _checked(libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "mounts could not be made private")
    # held before anything covers them: bound into the new root from these
    held = {k: os.open(k, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC) for k in keep}
    try:
        new = _new_root(libc, keep[0], keep, held, disk_bytes, user)
        os.chdir(new)
        _checked(libc.syscall(_PIVOT_ROOT[os.uname().machine], b".", b"."), "the new root could not be taken")
        # the machine's root, now stacked on the new one: gone from this view
        _checked(libc.umount2(b".", _MNT_DETACH), "the machine's root could not be left")
    finally:
        for fd in held.values():
            os.close(fd)
    os.chdir(keep[0])


def _new_root(
    libc: ctypes.CDLL,
    new: str,
    keep: list[str],
    held: dict[str, int],
    disk_bytes: int,
    user: tuple[int, int] | None,
) -> str:
    """The tool's root, built on a small tmpfs over ``new`` (its workspace: a directory of its own, held by
    ``held`` beneath) and returned: ``SYSTEM``, its ``/etc`` and the kept directories, all read-only, then
    ``PRIVATE`` and its workspace (``_own_scratch``) and the writable kept directories."""
    at = new.encode()
    _checked(libc.mount(b"tmpfs", at, b"tmpfs", _MS_NOSUID | _MS_NODEV, _ROOT_SIZE.encode()), "no new root")
    for d in SYSTEM:
        if os.path.islink(d):
            os.symlink(os.readlink(d), new + d)
        elif os.path.isdir(d):
            os.mkdir(new + d)
            _checked(
                libc.mount(d.encode(), (new + d).encode(), None, _MS_BIND | _MS_REC, None), f"{d} not bound"
            )
    _own_etc(libc, new + "/etc", user)
    _own_dev(libc, new + "/dev")
    writable = [k for k in keep if k == keep[0] or _under(k, PRIVATE)]
    for place in PRIVATE:
        if not _under(place, SYSTEM):
            os.makedirs(new + place, mode=0o755, exist_ok=True)
    for k in keep:
        if k in writable and _under(k, PRIVATE) or _under(k, SYSTEM):
            continue  # made in its tmpfs below, or in the view already (read-only)
        os.makedirs(new + k, mode=0o755, exist_ok=True)
        if k not in writable:
            _bind(libc, held[k], new + k)
    attr = _MountAttr(_MOUNT_ATTR_RDONLY, 0, 0, 0)
    nr = _MOUNT_SETATTR[os.uname().machine]
    _checked(
        libc.syscall(nr, _AT_FDCWD, at, _AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr)),
        "the files could not be made read-only",
    )
    work = _own_scratch(libc, new, disk_bytes)
    try:
        os.makedirs(new + keep[0], mode=0o755, exist_ok=True)
        _bind(libc, work, new + keep[0])
    finally:
        os.close(work)
    _copied(held[keep[0]], new + keep[0])
    for k in writable[1:]:
        os.makedirs(new + k, mode=0o755, exist_ok=True)
        _bind(libc, held[k], new + k)
        # a bind's flags are its source mount's: made nosuid, nodev, and writable (its modes still hold)
        _checked(
            libc.mount(None, (new + k).encode(), None, _MS_REMOUNT | _MS_BIND | _MS_NOSUID | _MS_NODEV, None),
            f"{k} not made writable",
        )
    return new


def _own_scratch(libc: ctypes.CDLL, new: str, disk_bytes: int) -> int:
    """One tmpfs of ``disk_bytes`` (and inodes in proportion) for all the tool may write: mounted on its
    ``/tmp``, its parts bound on ``PRIVATE`` (empty, mode 1777), the last on ``/tmp`` itself (the tmpfs's
    root, under it, is then out of reach); its workspace part returned, held (bound once its place is made:
    under ``/tmp``, it is made in that part). Four tmpfs of a fixed size each were four times a tool's
    bound, and with no cgroup (a gateway not root) the machine's memory."""
    tmp = new + "/tmp"
    inodes = max(_MIN_INODES, disk_bytes // _BYTES_PER_INODE)
    options = f"size={disk_bytes},nr_inodes={inodes},mode=0755".encode()
    flags = _MS_NOSUID | _MS_NODEV
    _checked(libc.mount(b"tmpfs", tmp.encode(), b"tmpfs", flags, options), "no /tmp of its own")
    parts = {}
    for name, mode in (*((p, 0o1777) for p in _PARTS.values()), ("work", 0o700)):
        os.mkdir(f"{tmp}/{name}")
        os.chmod(f"{tmp}/{name}", mode)  # (not as the umask would have it)
        parts[name] = os.open(f"{tmp}/{name}", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for place, name in _PARTS.items():
            _bind(libc, parts[name], new + place)
    finally:
        for name, fd in parts.items():
            if name != "work":
                os.close(fd)
    return parts["work"]


def _own_etc(libc: ctypes.CDLL, etc: str, user: tuple[int, int] | None) -> None:
    """``ETC`` of the machine's /etc bound at ``etc`` (a small tmpfs, made read-only with the rest; a link
    made again as that link), and its own ``passwd``, ``group`` and ``hosts``: root, the tool's user (named
    ``tool``), ``nobody``; ``localhost`` only."""
    os.mkdir(etc)
    flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    _checked(libc.mount(b"tmpfs", etc.encode(), b"tmpfs", flags, b"size=64k,mode=0755"), "no /etc of its own")
    try:
        names = sorted(os.listdir("/etc"))
    except OSError:
        names = []
    for name in names:
        if not any(fnmatch.fnmatchcase(name, allowed) for allowed in ETC):
            continue
        source, to = f"/etc/{name}", f"{etc}/{name}"
        if os.path.islink(source):
            os.symlink(os.readlink(source), to)
            continue
        if os.path.isdir(source):
            os.mkdir(to)
        elif os.path.isfile(source):
            with open(to, "x"):
                pass
        else:
            continue
        bound = libc.mount(source.encode(), to.encode(), None, _MS_BIND | _MS_REC, None)
        _checked(bound, f"{source} not bound")
    accounts = [(0, 0, "root", "/root"), (65534, 65534, "nobody", "/nonexistent")]
    user = user or (os.getuid(), os.getgid())  # in a user namespace of its own (``tool_userns.py``): its user
    if user[0] not in (0, 65534):
        accounts.insert(1, (user[0], user[1], "tool", "/nonexistent"))
    shown = {
        "passwd": "".join(f"{n}:x:{u}:{g}:{n}:{h}:/usr/sbin/nologin\n" for u, g, n, h in accounts),
        "group": "".join(f"{n}:x:{g}:\n" for _, g, n, _ in accounts),
        "hosts": "127.0.0.1\tlocalhost\n::1\tlocalhost\n",
    }
    for name, text in shown.items():
        fd = os.open(f"{etc}/{name}", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w") as f:
            f.write(text)


def _own_dev(libc: ctypes.CDLL, dev: str) -> None:
    """``DEVICES`` of the machine's bound at ``dev`` (a small tmpfs, made read-only with the rest: a device
    node on it still opens for writing), ``_DEV_LINKS`` and an empty ``shm`` (its tmpfs comes after)."""
    os.mkdir(dev)
    flags = _MS_NOSUID | _MS_NOEXEC
    _checked(libc.mount(b"tmpfs", dev.encode(), b"tmpfs", flags, b"size=64k,mode=0755"), "no /dev of its own")
    for name in DEVICES:
        if not os.path.exists(f"/dev/{name}"):
            continue
        with open(f"{dev}/{name}", "x"):
            pass
        _checked(
            libc.mount(f"/dev/{name}".encode(), f"{dev}/{name}".encode(), None, _MS_BIND, None),
            f"/dev/{name} not bound",
        )
    for name, target in _DEV_LINKS.items():
        os.symlink(target, f"{dev}/{name}")
    os.mkdir(f"{dev}/shm")


def _copied(source: int, to: str) -> None:
    """What the gateway wrote in the workspace (held by ``source``, a descriptor: its path is covered; its
    sources: a bounded number of small files, the tool's uid's), copied to ``to`` with its modes and owners;
    links made again as links, nothing else copied. The workspace is the tool's user's (``give_workspace``)
    and this process root: walked by directory descriptors, each entry opened as the very file its ``lstat``
    saw, never through a link (a directory or file swapped for a link to a root-only one meanwhile was read as
    root, and given to the tool); an entry changed under it, or not the workspace's own, refuses the run
    (OSError)."""
    st = os.stat(source)  # (its own descriptor: no link to follow)
    owner = st.st_uid
    os.chown(to, st.st_uid, st.st_gid)
    os.chmod(to, st.st_mode & 0o7777)
    for top, dirs, files, at in os.fwalk(".", follow_symlinks=False, dir_fd=source):
        rel = os.path.normpath(top)
        for name in (*dirs, *files):
            dst = os.path.normpath(os.path.join(to, rel, name))
            st = os.lstat(name, dir_fd=at)
            # all the gateway wrote is the workspace's owner's, each file once: another's file, or a hard
            # link (to a file the tool's user could not read, where the machine lets one be made) is not
            if st.st_uid != owner or stat.S_ISREG(st.st_mode) and st.st_nlink != 1:
                raise OSError(errno.EPERM, f"{os.path.join(rel, name)} is not the workspace's own file")
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(name, dir_fd=at), dst)
            elif stat.S_ISDIR(st.st_mode):
                os.mkdir(dst, 0o700)
            elif stat.S_ISREG(st.st_mode):
                flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
                with os.fdopen(os.open(name, flags, dir_fd=at), "rb") as r:
                    if not os.path.samestat(os.fstat(r.fileno()), st):
                        raise OSError(errno.EAGAIN, f"{os.path.join(rel, name)} changed while it was copied")
                    with open(dst, "xb") as w:
                        while chunk := r.read(1 << 20):
                            w.write(chunk)
            else:
                continue
            os.chown(dst, st.st_uid, st.st_gid, follow_symlinks=False)
            if not stat.S_ISLNK(st.st_mode):
                os.chmod(dst, st.st_mode & 0o7777)


def _bind(libc: ctypes.CDLL, fd: int, where: str) -> None:
    """The directory held by ``fd`` at ``where``, without what is mounted in it (the new root, over the
    workspace)."""
    _checked(
        libc.mount(f"/proc/self/fd/{fd}".encode(), where.encode(), None, _MS_BIND, None),
        f"{where} not bound",
    )


def _under(path: str, places: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p + "/") for p in places)


@functools.cache
def files_here() -> bool:
    """Whether this (root) process may give its tools such a view: tried once, by a child."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or os.uname().machine not in _MOUNT_SETATTR:
        return False
    from sentinel_mcp.swarm.tried_by_child import probe_passes  # (this file also runs by path: imported here)

    return probe_passes(__file__)


def files_said(private: bool) -> str:
    if private:
        return (
            "each tool sees the machine's system directories read-only (/usr, /etc...), a /dev of its own "
            "and its workspace, with a /tmp, /var/tmp and /dev/shm of its own (empty, gone with it): nothing "
            "it writes outlives it or reaches another tool, and no other file of the machine's (the "
            "gateway's home, data dir, config and keys) is in its view"
        )
    return (
        "the tools share the machine's /tmp, /var/tmp and /dev/shm (no mount namespace: the gateway is not "
        "root, or is refused one here): what one writes there another can read; and they see every file of "
        "the machine's their user may read"
    )


def probe_dir(tried: Callable[[str], None]) -> int:
    """0 when ``tried`` (a probe's view of the files, given for it a new directory) passes in a child: the
    directory (in the machine's /tmp) is removed after, by this process (the child's view covers it)."""
    import tempfile

    d = tempfile.mkdtemp(prefix="sentinel-probe-")
    try:
        child = os.fork()
        if child == 0:
            try:
                tried(d)
                os._exit(0)
            except BaseException:
                os._exit(1)
        return os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
    finally:
        os.rmdir(d)


def _probe(d: str) -> None:
    own_files(d, [], PROBE_DISK_BYTES)
    with open("/tmp/.probe", "w"):
        pass
    if os.path.exists(os.path.realpath(__file__)) and not _under(os.path.realpath(__file__), SYSTEM):
        raise OSError(errno.EEXIST, "the machine's files outside its system directories are still seen")


if __name__ == "__main__":  # the probe of ``files_here``
    try:
        sys.exit(probe_dir(_probe))
    except OSError:
        sys.exit(1)
