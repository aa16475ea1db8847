"""Rulebases: load and validate files into a fresh Prolog module, swap atomically, hot-reload on change.

The version of a rulebase is the sha256 of its files' contents (names and bytes), all 64 hex digits.
A reload that fails keeps the previous rulebase active and records why (``last_error``: the log, the policy
history and ``/healthz``, degraded, say so); a load has ``LOAD_SECONDS`` to finish, so one that does not
end fails like any other and never holds the reloads that follow.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from sentinel_mcp.config_file_trust import OPT_OUT, OPT_OUT_VALUE, opted_out
from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.tls.file_modes import replaceable_by_others
from sentinel_mcp.policy import load_rehearsal
from sentinel_mcp.policy.clause_bounds import clause_problems
from sentinel_mcp.policy.document_places import document_place
from sentinel_mcp.policy.rulebase_digest import content_digest, set_digest
from sentinel_mcp.policy.rulebase_includes import include_plan, included_files
from sentinel_mcp.policy.rulebase_file_text import RulebaseFileUnreadable, rulebase_file_text
from sentinel_mcp.policy.load_rehearsal import RehearsalFailed
from sentinel_mcp.policy.engine import PrologEngine
from sentinel_mcp.core.errors import PolicyError

log = logging.getLogger(__name__)
_counter = itertools.count(1)
# a whole load: the rehearsal (load_rehearsal.REHEARSAL_SECONDS, again per file to name the one that fails)
# and the engine's own (bounded by load_limit.LOAD_INFERENCE_LIMIT)
LOAD_SECONDS = 300.0


class Problem(BaseModel):
    severity: str  # "error" | "warning"
    file: str
    line: int
    message: str
    tool: str | None = None  # the tool (or pattern) a problem is about, for telling only those who reach it
    column: int | None = None  # where in the line, as its message says it (a syntax error, a character)
    # the kind of finding, a fixed identifier (checker.py): what a program decides on, never the message's
    # words (a tool's or an argument's name is in them); None where nothing decides on the kind
    code: str | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.severity}: {self.message}"


class RulebaseError(PolicyError):
    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems if p.severity == "error") or "invalid rulebase")


class RulebaseMoved(RulebaseError):
    """A file changed while it loaded: the engine may hold another text than the one the version names."""


# loads a holder starts again when a file changed under one (an editor saving in steps), before it says so
MOVED_TRIES = 3


class BindingInfo(BaseModel):
    predicate: str
    arity: int
    tool: str
    ttl: float | None
    fresh_for_writes: bool = False  # read again before each write is decided (write_rereads.py)


class GuardReads(BaseModel):
    """What a guard's decision may read that writes of other conversations change (guard_reads.pl)."""

    tool: str  # the guard's tool: a name or a pattern
    reads: list[str]  # the tools of the bindings it may read
    kept: bool  # whether it may read a fact kept for every conversation


class AskableInfo(BaseModel):
    predicate: str
    arity: int
    question: str
    # "yes_no" | "text" | "number" | {"choice": [...], "labels": [...]} | {"choice_of": []}
    type: str | dict[str, Any]
    from_: list[str] = Field(alias="from")
    ttl: float | None = None  # an answer's time to live in seconds; None: the session's (no expiry)
    file: str = ""  # where it is declared
    line: int = 0


class DocumentInfo(BaseModel):
    name: str
    path: str  # as declared
    file: str  # the rulebase file that declared it (relative paths start there)
    line: int = 0  # where it declared it


class RulebaseInfo(BaseModel):
    guards: list[str] = Field(default_factory=list)
    bindings: list[BindingInfo] = Field(default_factory=list)
    askables: list[AskableInfo] = Field(default_factory=list)
    contexts: list[str] = Field(default_factory=list)
    checked_contexts: list[str] = Field(default_factory=list)  # declared with a check (context/3)
    seeds: list[str] = Field(default_factory=list)
    options: list[str] = Field(default_factory=list)
    read_only: list[str] = Field(default_factory=list)
    symbolic_exempt: dict[str, list[str]] = Field(default_factory=dict)
    effects: list[str] = Field(default_factory=list)
    kept_effects: list[str] = Field(default_factory=list)  # the tools whose effects establish a kept fact
    documents: list[DocumentInfo] = Field(default_factory=list)
    guard_reads: list[GuardReads] = Field(default_factory=list)
    # tool -> guards_tool(tool): asked on every call (a scan of every guard pattern); a loaded rulebase's
    # info is not changed afterwards (a new version gets a new RulebaseInfo). Bounded: any name may be asked.
    _governs: dict[str, bool] = PrivateAttr(default_factory=dict)
    # what ``PolicyGuard.observe`` asks after every call, as sets made on first use (the same promise: a
    # loaded rulebase's info is not changed): the tools bindings read, the tools effects name, any pattern
    _observed: tuple[frozenset[str], frozenset[str], bool] | None = PrivateAttr(default=None)
    # tool identity -> the turns its writes take (policy/write_turns.py); bounded as ``_governs``
    _turn_keys: dict[str, tuple[str, ...]] = PrivateAttr(default_factory=dict)

    @classmethod
    def from_engine(cls, raw: dict[str, Any]) -> "RulebaseInfo":
        exempt: dict[str, list[str]] = {}
        for e in raw.get("symbolic_exempt", []):
            exempt.setdefault(e["tool"], []).extend(str(a) for a in e["args"])
        return cls(
            guards=sorted({g["tool"] for g in raw["guards"]}),
            bindings=[BindingInfo(**b) for b in raw["bindings"]],
            askables=[AskableInfo(**a) for a in raw["askables"]],
            contexts=raw["contexts"],
            checked_contexts=raw.get("checked_contexts", []),
            seeds=raw["seeds"],
            options=raw["options"],
            read_only=raw["read_only"],
            symbolic_exempt=exempt,
            effects=sorted(set(raw["effects"])),
            kept_effects=raw.get("kept_effects", []),
            documents=[DocumentInfo(**d) for d in raw.get("documents", [])],
            guard_reads=[GuardReads(**g) for g in raw.get("guard_reads", [])],
        )

    def guards_tool(self, tool: str) -> bool:
        # the private dict itself: ``self._governs`` goes through pydantic's __getattr__ (~2 us a call)
        governs: dict[str, bool] = self.__pydantic_private__["_governs"]  # type: ignore[index]
        known = governs.get(tool)
        if known is None:
            known = _named_by(self.guards, tool)
            if len(governs) >= 4096:
                governs.clear()
            governs[tool] = known
        return known

    def _observed_sets(self) -> tuple[frozenset[str], frozenset[str], bool]:
        private: dict[str, Any] = self.__pydantic_private__  # type: ignore[assignment]
        sets: tuple[frozenset[str], frozenset[str], bool] | None = private["_observed"]
        if sets is None:
            sets = private["_observed"] = (
                frozenset(b.tool for b in self.bindings),
                frozenset(self.effects),
                any(e.endswith("*") for e in self.effects),
            )
        return sets

    def binds(self, tool: str) -> bool:
        """Whether a binding reads ``tool`` (its results become facts)."""
        return tool in self._observed_sets()[0]

    def has_effect(self, tool: str) -> bool:
        """Whether an effect names ``tool``; an effect naming tools by a pattern counts for every tool."""
        _, effects, by_pattern = self._observed_sets()
        return by_pattern or tool in effects

    def names_effect(self, tool: str) -> bool:
        """Whether an effect names ``tool``, by its name or by a pattern that matches it (every call asks: the
        patterns are scanned only when the rulebase has one)."""
        _, effects, by_pattern = self._observed_sets()
        return tool in effects or (by_pattern and _named_by(self.effects, tool))

    def reads_of_guards(self, tool: str) -> list[GuardReads]:
        """What the guards of ``tool`` (by name or pattern) may read (guard_reads.pl)."""
        return [g for g in self.guard_reads if _named_by([g.tool], tool)]

    def turn_keys_known(self) -> dict[str, tuple[str, ...]]:
        """The turns each tool's writes take, as made (policy/write_turns.py); the private dict itself."""
        return self.__pydantic_private__["_turn_keys"]  # type: ignore[index,no-any-return]

    def keeps(self, tool: str) -> bool:
        """Whether an effect of ``tool`` (by name or pattern) establishes a kept fact (kept_effects.py)."""
        return bool(self.kept_effects) and _named_by(self.kept_effects, tool)

    def option(self, name: str) -> bool:
        return name in self.options

    def inference_limit(self, default: int) -> int:
        for o in self.options:
            if o.startswith("inference_limit(") and o.endswith(")"):
                try:
                    return int(o[len("inference_limit(") : -1])
                except ValueError:
                    pass
        return default


class Rulebase(BaseModel):
    version: str
    module: str
    files: list[str]
    included: list[str] = Field(default_factory=list)  # the files those include (rulebase_includes.py)
    info: RulebaseInfo
    warnings: list[Problem] = Field(default_factory=list)

    def text(self) -> str:
        parts = [f"% rulebase version {self.version}"]
        for f in self.files + self.included:
            try:
                # the file as it is now: since it loaded it may hold bytes that are not UTF-8, or be a FIFO or
                # a file of gigabytes (read by the loader's bound: rulebase_file_text.py)
                parts.append(f"% ---- {f}\n{rulebase_file_text(f)}")
            except RulebaseFileUnreadable as e:
                parts.append(f"% ---- {e}")
        return "\n".join(parts)


def content_version(files: list[Path]) -> str:
    """A rulebase's version: the whole digest of its text. A state, an answer and a replica's copy are taken
    for the rulebase in force by it, and a policy's author writes both texts of a pair cut digests share."""
    return set_digest(files)


Watched = tuple[tuple[Path, float | None], ...]


def _mtimes(files: list[Path]) -> Watched:
    """Each file the set reads (an included one too: its change is the set's) and its modification time."""
    out: list[tuple[Path, float | None]] = []
    for f in included_files(files):
        try:
            out.append((f, f.stat().st_mtime_ns))
        except OSError:
            out.append((f, None))
    return tuple(out)


async def load_rulebase(engine: PrologEngine, files: list[Path], version: str | None = None, *,
                        own_documents: bool = True) -> Rulebase:
    """Load and validate files into a new module; raise RulebaseError (module unloaded) on errors.
    ``version``: the name it was published under (a replica adopting another's version keeps that name).
    ``own_documents``: its policy documents must lie in their rulebase files' own directories
    (document_places.py); False for a client's candidate, which may name only the documents in force
    (untrusted_rules.py), a check of its own that tells nothing of which files exist."""
    missing = [
        Problem(severity="error", file=str(f), line=0, message=_missing(f)) for f in files if not f.is_file()
    ]
    if missing:
        raise RulebaseError(missing)
    # and every file they include (rulebase_includes.py), each through the checks below; a refused include
    # is an error at its line
    plan = await asyncio.to_thread(include_plan, files)
    if plan.problems:
        raise RulebaseError([Problem(severity="error", file=f, line=n, message=m)
                             for f, n, m in plan.problems])
    configured, files = files, plan.files
    # the operator's files, at start and at every reload: none another account could change (as the config
    # loader checks them, config_file_trust.py; a client's candidate is judged on its text instead)
    shared = _shared_files(files) if own_documents else []
    if shared:
        raise RulebaseError(shared)
    # before Prolog reads it: a clause nested deep enough crashes SWI-Prolog's reader (clause_bounds.py)
    bounds = await asyncio.to_thread(
        lambda: [Problem(severity="error", file=str(f), line=line, message=message)
                 for f in files for line, message in clause_problems(f)]
    )
    if bounds:
        raise RulebaseError(bounds)
    digest = await asyncio.to_thread(content_digest, files)
    # and a child SWI-Prolog loads them first: what would crash or never end costs it, not the engine
    rehearsal = await _rehearsal_problems(configured, digest)
    if any(p.severity == "error" for p in rehearsal):
        raise RulebaseError(rehearsal)
    version = version or digest  # whole (``content_version``)
    module = f"rb_{version}_{next(_counter)}"
    log.debug("start-up stage: engine load started (%s)", module)
    raw = await engine.load(module, [str(f) for f in configured])
    log.debug("start-up stage: engine load ended (%s)", module)
    # the engine read the files again: the version names the text it loaded only if they did not change since
    if await asyncio.to_thread(content_digest, files) != digest:
        await engine.unload(module)
        raise RulebaseMoved([Problem(severity="error", file=str(f), line=0,
                                     message="changed while it loaded (loaded again at the next check)")
                             for f in files])
    errors = [Problem(**p) for p in raw["errors"]]
    warnings = [Problem(**p) for p in raw["warnings"]]
    if errors:
        await engine.unload(module)
        raise RulebaseError(errors + warnings)
    try:
        info = RulebaseInfo.from_engine(await engine.info(module))
    except ValidationError as e:  # a declaration the loader's checks let through: refused, never half-read
        await engine.unload(module)
        first = e.errors()[0] if e.errors() else {"loc": (), "msg": str(e)}
        where = ".".join(str(x) for x in first["loc"])
        raise RulebaseError([
            Problem(severity="error", file=str(f), line=0,
                    message=f"a declaration Sentinel cannot read ({where}: {first['msg']})")
            for f in files
        ]) from None
    placed = (_misplaced_documents(info) if own_documents else []) + _unaskable_choices(info)
    if placed:
        await engine.unload(module)
        raise RulebaseError(placed + warnings)
    return Rulebase(version=version, module=module, files=[str(f) for f in configured],
                    included=[str(f) for f in files[len(configured):]], info=info, warnings=warnings)


def _shared_files(files: list[Path]) -> list[Problem]:
    out = []
    for f in files:
        why = replaceable_by_others(f)
        if why is None:
            continue
        if opted_out():  # the deployer's word (a container's bind mount): kept, and said at each load
            log.warning("rulebase %s is in use although another account could change it (%s=%s): %s",
                        f, OPT_OUT, OPT_OUT_VALUE, why)
            continue
        out.append(Problem(severity="error", file=str(f), line=0,
                           message=f"another account could change it, and with it the policy: {why}"))
    return out


def _misplaced_documents(info: RulebaseInfo) -> list[Problem]:
    out = []
    for d in info.documents:
        _, why = document_place(d.path, d.file)
        if why is not None:
            out.append(Problem(severity="error", file=d.file, line=d.line,
                               message=f"policy_document({d.name}, ...): {why}"))
    return out


def _unaskable_choices(info: RulebaseInfo) -> list[Problem]:
    """A ``choice([...])`` the question could not be built of (``questions.choice_problem``: choices read
    alike through look-alike letters, which the loader's own check, by case and spacing, does not see):
    refused at load, with its line, rather than when it is asked."""
    listed = [a for a in info.askables if isinstance(a.type, dict) and "choice" in a.type]
    if not listed:
        return []
    # (imported here: the question builder reads the MCP types, half a check child's start, which a rulebase
    # without a choice list never needs: tests/policy/test_check_process.py)
    from sentinel_mcp.policy.questions import choice_problem

    out = []
    for a in listed:
        why = choice_problem(a.type)
        if why is not None:
            out.append(Problem(severity="error", file=a.file, line=a.line, message=why))
    return out


def _missing(f: Path) -> str:
    if f.exists():
        return "not a regular file"  # a FIFO or a device would block the reader, a directory cannot be read
    if (RULEBASES_DIR / f.name).is_file() and f.parent != RULEBASES_DIR:
        return f"file not found (Sentinel's own {f.name} is named shipped:rulebases/{f.name} in a config)"
    return "file not found"


async def _rehearsal_problems(files: list[Path], digest: str) -> list[Problem]:
    try:
        found = await load_rehearsal.rehearse(files, key=digest)
    except RehearsalFailed as failed:
        culprits = []  # the files that fail alone (a load that fails only together names them all)
        if len(files) > 1:
            for f in files:
                try:
                    await load_rehearsal.rehearse([f])
                except RehearsalFailed as alone:
                    culprits.append((f, alone.reason))
        named = culprits or [(f, failed.reason) for f in files]
        return [Problem(severity="error", file=str(f), line=0, message=why) for f, why in named]
    return [Problem(**p) for p in found["errors"] + found["warnings"]]


class RulebaseHolder:
    """The active rulebase; ``reload()`` swaps it only when the new files load cleanly."""

    def __init__(self, engine: PrologEngine, files: list[Path], poll_interval: float = 1.0) -> None:
        self.engine = engine
        self.files = list(files)
        self.poll_interval = poll_interval
        self.load_seconds = LOAD_SECONDS
        self.own_documents = True  # load_rulebase's: False for a client's candidate (PolicyGuard sets it)
        self.active: Rulebase | None = None
        self._mtimes: Watched = ()
        self.last_error: str | None = None
        self._retired: Rulebase | None = None
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        # told of every load, done or failed: (version, ok, cause, error); the policy history listens
        self.observers: list[Callable[[str, bool, str, str | None], Awaitable[None]]] = []
        # given each rulebase that loaded, before it is in force (the walk of the listed tools' schema
        # secrets: app/listed_secret_flows.py); what one raises is logged, the rulebase comes in force still
        self.preparers: list[Callable[[Rulebase], Awaitable[None]]] = []
        self.last_load: tuple[float, str, bool] | None = None  # (when, cause, ok) of the last attempt
        # the files of the last load attempted: the configured ones, or a version another replica published
        self.attempted: list[Path] = list(files)

    @property
    def current(self) -> Rulebase:
        if self.active is None:
            raise RuntimeError("no rulebase loaded")
        return self.active

    @property
    def loaded(self) -> bool:
        return self.active is not None

    async def reload(self, cause: str = "start-up") -> bool:
        """Load the files again; True if a new rulebase is active."""
        async with self._lock:
            self._mtimes = await asyncio.to_thread(_mtimes, self.files)
            return await self._swap(self.files, cause, None)

    async def adopt(self, files: list[Path], version: str, cause: str) -> bool:
        """Load other files (a version published by another replica) under their published name; the
        configured
        files stay watched. Raises RulebaseError, keeping the active rulebase, when they do not load here."""
        async with self._lock:
            try:
                rb = await self._load(files, version)
            except RulebaseError as e:
                self.attempted = list(files)
                await self._tell(version, False, cause, str(e))
                raise
            self.attempted = list(files)
            await self._activate(rb, cause)
            return True

    async def _swap(self, files: list[Path], cause: str, version: str | None) -> bool:
        self.attempted = list(files)
        try:
            try:
                rb = await self._load(files, version)
            except (RulebaseError, asyncio.CancelledError):
                raise
            except Exception as e:  # noqa: BLE001 - a fault of the loader's own: the change did not load, said
                log.exception("rulebase load")
                raise RulebaseError([Problem(severity="error", file=str(f), line=0,
                                             message=f"could not be loaded ({type(e).__name__}: {e})")
                                     for f in files]) from e
        except RulebaseError as e:
            self.last_error = str(e)
            await self._tell(version or content_version(files), False, cause, str(e))
            if self.active is not None:
                log.error("rulebase reload failed, keeping version %s: %s", self.active.version, e)
                return False
            raise
        await self._activate(rb, cause)
        return True

    async def _load(self, files: list[Path], version: str | None) -> Rulebase:
        """``load_rulebase`` within ``load_seconds``: past it, an error naming the files (the lock is let go;
        the engine's part ends by its inference limit)."""
        try:
            for tries_left in range(MOVED_TRIES - 1, -1, -1):
                try:
                    loading = load_rulebase(self.engine, files, version, own_documents=self.own_documents)
                    return await asyncio.wait_for(loading, self.load_seconds)
                except RulebaseMoved:
                    if not tries_left:
                        raise
            raise AssertionError("unreachable")
        except asyncio.TimeoutError:
            why = f"loading did not finish within {self.load_seconds:g} s"
            raise RulebaseError([Problem(severity="error", file=str(f), line=0, message=why) for f in files]
                                ) from None

    async def _activate(self, rb: Rulebase, cause: str) -> None:
        for prepare in list(self.preparers):
            try:
                await prepare(rb)
            except Exception:  # noqa: BLE001 - a preparer's own fault: what it checks is checked again later
                log.exception("rulebase preparer")
        old, self.active = self.active, rb
        self.last_error = None
        await self._tell(rb.version, True, cause, None)
        for w in rb.warnings:
            log.warning("%s", w)
        if old is not None:
            log.info("rulebase reloaded: %s -> %s", old.version, rb.version)
            # a decision in flight may still use the previous module: unload it one reload later
            if self._retired is not None:
                await self.engine.unload(self._retired.module)
            self._retired = old

    async def _tell(self, version: str, ok: bool, cause: str, error: str | None) -> None:
        self.last_load = (time.time(), cause, ok)
        for observe in list(self.observers):
            try:
                await observe(version, ok, cause, error)
            except Exception:  # noqa: BLE001 - a listener (the history) never decides whether a load stands
                log.exception("rulebase load observer")

    async def check_for_changes(self) -> bool:
        now = await asyncio.to_thread(_mtimes, self.files)
        if now == self._mtimes:
            return False
        changed = sorted({f.name for f, _ in set(now) ^ set(self._mtimes)}) or [f.name for f in self.files]
        return await self.reload(cause="hot reload: changed " + ", ".join(changed))

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.poll_interval)
            try:
                await self.check_for_changes()
            except Exception:  # never let the watcher die
                log.exception("rulebase watcher")

    def start_watching(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._watch(), name="rulebase-watch")

    async def unload_all(self) -> None:
        """Free the engine modules of the active and retired rulebases (at shutdown)."""
        await self.stop_watching()
        for rb in (self._retired, self.active):
            if rb is not None:
                await self.engine.unload(rb.module)
        self._retired = self.active = None

    async def stop_watching(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None


def _named_by(names: list[str], tool: str) -> bool:
    """Whether one of ``names`` is ``tool`` or a pattern (``prefix*``) it matches."""
    return any(n == tool or (n.endswith("*") and tool.startswith(n[:-1])) for n in names)
