"""Tool pins: each configured upstream's tools as they were first seen, so that a later change is held.

An upstream's tool definition is its word to the model (the description is read as instructions) and to the
policy (``readOnlyHint`` lets the fail-safe default through without a question). A server that changes a tool
after the user started trusting it (a "rug pull": a description that now tells the model to send secrets
elsewhere, a schema that now takes more, an annotation that now claims read-only) would be shown and obeyed at
once. So the first definition of every ``<server>__<tool>`` identity is pinned (its digest, and the definition
itself to show what changed), and a later definition that differs is **held**: the tool is withheld from every
listing and every call (the client's, a binding's) until the owner accepts the new definition
(``sentinel-mcp pins accept``), which pins exactly the definition the owner was shown.

The pins live in one JSON file in the data dir, written whole (temporary file, then rename; owner-only). The
gateway and the CLI change it under an exclusive lock, each merging what the other wrote; the gateway reloads
it when it changes on disk. A file that cannot be read is never replaced and pins nothing: every upstream
tool is held while it is so (a check that cannot be made denies), and the problem names the file and line.
Built-ins are not pinned: their definitions are Sentinel's own code.

Each server has its own share of the pins (``MAX_PINS_PER_SERVER`` identities, ``MAX_KEPT_PER_SERVER``
characters of definitions kept to show changes): a server that lists new names on every listing (and says its
tools changed after each) pinned them all, so within a minute the pins were full and every new tool of every
other server was held, and the file could grow past what it is read at (every upstream tool held). Past its
share a server's new tools are held, its definitions kept as digests only; other servers' are not touched.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.core.outside_file import TooLarge, read_judged_bytes
from sentinel_mcp.core.trusted_code import OPT_OUT, OPT_OUT_VALUE, opted_out
from sentinel_mcp.core.utf8_text import json_utf8_size

if TYPE_CHECKING:  # the CLI's `pins` commands read the file without the SDK (it loads in start-up's time)
    from mcp.types import Tool

FILE_NAME = "tool-pins.json"
FORMAT = 1
MAX_PINS = 100_000  # identities pinned (50 upstreams of the listing bound's 5,000 tools would be 250,000)
MAX_KEPT_DEFINITION = 64_000  # UTF-8 bytes of a definition kept to show a change (the digest is always kept)
MAX_PINS_PER_SERVER = 10_000  # twice the listing bound: room for tools renamed over time
MAX_KEPT_PER_SERVER = 4_000_000  # UTF-8 bytes of one server's definitions kept (past it, digests only)
MAX_FILE_BYTES = 256_000_000
# what a definition is made of: every field the upstream lists except the name (the identity holds it)
_NOT_COMPARED = frozenset({"name"})


class PinsUnreadable(GatewayError):
    """The pins file exists and is not a pins file Sentinel wrote (its path, line and problem in the text)."""


def definition_of(tool: Tool) -> dict[str, Any]:
    """What of a tool is pinned: every listed field but its name, as JSON."""
    data = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {k: v for k, v in data.items() if k not in _NOT_COMPARED}


def digest_of(definition: dict[str, Any]) -> str:
    # keys sorted: a server that lists the same definition with its keys in another order changes nothing
    text = json.dumps(definition, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def changed_fields(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    """The top-level fields that differ (``description``, ``inputSchema``, ``annotations``...), or [] when
    either definition was too large to keep."""
    if old is None or new is None:
        return []
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))


@dataclass(frozen=True, slots=True)
class Held:
    """A tool whose listed definition differs from its pin."""

    identity: str
    pinned_at: float
    seen_at: float
    fields: tuple[str, ...]  # what changed (empty: not known, a definition too large to keep)

    def reason(self) -> str:
        what = ", ".join(self.fields) if self.fields else "its definition"
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.pinned_at))
        return (
            f"tool {self.identity} is held: its upstream changed it ({what}) since it was pinned on {when}; "
            f"the owner reviews the change with `sentinel-mcp pins show {self.identity}` and accepts it with "
            f"`sentinel-mcp pins accept {self.identity}`"
        )


class ToolPins:
    """The pins file of one data dir (``path``), loaded once and reloaded when it changes on disk."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._pins: dict[str, dict[str, Any]] = {}  # identity -> {digest, pinned_at, definition|None}
        self._changes: dict[str, dict[str, Any]] = {}  # identity -> the held definition
        self._sizes: dict[str, int] = {}  # identity -> its kept definition's size (a server's share)
        self.problem: str | None = None  # the file cannot be read: every upstream tool is held
        self._seen: tuple[int, int, int] | None = None  # (inode, size, mtime_ns) of the version loaded
        self.reload()

    # ------------------------------------------------------------------ the file
    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def changed_on_disk(self) -> bool:
        return self._stat() != self._seen

    def reload(self) -> bool:
        """Read the file again if it changed on disk; True if what is pinned may have changed."""
        seen = self._stat()
        if seen == self._seen and self._seen is not None:
            return False
        try:
            pins, changes = _read(self.path)
        except PinsUnreadable as e:
            self.problem, self._seen = str(e), seen
            return True
        self._pins, self._changes, self.problem, self._seen = pins, changes, None, seen
        self._sizes = {}
        return True

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _update(self, change: Any) -> None:
        """Apply ``change(pins, changes)`` to what is on disk now (another writer's merged), then write."""
        with self._locked():
            self._seen = None
            self.reload()
            if self.problem is not None:
                return  # never overwrite a file that cannot be read: the owner's to fix
            change(self._pins, self._changes)
            _write(self.path, self._pins, self._changes)
            self._seen = self._stat()

    # ------------------------------------------------------------------ the gateway's side
    def check(self, listed: dict[str, Tool], servers: dict[str, str] | None = None) -> dict[str, Held | str]:
        """Pin the identities seen for the first time; the ones whose definition differs from their pin are
        returned (identity -> ``Held``), or every one (-> the problem) while the file cannot be read.
        ``listed``: identity -> the tool as its upstream lists it; ``servers``: identity -> its server (each
        server's share of the pins is counted by it)."""
        self.reload()  # what the owner accepted meanwhile counts
        if self.problem is not None:
            return {identity: f"tool {identity} is held: {self.problem}" for identity in listed}
        shares = _Shares(self._pins, self._changes, servers or {}, self._sizes)
        now = time.time()
        fresh: dict[str, dict[str, Any]] = {}
        held: dict[str, Held | str] = {}
        noted: dict[str, dict[str, Any]] = {}
        cleared: list[str] = []  # held before, listed as pinned again
        for identity, tool in listed.items():
            try:
                definition = definition_of(tool)
                digest = digest_of(definition)
            except (ValueError, RecursionError) as e:  # nested past what can be written: nothing to pin
                held[identity] = f"tool {identity} is held: its definition cannot be pinned ({e})"
                continue
            pin = self._pins.get(identity)
            if pin is None:
                if len(self._pins) + len(fresh) >= MAX_PINS:
                    held[identity] = f"tool {identity} is held: {MAX_PINS:,} tools are pinned already"
                    continue
                full = shares.full(identity)
                if full is not None:
                    held[identity] = f"tool {identity} is held: {full}"
                    continue
                fresh[identity] = {"digest": digest, "pinned_at": now,
                                   "definition": shares.keep(identity, _kept(definition))}
                continue
            if pin["digest"] == digest:
                if identity in self._changes:
                    cleared.append(identity)
                continue
            known = self._changes.get(identity)
            seen_at = known["seen_at"] if known is not None and known["digest"] == digest else now
            if known is None or known["digest"] != digest:
                noted[identity] = {"digest": digest, "seen_at": seen_at,
                                   "definition": shares.keep(identity, _kept(definition))}
            held[identity] = Held(
                identity, pin["pinned_at"], seen_at,
                tuple(changed_fields(pin.get("definition"), _kept(definition))),
            )
        if fresh or noted or cleared:

            def change(pins: dict[str, dict[str, Any]], changes: dict[str, dict[str, Any]]) -> None:
                for identity, pin in fresh.items():
                    pins.setdefault(identity, pin)  # another writer's pin of it stands
                changes.update(noted)
                for identity in cleared:
                    changes.pop(identity, None)

            self._update(change)
            if self.problem is not None:
                return {identity: f"tool {identity} is held: {self.problem}" for identity in listed}
            # a pin another writer made first may differ from what is listed now: checked against it
            for identity, mine in fresh.items():
                pin = self._pins.get(identity)
                if pin is not None and pin["digest"] != mine["digest"]:
                    held[identity] = Held(identity, pin["pinned_at"], now, ())
        return held

    # ------------------------------------------------------------------ the owner's side (the CLI)
    def entries(self) -> list[dict[str, Any]]:
        """Every pin, with the change held against it if any (for ``pins list``)."""
        out = []
        for identity in sorted(self._pins):
            pin, change = self._pins[identity], self._changes.get(identity)
            out.append({
                "tool": identity,
                "pinned_at": pin["pinned_at"],
                "digest": pin["digest"],
                "held": change is not None,
                **({"changed": changed_fields(pin.get("definition"), change.get("definition")),
                    "seen_at": change["seen_at"]} if change is not None else {}),
            })
        return out

    def shown(self, identity: str) -> dict[str, Any] | None:
        """The pinned definition and the held one of a tool (for ``pins show``), or None if not pinned."""
        pin = self._pins.get(identity)
        if pin is None:
            return None
        change = self._changes.get(identity)
        return {"tool": identity, "pinned": pin, "held": change}

    def accept(self, identities: list[str], digest: str) -> dict[str, str]:
        """Pin the held definition of these tools whose digest is ``digest`` (the one the owner was shown: one
        the upstream changed since is another digest), and only one kept to show (past ``MAX_KEPT_DEFINITION``
        only its digest is kept: nobody could have read it): identity -> the digest now pinned."""
        accepted: dict[str, str] = {}

        def change(pins: dict[str, dict[str, Any]], changes: dict[str, dict[str, Any]]) -> None:
            for identity in identities:
                held = changes.get(identity)
                if held is None or held["digest"] != digest or held.get("definition") is None:
                    continue
                del changes[identity]
                pins[identity] = {"digest": held["digest"], "pinned_at": time.time(),
                                  "definition": held.get("definition")}
                accepted[identity] = held["digest"]

        self._update(change)
        return accepted

    def forget(self, identities: list[str]) -> list[str]:
        """Drop these pins (the next listing pins what it then says, as at first sight)."""
        forgotten: list[str] = []

        def change(pins: dict[str, dict[str, Any]], changes: dict[str, dict[str, Any]]) -> None:
            for identity in identities:
                changes.pop(identity, None)
                if pins.pop(identity, None) is not None:
                    forgotten.append(identity)

        self._update(change)
        return forgotten

    @property
    def held_identities(self) -> list[str]:
        return sorted(self._changes)


class _Shares:
    """Each server's share of the pins: how many identities it has pinned, how much of their definitions is
    kept (counted once per check, from the pins as they are)."""

    def __init__(
        self, pins: dict[str, dict[str, Any]], changes: dict[str, dict[str, Any]], servers: dict[str, str],
        sizes: dict[str, int],
    ) -> None:
        self.pins, self.changes, self.servers, self.sizes = pins, changes, servers, sizes
        self.count: dict[str, int] = {}
        self.kept: dict[str, int] = {}
        self.counted = False

    def _count(self) -> None:
        """Counted when a first new identity is met (most checks meet none); sizes remembered per identity."""
        self.counted = True
        names = set(self.servers.values())
        for held, entries in ((False, self.pins), (True, self.changes)):
            for identity, entry in entries.items():
                server = _server_of(identity, names)
                if server is None:
                    continue
                if not held:
                    self.count[server] = self.count.get(server, 0) + 1
                definition = entry.get("definition")
                if definition is not None:
                    key = f"{'held' if held else 'pin'}:{entry.get('digest')}:{identity}"
                    size = self.sizes.get(key)
                    if size is None:
                        size = self.sizes[key] = _size(definition)
                    self.kept[server] = self.kept.get(server, 0) + size

    def full(self, identity: str) -> str | None:
        """Why ``identity``'s server may pin no more (None: it may)."""
        server = self.servers.get(identity)
        if server is None:
            return None
        if not self.counted:
            self._count()
        if self.count.get(server, 0) >= MAX_PINS_PER_SERVER:
            return (f"server {server!r} has {MAX_PINS_PER_SERVER:,} tools pinned already (sentinel-mcp pins "
                    "forget those it no longer lists)")
        self.count[server] = self.count.get(server, 0) + 1
        return None

    def keep(self, identity: str, definition: dict[str, Any] | None) -> dict[str, Any] | None:
        """``definition`` if its server's share of kept definitions has room for it, else None (its digest
        only)."""
        server = self.servers.get(identity)
        if server is None or definition is None:
            return definition
        if not self.counted:
            self._count()
        size = _size(definition)
        if self.kept.get(server, 0) + size > MAX_KEPT_PER_SERVER:
            return None
        self.kept[server] = self.kept.get(server, 0) + size
        return definition


def _server_of(identity: str, names: set[str]) -> str | None:
    """The server of ``<server>__<tool>`` among ``names`` (a server's name may hold ``__`` itself)."""
    cut = identity.find("__")
    while cut > 0:
        if identity[:cut] in names:
            return identity[:cut]
        cut = identity.find("__", cut + 1)
    return None


def _size(definition: dict[str, Any]) -> int:
    """What a definition costs in the pins file: its JSON's UTF-8 bytes (``utf8_text.py``)."""
    return json_utf8_size(definition)


def _kept(definition: dict[str, Any]) -> dict[str, Any] | None:
    return definition if _size(definition) <= MAX_KEPT_DEFINITION else None


def _read(path: Path) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    # read from the descriptor the trust rule judged (core/trusted_path.py): pins another account could
    # change would let it approve a changed tool; a FIFO put in its place never holds the read
    try:
        raw, why = read_judged_bytes(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        return {}, {}
    except TooLarge:
        raise PinsUnreadable(f"the tool pins file {path} is larger than {MAX_FILE_BYTES:,} bytes") from None
    except OSError as e:
        raise PinsUnreadable(f"the tool pins file {path} cannot be read: {e.strerror or e}") from None
    if why is not None and not opted_out():
        raise PinsUnreadable(f"the tool pins file {path} is refused: another account could change it: {why} "
                             f"(or {OPT_OUT}={OPT_OUT_VALUE})")
    try:
        data = json.loads(raw.decode("utf-8"))
    except json.JSONDecodeError as e:
        raise PinsUnreadable(f"the tool pins file {path}, line {e.lineno}: {e.msg}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise PinsUnreadable(f"the tool pins file {path} cannot be read: {e}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PinsUnreadable(f"the tool pins file {path} is not a pins file of format {FORMAT}")
    pins, changes = data.get("pins"), data.get("held", {})
    if not isinstance(pins, dict) or not isinstance(changes, dict):
        raise PinsUnreadable(f"the tool pins file {path}: 'pins' and 'held' must be objects")
    for where, table, stamp in (("pins", pins, "pinned_at"), ("held", changes, "seen_at")):
        for identity, entry in table.items():
            if not (
                isinstance(entry, dict)
                and isinstance(entry.get("digest"), str) and len(entry["digest"]) == 64
                and type(entry.get(stamp)) in (int, float)
                and (entry.get("definition") is None or isinstance(entry["definition"], dict))
            ):
                raise PinsUnreadable(f"the tool pins file {path}: {where}[{identity[:200]!r}] is malformed")
    return pins, changes


def _write(path: Path, pins: dict[str, dict[str, Any]], changes: dict[str, dict[str, Any]]) -> None:
    data = {"format": FORMAT, "pins": pins, "held": changes}
    fd, tmp = tempfile.mkstemp(prefix=".tool-pins.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)  # mkstemp made it owner-only
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
