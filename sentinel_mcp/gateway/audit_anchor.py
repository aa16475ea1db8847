"""The audit log's anchor: an append-only, keyed record of every chain's head, kept OUTSIDE the data dir.

The hash chain (``audit_chain.py``) is plain sha256 and its head sits in the same file, so whoever can write
the data dir can cut rows and rewind the head, recompute a chain after an edit, restore an older copy, or
remove, hide, graft or swap a whole instance. The anchor answers that: a directory elsewhere (default
``$XDG_STATE_HOME/sentinel-mcp/anchors/<digest of the data dir's real path>/``) holds

- ``key``: 32 random bytes (hex), made 0600 on first start; a key others may read or write, or that is not a
  regular file, is refused (whoever could read it could forge anchors);
- ``anchors.log``: JSON lines, each one chain's committed head (where, chain, rows, hash) at a moment, with
  ``mac`` = HMAC-SHA256(key, the record) and ``prev`` = the MAC of the line before (a line cut from the
  middle, edited or reordered breaks every MAC after it). The first line names the data dir it belongs to.

The point is that whoever can write the data dir cannot write there (another volume, another owner, a
directory a backup never restores). Rows committed after a chain's last anchor are not covered (the window:
``ANCHOR_EVERY`` seconds while a gateway runs, and whatever a crashed gateway wrote after its last anchor).
Several gateways on one data dir append to one file, one at a time (``flock`` of ``anchors.lock``).

A writer that ignores the lock is noticed by the next append of every running gateway: each one remembers
how far it has checked the file (the end of its own last append, and that line) and, before it appends,
checks that everything since then follows on, line by line, with this key (a replayed or foreign line, the
file cut or rewritten under it); and after its write it checks that its lines landed where the file ended
when it read it (a line slipped in between its read and its write). Any of these refuses the append
(``ForeignAnchor``) for as long as the file holds it, as a bad last line does.

The file is compacted when an append finds it past ``COMPACT_AT`` bytes (a busy gateway adds ~14 MB a day):
its records are checked as ``audit verify`` checks them (a file that fails is never compacted: the append is
refused), then rewritten, under the lock, as a new genesis and one ``carried`` line per chain: the first
saying of its highest anchored row count, which vouches for every row up to it (the chain's hash after that
count covers all of them), with the kind the chain was known by (``carried`` for a chain known from its start
or adoption, ``settled`` for one only a later start named). The new file replaces the old one by rename, under
the writers' lock; a reader (``audit verify``) sees one file or the other, whole.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import secrets
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from sentinel_mcp.gateway.audit_schema import GENESIS
from sentinel_mcp.storage.database import StorageError
from sentinel_mcp.storage.private_paths import private_dir

KEY = "key"
LOG = "anchors.log"
LOCK = "anchors.lock"  # the writers' lock (never replaced: compaction replaces the log under it)
ANCHOR_EVERY = 2.0  # seconds between a running gateway's anchors (only when its chain moved)
VERSION = 1
KINDS = ("genesis", "adopt", "start", "head", "stop", "settled", "carried")
KNOWN_FROM = ("start", "adopt", "carried")  # kinds that make a chain known to the anchor (vouched for)
COMPACT_AT = 1024 * 1024  # bytes: past this an append compacts first (~0.1 s CPU; every ~2 h when busy)
_FIELDS = {
    "v": int, "seq": int, "ts": float, "kind": str, "place": str, "chain": str, "rows": int, "hash": str,
    "prev": str, "mac": str,
}
MAX_LINE = 16384  # a record is a few hundred bytes; longer lines are not ours
_HEX64 = frozenset("0123456789abcdef")


class AnchorError(StorageError):
    """The anchor (its key or its file) cannot be used; the message names the file and what is wrong."""

    area = "storage"  # a message says "anchor key ...", "cannot verify: ...": its own subject
    prefixed = True


def check_outside(anchor_dir: Path, store_dir: Path) -> None:
    """An anchor inside the data dir protects nothing: refused."""
    a, s = os.path.realpath(anchor_dir), os.path.realpath(store_dir)
    if a == s or a.startswith(s.rstrip(os.sep) + os.sep):
        raise AnchorError(
            f"sentinel.audit_anchor {anchor_dir} is inside the data dir {store_dir}: whoever can write the "
            "data dir could rewrite the anchor too; choose a directory outside it"
        )


def _private_parent(directory: Path) -> None:
    """The anchor directory exists and no one but its owner may change what is in it."""
    private_dir(directory)
    st = os.stat(directory)
    if not stat.S_ISDIR(st.st_mode):
        raise AnchorError(f"{directory} is not a directory")
    if st.st_mode & 0o022:
        raise AnchorError(
            f"{directory} may be written by group or others (mode {stat.S_IMODE(st.st_mode):04o}): "
            "they could replace the anchor or its key; make it 0700"
        )


def _checked_key(fd: int, path: Path) -> bytes:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise AnchorError(f"anchor key {path} is not a regular file")
    if st.st_uid != os.geteuid():
        raise AnchorError(f"anchor key {path} is not owned by this user")
    if st.st_mode & 0o077:
        raise AnchorError(
            f"anchor key {path} may be read or written by group or others (mode "
            f"{stat.S_IMODE(st.st_mode):04o}): whoever reads it can forge anchors; make it 0600 (chmod 600)"
        )
    text = os.read(fd, 200).strip()
    if len(text) != 64 or not set(text.decode("ascii", "replace")) <= _HEX64:
        raise AnchorError(f"anchor key {path} is not a Sentinel anchor key (64 hex digits)")
    return bytes.fromhex(text.decode("ascii"))


def load_key(directory: Path, *, create: bool) -> bytes:
    """The anchor key; made (0600, never replacing one) when ``create`` and absent."""
    path = Path(directory) / KEY
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        if not create:
            raise AnchorError(f"cannot verify: no anchor key at {path}") from None
        _make_key(path)
        return load_key(directory, create=False)
    except OSError as e:  # ELOOP: a symlink; EACCES: not ours to read
        raise AnchorError(
            f"anchor key {path} cannot be opened ({e.strerror}; it must be a regular file)"
        ) from None
    try:
        return _checked_key(fd, path)
    finally:
        os.close(fd)


def _make_key(path: Path) -> None:
    _private_parent(path.parent)
    tmp = path.with_name(f".{KEY}-{os.getpid()}-{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, (secrets.token_hex(32) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # fails if another process made one first: theirs is the key
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    _sync_dir(path.parent)


def _sync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _inode(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _last_line(fd: int, size: int) -> bytes:
    """The file's last line through byte ``size`` (which ends one), with its newline."""
    chunk = os.pread(fd, min(size, MAX_LINE + 1), size - min(size, MAX_LINE + 1))
    return chunk[chunk.rfind(b"\n", 0, len(chunk) - 1) + 1:]


def record_mac(key: bytes, record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "mac"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(key, text.encode("ascii"), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Head:
    """One chain's committed head: ``place`` is its file relative to the data dir."""

    place: str
    chain: str
    rows: int
    hash: str


class BrokenAnchor(AnchorError):
    """A line of the anchor file that is not what this key wrote, or does not follow the line before."""

    def __init__(self, path: Path, line: int, why: str) -> None:
        super().__init__(f"{path} line {line}: {why}")
        self.line = line


def parse_record(text: str, key: bytes, prev: str, seq: int, path: Path) -> dict[str, Any]:
    """Line ``seq`` as written with ``key`` after the line whose MAC is ``prev``, or ``BrokenAnchor``."""
    try:
        rec = json.loads(text)
    except (ValueError, RecursionError):
        raise BrokenAnchor(path, seq, "not an anchor record (not JSON)") from None
    if not isinstance(rec, dict) or set(rec) != set(_FIELDS):
        raise BrokenAnchor(path, seq, "not an anchor record (its fields differ)")
    for name, kind in _FIELDS.items():
        value = rec[name]
        ok = type(value) is kind or (kind is float and type(value) is int)
        if not ok:
            raise BrokenAnchor(path, seq, f"field {name} has the wrong type")
    if not hmac.compare_digest(rec["mac"], record_mac(key, rec)):
        raise BrokenAnchor(
            path, seq, "its MAC does not match (the line was edited, or this is not the key that wrote it)"
        )
    if rec["prev"] != prev or rec["seq"] != seq:
        raise BrokenAnchor(path, seq, "does not follow the line before it (lines removed, inserted or moved)")
    if rec["v"] != VERSION or rec["kind"] not in KINDS or rec["rows"] < 0:
        raise BrokenAnchor(path, seq, "not an anchor record this Sentinel writes")
    return rec


class ForeignAnchor(AnchorError):
    """The anchor file holds what no gateway wrote with this key since this one last checked it."""


@dataclass(frozen=True)
class Checked:
    """How far this writer has checked the anchor file: through byte ``end`` of the file ``inode``, whose
    last line (``line``, with its newline) is record ``seq`` with MAC ``mac``."""

    inode: tuple[int, int]
    end: int
    line: bytes
    mac: str
    seq: int
    head: Head  # the last head it appended (what a compaction of the file keeps, or a higher one)


class AnchorLog:
    """The anchor directory of one data dir: append (gateways) and read (``audit verify``)."""

    def __init__(self, directory: Path, store_dir: Path) -> None:
        self.dir = Path(directory)
        self.store_dir = Path(store_dir)
        self.path = self.dir / LOG
        self.checked: Checked | None = None  # this writer's own view of the file (see the module docstring)
        check_outside(self.dir, self.store_dir)

    def data_dir_id(self) -> str:
        return os.path.realpath(self.store_dir)

    # ------------------------------------------------------------------ appending (blocking)
    def open_for_writing(self) -> bytes:
        """The key (made on first start), with the directory checked; raises ``AnchorError``."""
        try:
            _private_parent(self.dir)
            return load_key(self.dir, create=True)
        except AnchorError:
            raise
        except OSError as e:
            raise AnchorError(f"anchor directory {self.dir}: {e.strerror or e}") from None

    def append(self, key: bytes, heads: list[tuple[str, Head]], first: Callable[[], list[Head]]) -> int:
        """Append one record per ``(kind, head)``, durable when this returns. On a new file the genesis line
        and ``first()`` (every chain already in the data dir, adopted as found) come first: how many were
        adopted is returned (0 on an existing file)."""
        lock = self._locked()
        fd = -1
        try:
            fd = self._opened()
            if os.fstat(fd).st_size > COMPACT_AT:
                self._compact(fd, key)
                old, fd = fd, -1
                os.close(old)
                fd = self._opened()
            prev, seq = self._tail(fd, key)
            size = os.fstat(fd).st_size
            self._check_since(fd, key, size)
            before = prev, seq
            lines: list[str] = []
            now = time.time()

            def add(kind: str, head: Head) -> None:
                nonlocal prev, seq
                seq += 1
                rec: dict[str, Any] = {
                    "v": VERSION, "seq": seq, "ts": now, "kind": kind, "place": head.place,
                    "chain": head.chain, "rows": head.rows, "hash": head.hash, "prev": prev,
                }
                rec["mac"] = prev = record_mac(key, rec)
                lines.append(json.dumps(rec, sort_keys=True, separators=(",", ":"), ensure_ascii=True) + "\n")

            adopted = 0
            if seq == 0:
                add("genesis", Head(self.data_dir_id(), "", 0, GENESIS))
                for head in first():
                    add("adopt", head)
                    adopted += 1
            for kind, head in heads:
                add(kind, head)
            data = "".join(lines).encode("ascii")
            if self.checked is None:  # a line slipped in under this first write is found by the next append
                self.checked = Checked(_inode(fd), size, _last_line(fd, size), *before, heads[-1][1])
            self._write(fd, data, size)
            os.fsync(fd)
            last = lines[-1].encode("ascii")
            self.checked = Checked(_inode(fd), size + len(data), last, prev, seq, heads[-1][1])
            return adopted
        except OSError as e:
            raise AnchorError(f"anchor {self.path} cannot be written: {e.strerror or e}") from None
        finally:
            if fd >= 0:
                os.close(fd)
            os.close(lock)  # drops the flock

    def _write(self, fd: int, data: bytes, at: int) -> None:
        """``data`` appended where the file ended (``at``) when it was read; each write's place is checked
        (O_APPEND puts it at the end, whoever wrote there since)."""
        while data:
            n = os.write(fd, data)
            end = os.lseek(fd, 0, os.SEEK_CUR)
            if end - n != at:
                raise ForeignAnchor(
                    f"anchor {self.path}: {end - n - at} byte(s) were written to it between this gateway's "
                    "read and its write, by a writer that does not take its lock; not appending until they "
                    "are gone (audit verify names the line)"
                )
            at, data = end, data[n:]

    def _check_since(self, fd: int, key: bytes, size: int) -> None:
        """Everything after what this writer last checked follows on from it (``ForeignAnchor`` if not). On
        this writer's first append the last line's MAC (``_tail``) is all it has."""
        mark = self.checked
        if mark is None:
            return
        same = mark.inode == _inode(fd) and size >= mark.end
        if not same or os.pread(fd, len(mark.line), mark.end - len(mark.line)) != mark.line:
            self._check_whole(fd, key, size, mark)
            return
        prev, seq = mark.mac, mark.seq
        for raw in os.pread(fd, size - mark.end, mark.end).split(b"\n")[:-1]:
            seq += 1
            try:
                if len(raw) > MAX_LINE:
                    raise BrokenAnchor(self.path, seq, "line too long to be an anchor record")
                prev = parse_record(raw.decode("ascii", "replace"), key, prev, seq, self.path)["mac"]
            except BrokenAnchor as e:
                raise ForeignAnchor(
                    f"{e}; not what a gateway appended after this one's record {mark.seq}: not appending"
                ) from None

    def _check_whole(self, fd: int, key: bytes, size: int, mark: Checked) -> None:
        """The file is not the one this writer last appended to as it was (another gateway compacted it into
        a new file, or it was cut or rewritten): every line checked, as compaction checks them, and this
        writer's last head still said (compaction keeps each chain's highest row count)."""
        try:
            records = self.parse(os.pread(fd, size, 0), key)
        except BrokenAnchor as e:
            raise ForeignAnchor(
                f"{e}; since this gateway's last append (record {mark.seq}): not appending"
            ) from None
        h = mark.head
        if not any(
            (r["place"], r["chain"]) == (h.place, h.chain)
            and (r["rows"] > h.rows or (r["rows"] == h.rows and r["hash"] == h.hash))
            for r in records
        ):
            raise ForeignAnchor(
                f"anchor {self.path} was cut or rewritten since this gateway's last append (record "
                f"{mark.seq}, {h.rows} rows of chain {h.chain}, is gone); not appending"
            )

    def _locked(self) -> int:
        """The exclusive lock of the anchor directory's writers (``anchors.lock``: a file that is never
        replaced, so compaction may replace the log under it)."""
        try:
            fd = os.open(self.dir / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as e:
            raise AnchorError(f"anchor lock {self.dir / LOCK} cannot be opened: {e.strerror or e}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise AnchorError(f"anchor lock {self.dir / LOCK} must be a regular file")
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _opened(self) -> int:
        """The anchor file, open for appending (taken with the lock held)."""
        try:
            flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(self.path, flags, 0o600)
        except OSError as e:
            raise AnchorError(f"anchor {self.path} cannot be opened: {e.strerror or e}") from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o077:
            os.close(fd)
            raise AnchorError(f"anchor {self.path} must be a regular file only its owner may use (0600)")
        return fd

    def _compact(self, fd: int, key: bytes) -> None:
        """Rewrite the file (locked by ``fd``) as a genesis and one line per chain (module docstring)."""
        with os.fdopen(os.dup(fd), "rb") as f:
            f.seek(0)
            data = f.read()
        records = self.parse(data, key)  # BrokenAnchor: the evidence is kept, the append refused
        known = {(r["place"], r["chain"]) for r in records if r["kind"] in KNOWN_FROM}
        best: dict[tuple[str, str], dict[str, Any]] = {}
        for rec in records[1:]:
            at = (rec["place"], rec["chain"])
            if at not in best or rec["rows"] > best[at]["rows"]:
                best[at] = rec
        lines, prev = [], GENESIS
        carried = [records[0], *sorted(best.values(), key=lambda r: r["seq"])]
        for seq, old in enumerate(carried, start=1):
            vouched = (old["place"], old["chain"]) in known
            kind = old["kind"] if seq == 1 else "carried" if vouched else "settled"
            rec = {**old, "seq": seq, "kind": kind, "prev": prev}
            rec["mac"] = prev = record_mac(key, {k: v for k, v in rec.items() if k != "mac"})
            lines.append(json.dumps(rec, sort_keys=True, separators=(",", ":"), ensure_ascii=True) + "\n")
        tmp = self.path.with_name(f".{LOG}-{os.getpid()}-{secrets.token_hex(4)}")
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            payload = "".join(lines).encode("ascii")
            while payload:
                payload = payload[os.write(out, payload):]
            os.fsync(out)
        except BaseException:
            os.close(out)
            tmp.unlink(missing_ok=True)
            raise
        os.close(out)
        os.replace(tmp, self.path)
        _sync_dir(self.dir)

    def _tail(self, fd: int, key: bytes) -> tuple[str, int]:
        """The last record's MAC and number (GENESIS, 0 for an empty file). A last line without its newline
        (a crash while it was written) is cut off; a last line this key did not write stops the append."""
        size = os.fstat(fd).st_size
        if size == 0:
            return GENESIS, 0
        start = max(0, size - 2 * MAX_LINE)
        chunk = os.pread(fd, size - start, start)
        if not chunk.endswith(b"\n"):
            cut = chunk.rfind(b"\n")
            keep = start + cut + 1 if cut >= 0 else start
            os.ftruncate(fd, keep)
            chunk = chunk[: cut + 1] if cut >= 0 else b""
            if keep == 0:
                return GENESIS, 0
        lines = chunk.rstrip(b"\n").split(b"\n")
        last = lines[-1].decode("ascii", "replace")
        try:
            rec = json.loads(last)
            if not isinstance(rec, dict) or type(rec.get("seq")) is not int:
                raise ValueError
            expected = record_mac(key, rec)
        except (ValueError, TypeError, RecursionError):
            raise AnchorError(
                f"anchor {self.path}: its last line is not an anchor record; not appending"
            ) from None
        if not hmac.compare_digest(str(rec.get("mac")), expected):
            raise AnchorError(
                f"anchor {self.path}: its last line was not written with this key (edited, or the key was "
                "replaced); not appending"
            )
        return str(rec["mac"]), int(rec["seq"])

    # ------------------------------------------------------------------ reading (``audit verify``)
    def read(self, key: bytes) -> list[dict[str, Any]]:
        """Every record, each checked (``BrokenAnchor`` names the first bad line)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except FileNotFoundError:
            raise AnchorError(
                f"cannot verify: the anchor {self.path} is missing (anchoring is on: a gateway writes it "
                "when it starts)"
            ) from None
        except OSError as e:
            raise AnchorError(
                f"cannot verify: the anchor {self.path} cannot be opened ({e.strerror})"
            ) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise AnchorError(f"cannot verify: the anchor {self.path} is not a regular file")
            with os.fdopen(os.dup(fd), "rb") as f:
                data = f.read()
        finally:
            os.close(fd)
        if not data:
            raise AnchorError(f"cannot verify: the anchor {self.path} is empty")
        return self.parse(data, key)

    def parse(self, data: bytes, key: bytes) -> list[dict[str, Any]]:
        """The file's records, each checked (``BrokenAnchor`` names the first bad line)."""
        lines = data.split(b"\n")
        if lines[-1] != b"":
            raise BrokenAnchor(
                self.path, len(lines), "incomplete last line (the file was cut, or a crash while writing it)"
            )
        records: list[dict[str, Any]] = []
        prev = GENESIS
        for n, raw in enumerate(lines[:-1], start=1):
            if len(raw) > MAX_LINE:
                raise BrokenAnchor(self.path, n, "line too long to be an anchor record")
            rec = parse_record(raw.decode("ascii", "replace"), key, prev, n, self.path)
            if n == 1 and (rec["kind"] != "genesis" or rec["place"] != self.data_dir_id()):
                raise BrokenAnchor(
                    self.path, 1, f"this anchor belongs to another data dir ({rec['place']!r}), not this one"
                )
            if n > 1 and rec["kind"] == "genesis":
                raise BrokenAnchor(self.path, n, "a second genesis line")
            prev = rec["mac"]
            records.append(rec)
        return records
