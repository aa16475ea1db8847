"""Rulebase versions shared by the replicas on one PostgreSQL store.

A replica whose rulebase files change (hot reload) publishes the new version as a row of
``rulebase_versions``:
the texts of its files and of the policy documents they cite. Every replica follows the newest row (one
indexed
read every ``poll_interval``): it writes the texts into its own directory, loads them under the published
version name and swaps only when they load cleanly. A version that does not load here (an error, a file this
replica lacks) leaves the active rulebase in force, and ``problem`` says so for ``/healthz``. A replica that
starts takes the cluster's newest version; the first one publishes its own. Decisions carry the version name
(the audit's ``policy_version``), the same on every replica.

The newest row wins: two replicas publishing at once converge on whichever row was committed last.

A replica that knows it is behind refuses to decide (``behind``): while the newest row it read names another
version than the one in force (it does not load here, or is being loaded), and while it has not read the rows
for longer than ``stale_after`` (a newer version may exist). Checked per decision from what the follower read:
no round trip per call.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from sentinel_mcp.core.decision import Deny
from sentinel_mcp.core.display_text import Marked, compose
from sentinel_mcp.core.errors import PolicyError
from sentinel_mcp.core.outside_file import TooLarge
from sentinel_mcp.policy.policy_documents import document_text
from sentinel_mcp.policy.rulebase_digest import bytes_digest
from sentinel_mcp.policy.rulebase_file_text import RulebaseFileUnreadable, rulebase_file_bytes
from sentinel_mcp.policy.rulebase_includes import include_name
from sentinel_mcp.policy.rulebase import Problem, Rulebase, RulebaseError, RulebaseHolder
from sentinel_mcp.storage import Schema, StorageError
from sentinel_mcp.storage.row_signature import PROCESS_KEY, sign, signed

log = logging.getLogger(__name__)

_SQL = (
    "CREATE TABLE rulebase_versions (id {serial} PRIMARY KEY, version TEXT NOT NULL, replica TEXT NOT NULL, "
    "cause TEXT NOT NULL, body TEXT NOT NULL, at {real} NOT NULL)"
)
# a version is signed by the replica that published it (``storage/row_signature.py``, the cluster's seal key):
# a row someone with write access to the database wrote (an allow-all rulebase) is adopted by no replica
_SIGNED = "ALTER TABLE rulebase_versions ADD COLUMN mac TEXT NOT NULL DEFAULT ''"
SCHEMA = Schema(
    "rulebase_versions",
    {
        "sqlite": [_SQL.format(serial="INTEGER", real="REAL"), _SIGNED],
        "postgres": [_SQL.format(serial="BIGSERIAL", real="DOUBLE PRECISION"), _SIGNED],
    },
)
PURPOSE = "rulebase version"

MAX_BODY = (
    8 << 20
)  # bytes of texts in one version: a rulebase is small; a huge row is refused, not written out
KEEP = 20  # materialized versions kept on disk (the active one is always among the newest)
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$")
_VERSION = re.compile(
    r"^[A-Za-z0-9_]{1,64}$"
)  # it names a Prolog module and a directory: checked, not trusted


@dataclass(frozen=True, slots=True)
class VersionRow:
    id: int
    version: str
    replica: str


def _safe_relative(path: str) -> Path | None:
    """A document path that stays inside the version's directory, or None (it is then looked up as usual)."""
    parts = Path(path).parts
    if not parts or Path(path).is_absolute() or not all(_NAME.fullmatch(p) for p in parts):
        return None
    return Path(*parts)


class RulebaseChanged(PolicyError):
    """A rulebase file changed on disk since its version loaded: what is there now is not that version."""

    prefixed = False


def version_body(rb: Rulebase) -> str:
    """The texts a replica needs to load ``rb``: its files by name, and its documents by their declared path.
    The files are read as they are now: published only when they are the version's own (its name is their
    digest), else ``RulebaseChanged`` (an edit landed since the load: the hot reload that follows publishes
    it), never another text under the version's name."""
    read = [(f, rulebase_file_bytes(f)) for f in rb.files + rb.included]  # the version is of them all
    if bytes_digest(read) != rb.version:
        raise RulebaseChanged(compose(
            Marked("rulebase version "), rb.version[:12],
            Marked(": its files changed on disk since it loaded (not published: the reload that follows "
                   "is)")))
    files: list[dict[str, Any]] = [{"name": Path(f).name, "text": data.decode("utf-8")}
                                   for f, data in read[:len(rb.files)]]
    # an included file by its name below its configured file's directory, as the include gives it
    files += [{"name": _included_name(rb, f), "text": data.decode("utf-8"), "included": True}
              for f, data in read[len(rb.files):]]
    docs = []
    for d in rb.info.documents:
        rel = _safe_relative(d.path)
        source = Path(d.file).parent / d.path
        if rel is not None and source.is_file():
            docs.append({"path": str(rel), "text": document_text(source)})
    return json.dumps({"files": files, "documents": docs})


def _included_name(rb: Rulebase, f: str) -> str:
    for top in rb.files:
        if Path(f).is_relative_to(Path(top).parent):
            return Path(f).relative_to(Path(top).parent).as_posix()
    raise RulebaseChanged(compose(Marked("rulebase version "), rb.version[:12],
                                  Marked(": an included file lies outside its configured files' directory")))


def materialize(body: str, directory: Path) -> list[Path]:
    """Write a published version's texts under ``directory``; the rulebase files in their order. Raises
    RulebaseError for a body that is not a well-formed version (names are checked, never trusted)."""

    def bad(why: str) -> RulebaseError:
        return RulebaseError([Problem(severity="error", file=str(directory), line=0, message=why)])

    if len(body) > MAX_BODY:
        raise bad(f"the published version is larger than {MAX_BODY} bytes")
    try:
        data = json.loads(body)
        files = [(str(f["name"]), str(f["text"])) for f in data["files"] if f.get("included") is not True]
        # included files: written below the directory at the name the include gives (rulebase_includes.py)
        included = [(str(f["name"]), str(f["text"])) for f in data["files"] if f.get("included") is True]
        docs = [(str(d["path"]), str(d["text"])) for d in data.get("documents", [])]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise bad(f"the published version is malformed ({type(e).__name__})") from None
    names = [n for n, _ in files]
    if not files or len(set(names)) != len(names) or not all(_NAME.fullmatch(n) for n in names):
        raise bad("the published version names no files, a file twice, or a file with an unsafe name")
    inames = [n for n, _ in included]
    if len(set(inames + names)) != len(inames + names) or not all(include_name(n) for n in inames):
        raise bad("the published version includes a file twice, or a file with an unsafe name")
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    for path, text in docs:
        rel = _safe_relative(path)
        if rel is not None:
            (directory / rel).parent.mkdir(parents=True, exist_ok=True)
            (directory / rel).write_text(text, encoding="utf-8")
    for name, text in included:
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text, encoding="utf-8")
    out = []
    for name, text in files:
        (directory / name).write_text(text, encoding="utf-8")
        out.append(directory / name)
    return out


class SharedRulebases:
    def __init__(
        self,
        db: Any,
        holder: RulebaseHolder,
        replica: str,
        directory: Path,
        poll_interval: float = 0.5,
        stale_after: float | None = None,
        key: bytes | None = None,
    ) -> None:
        self.key = key if key is not None else PROCESS_KEY  # the cluster's (``SharedStore.key``)
        self.db = db  # the shared store's database (the facts'), ``SCHEMA`` migrated by ``start``
        self.holder = holder
        self.replica = replica
        self.directory = directory  # where published versions are written out to be loaded
        self.poll_interval = poll_interval
        self.seen = 0  # the newest row this replica has acted on
        self.problem: str | None = None  # a published version this replica could not load (for /healthz)
        self._task: asyncio.Task[None] | None = None
        self._migrated = False
        # the bound on deciding without knowing the cluster's newest version: many polls, so a slow read or a
        # busy loop does not refuse calls, yet a follower that cannot read stops decisions within seconds
        self.stale_after = stale_after if stale_after is not None else max(5.0, 10 * poll_interval)
        self.clock: Callable[[], float] = time.monotonic
        self.newest: VersionRow | None = None  # the newest row read (None: none published yet)
        self.checked: float | None = None  # ``clock()`` of the last read that succeeded (None: never)
        self.unread: str | None = None  # why the latest read failed (None: it succeeded)
        self._polling = asyncio.Lock()  # the follower and a forced poll act on a row once

    async def start(self) -> None:
        try:
            async with self._polling:
                await self._migrate()
                latest = await self._latest(0)
                self._read(latest)
                if latest is None:
                    if self.holder.loaded:
                        await self._publish_own("start-up")
                elif not self.holder.loaded or latest.version != self.holder.current.version:
                    await self._adopt(latest)
                else:
                    self.seen = latest.id
        except StorageError as e:  # the store's health refuses calls meanwhile; the follower keeps trying
            self.problem = f"the cluster's rulebase versions could not be read at start-up: {e}"
            log.error("%s", self.problem)
        # first among the observers: told synchronously with the swap, so /healthz never shows a new version
        # beside the old version's problem
        self.holder.observers.insert(0, self._on_load)
        self._task = asyncio.create_task(self._follow(), name="rulebase-follow")

    async def _migrate(self) -> None:
        if not self._migrated:
            await self.db.migrate(SCHEMA)
            self._migrated = True

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def publish(self, rb: Rulebase, cause: str) -> int:
        body = await asyncio.to_thread(version_body, rb)
        rows = (
            await self.db.write(
                "INSERT INTO rulebase_versions (version, replica, cause, body, at, mac) "
                "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (rb.version, self.replica, cause[:200], body, time.time(),
                 sign(self.key, PURPOSE, rb.version, self.replica, body)),
            )
        ).rows
        row = VersionRow(int(rows[0][0]), rb.version, self.replica)
        if self.newest is None or row.id > self.newest.id:
            self.newest = row
        self.seen = max(self.seen, row.id)
        self.problem = None
        log.info("rulebase version %s published to the cluster (row %s)", rb.version, rows[0][0])
        return self.seen

    async def _on_load(self, version: str, ok: bool, cause: str, error: str | None) -> None:
        if ok:  # a version is in force that this replica loaded: no earlier failure stands
            self.problem = None
        # only this replica's own files changing is news for the cluster (an adopted version came from it)
        if ok and cause.startswith("hot reload") and self.holder.loaded:
            try:
                await self._publish_own(cause)
            except StorageError as e:
                self.problem = f"rulebase version {version} is active here but could not be published: {e}"
                log.error("%s", self.problem)

    async def _publish_own(self, cause: str) -> None:
        """Publish the version in force here; one whose files changed since it loaded (unreadable, huge, a
        FIFO, not UTF-8, another text: each names the file) is not, and ``problem`` says so."""
        try:
            await self.publish(self.holder.current, cause)
        except (OSError, RulebaseFileUnreadable, RulebaseChanged, TooLarge, UnicodeDecodeError) as e:
            self.problem = (f"rulebase version {self.holder.current.version} is active here but could not be "
                            f"published: {e}")
            log.error("%s", self.problem)

    async def _latest(self, after: int) -> VersionRow | None:
        rows = await self.db.query(
            "SELECT id, version, replica FROM rulebase_versions WHERE id > ? ORDER BY id DESC LIMIT 1",
            (after,),
        )
        return VersionRow(int(rows[0][0]), str(rows[0][1]), str(rows[0][2])) if rows else None

    def _read(self, latest: VersionRow | None) -> None:
        """A read of the rows succeeded: ``latest`` is the newest row after ``seen`` (None: none newer)."""
        self.checked, self.unread = self.clock(), None
        if latest is not None and (self.newest is None or latest.id > self.newest.id):
            self.newest = latest

    def behind(self) -> str | None:
        """Why this replica may not decide now (it is, or may be, behind the cluster's newest rulebase
        version), or None. Cheap: what the follower last read, no round trip."""
        here = self.holder.current.version if self.holder.loaded else "none"
        if self.checked is None or self.clock() - self.checked > self.stale_after:
            return (
                f"this replica (version {here}) could not read the cluster's rulebase versions for more than "
                f"{self.stale_after:g} s, so a newer version may be in force elsewhere"
            )
        newest = self.newest
        if newest is not None and newest.version != here:
            return (
                f"this replica decides with rulebase version {here}, but the cluster's newest is version "
                f"{newest.version[:100]} (published by {newest.replica[:100]}), which it has not loaded"
            )
        return None

    @property
    def cluster_problem(self) -> str | None:
        """For ``/healthz``: a version that did not load here, why this replica refuses calls, or why it
        will refuse them once ``stale_after`` passes: "ok" only once the follower read since an outage (its
        last read before it may be nearly ``stale_after`` old, and the next call refused)."""
        why = self.problem or self.behind()
        if why is None and self.unread is not None:
            why = (
                f"this replica could not read the cluster's rulebase versions ({self.unread}); it refuses "
                f"calls if that lasts {self.stale_after:g} s"
            )
        return why

    def refusal(self) -> Deny | None:
        """The decision of every call while ``behind``: refused, fail closed."""
        why = self.behind()
        if why is None:
            return None
        return Deny(
            reason=f"Sentinel refuses this call: {why}",
            unmet=["rulebase_behind_cluster"],
            how_to_unblock=[
                "try again shortly (another replica may serve it); the operator sees why in this replica's "
                "/healthz"
            ],
        )

    async def poll_once(self) -> None:
        """Read the newest row once and act on it (what the follower does every ``poll_interval``)."""
        async with self._polling:
            try:
                await self._migrate()
                latest = await self._latest(self.seen)
            except StorageError as e:
                self.unread = str(e)[:300]
                raise
            self._read(latest)
            if latest is None:
                if self.seen == 0 and self.holder.loaded:  # nothing published yet (or not readable at start)
                    await self._publish_own("start-up")
                return
            if self.holder.loaded and latest.version == self.holder.current.version:
                self.seen, self.problem = latest.id, None
            else:
                await self._adopt(latest)

    async def _follow(self) -> None:
        while True:
            await asyncio.sleep(self.poll_interval)
            try:
                await self.poll_once()
            except StorageError as e:  # the store's health says so; calls refused once ``stale_after`` passes
                log.warning("cannot read the cluster's rulebase versions: %s", e)
            except Exception:  # noqa: BLE001 - never let the follower die
                log.exception("rulebase follower")

    async def _adopt(self, row: VersionRow) -> None:
        self.seen = row.id  # acted on once: a version that does not load is not retried every poll
        cause = f"cluster: version {row.version} published by {row.replica} (row {row.id})"
        keeping = self.holder.current.version if self.holder.loaded else "none"
        try:
            if not _VERSION.fullmatch(row.version):
                raise RulebaseError(
                    [
                        Problem(
                            severity="error",
                            file="rulebase_versions",
                            line=0,
                            message=f"row {row.id} has a malformed version name",
                        )
                    ]
                )
            found = await self.db.query("SELECT body, mac FROM rulebase_versions WHERE id = ?", (row.id,))
            if not found or not signed(self.key, found[0][1], PURPOSE, row.version, row.replica, found[0][0]):
                unsigned = f"row {row.id} is not signed by a replica of this cluster"
                raise RulebaseError(
                    [Problem(severity="error", file="rulebase_versions", line=0, message=unsigned)]
                )
            directory = self.directory / f"{row.id}-{row.version}"
            files = await asyncio.to_thread(materialize, str(found[0][0]), directory)
            await self.holder.adopt(files, row.version, cause)
        except RulebaseError as e:
            self.problem = (
                f"the cluster's rulebase version {row.version} (published by {row.replica}) does not "
                f"load on this replica, which keeps version {keeping}: {e}"
            )
            log.error("%s", self.problem)
            return
        except OSError as e:
            self.problem = (
                f"the cluster's rulebase version {row.version} could not be written out here "
                f"({e.strerror or e}); this replica keeps version {keeping}"
            )
            log.error("%s", self.problem)
            return
        self.problem = None
        await asyncio.to_thread(self._prune)

    def _prune(self) -> None:
        try:
            kept = sorted(
                (p for p in self.directory.iterdir() if p.is_dir()),
                key=lambda p: int(p.name.split("-", 1)[0]) if p.name.split("-", 1)[0].isdigit() else 0,
            )
        except OSError:
            return
        for old in kept[:-KEEP]:
            shutil.rmtree(old, ignore_errors=True)
