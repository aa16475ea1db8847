"""The "never back in time" mark of the CRLs (``crl_freshness.py``), kept on disk in the data dir so that it
outlives a restart: an older CRL handed back while Sentinel was down is refused at the next start, as it is
refused while Sentinel runs.

The file holds, for each CA whose CRL was ever in force here, the newest CRL's (number, lastUpdate,
nextUpdate). It only moves forward (each CA's newest of what it held and what is in force). It is the
gateway's own: written owner-only (0600) and atomically (a reader sees the old file or the new one, whole),
and a file another account could change is refused as the TLS files are (``file_modes.py``).

A missing file (the first start with client certificates, or one removed) takes the CRL files as they are,
and says so in the log. A file that cannot be read as a mark (corrupt, another's, past its bounds) refuses the
start: what it would have refused cannot be told, and the operator is told which file, and that removing it
takes the CRL files as they are. A mark that cannot be written is logged and shown by /healthz; the CRL in
force is served all the same (it is newer than any the mark could refuse).

Instances of one data dir share the file. A write merges with what is on disk under a lock
(``crl-mark.json.lock``, ``flock``): each CA's newest of the file's and the writer's, so that an instance
that has not seen a newer CRL another one recorded never writes its older stamp back over it (last writer
won). What the others recorded is adopted by the writer, and read again before a changed CRL file is
taken. A mark on disk that cannot be read then is never overwritten: the write is refused and said.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import math
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

from sentinel_mcp.core.errors import TLSError
from sentinel_mcp.tls.crl_freshness import Freshness, newest
from sentinel_mcp.tls.file_modes import replaceable_by_others

log = logging.getLogger(__name__)

MARK_FILE = "crl-mark.json"
MAX_MARK_BYTES = 1 << 20
MAX_CAS = 10_000
MAX_CRL_NUMBER = 1 << 168  # RFC 5280 5.2.3: at most 20 octets (room for a sign octet)
_CA_KEY = re.compile(r"[0-9a-f]{64}")


class CrlMarkError(TLSError, ValueError):
    """The mark file cannot be trusted or read; the message names it and the way out."""


def _refused(path: Path, why: str) -> CrlMarkError:
    return CrlMarkError(
        f"the CRL mark {path} {why}; it records the newest CRL of each CA seen here, so that an older one "
        "is never taken back. Remove it to take the CRL files as they are"
    )


def _number(value: object) -> bool:
    return type(value) in (int, float) and math.isfinite(value)  # type: ignore[arg-type]


def parse_mark(data: bytes) -> Freshness:
    """The mark's content; ValueError when it is not one (type-strict: a bool is no number, no extra
    field)."""
    if len(data) > MAX_MARK_BYTES:
        raise ValueError(f"is larger than {MAX_MARK_BYTES} bytes")
    try:
        doc = json.loads(data.decode("utf-8"))
    except ValueError:  # (UnicodeDecodeError is one)
        raise ValueError("is not JSON in UTF-8") from None
    if not isinstance(doc, dict) or set(doc) != {"version", "cas"} or doc["version"] != 1 or type(
            doc["version"]) is not int or not isinstance(doc["cas"], dict):
        raise ValueError('is not {"version": 1, "cas": {...}}')
    if len(doc["cas"]) > MAX_CAS:
        raise ValueError(f"names more than {MAX_CAS} CAs")
    out: Freshness = {}
    for ca, stamp in doc["cas"].items():
        if not _CA_KEY.fullmatch(ca):
            raise ValueError("names a CA by something other than its certificate's SHA-256")
        if not isinstance(stamp, list) or len(stamp) != 3:
            raise ValueError("holds a CA entry that is not [number, lastUpdate, nextUpdate]")
        number, last, due = stamp
        if type(number) is not int or not -1 <= number < MAX_CRL_NUMBER:
            raise ValueError("holds a CRL number that is not one")
        if not _number(last) or not (due is None or _number(due)):
            raise ValueError("holds a CRL time that is not one")
        out[ca] = (number, float(last), None if due is None else float(due))
    return out


class CrlMark:
    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> Freshness:
        """The mark kept (empty when there is none yet, said in the log); CrlMarkError when it cannot be
        trusted or read."""
        try:
            return self._read()
        except FileNotFoundError:
            log.warning("TLS: no CRL mark at %s (the first start with client certificates, or it was "
                        "removed): the CRL files are taken as they are, and their freshness kept there from "
                        "now on", self.path)
            return {}

    def recorded(self) -> Freshness:
        """What the file holds now (another instance's writes included); empty when it is missing or cannot
        be read (a write then says why, and refuses to overwrite it)."""
        try:
            return self._read()
        except (CrlMarkError, FileNotFoundError):
            return {}

    def _read(self) -> Freshness:
        """The file's mark; FileNotFoundError when there is none, CrlMarkError when it cannot be trusted or
        read."""
        path = self.path
        unsafe = replaceable_by_others(path)
        if unsafe is not None:
            raise _refused(path, f"may be changed by another account ({unsafe})")
        try:
            with path.open("rb") as f:
                data = f.read(MAX_MARK_BYTES + 1)
        except FileNotFoundError:
            raise
        except OSError as e:
            raise _refused(path, f"cannot be read ({e.strerror})") from None
        try:
            return parse_mark(data)
        except ValueError as e:
            raise _refused(path, f"is not a CRL mark: it {e}") from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Writers of this data dir one at a time (the kernel drops the lock when its holder ends)."""
        directory = self.path.parent
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def save(self, held: Freshness, fresh: Freshness) -> Freshness:
        """``held`` moved forward by ``fresh`` and by what the file holds now (each CA's newest), written when
        that differs from the file; returns it. OSError when it cannot be written, CrlMarkError when the file
        on disk cannot be read (it is left as it is): the caller logs either and serves on."""
        with self._locked():
            try:
                recorded: Freshness | None = self._read()
            except FileNotFoundError:
                recorded = None
            mark = newest(recorded or {}, held, fresh)
            if mark != recorded:
                self._write(mark)
        return mark

    def _write(self, mark: Freshness) -> None:
        body = json.dumps({"version": 1, "cas": {ca: list(stamp) for ca, stamp in sorted(mark.items())}},
                          indent=1).encode()
        directory = self.path.parent
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".crl-mark.")  # owner-only (0600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(body)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)  # a link or anything at the name is replaced, never followed
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)  # the rename itself survives a crash
        finally:
            os.close(dfd)
