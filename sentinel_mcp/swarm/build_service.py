"""Runs builds for the MCP server and the CLI: validation, the lock, background tasks, cancellation, status.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from sentinel_mcp.swarm import build_lease
from sentinel_mcp.swarm.build_credentials import BuildCredentials
from sentinel_mcp.swarm.build_progress import missing_rows
from sentinel_mcp.swarm.backends.base import ModelBackend
from sentinel_mcp.swarm.build_turns import BuildTurns
from sentinel_mcp.swarm.limits import Limits
from sentinel_mcp.swarm.logging_setup import setup_swarm_logging
from sentinel_mcp.swarm.orchestrator import Orchestrator, ProgressEvent, ProgressSink
from sentinel_mcp.swarm.retention import TASK_DIR as TASK_ID
from sentinel_mcp.swarm.retention import SweepReport, sweep, trim_kept
from sentinel_mcp.swarm.settings import SwarmSettings
from sentinel_mcp.swarm.spec import parse_spec
from sentinel_mcp.swarm.state import OWNER, TERMINAL_STATES, SwarmStore
from sentinel_mcp.swarm.task_lock import BuildBusyError, BuildQuotaError, TaskLock
from sentinel_mcp.swarm.toolchain import Toolchain
from sentinel_mcp.swarm.workspace import MAX_LISTED_FILES, Workspace
from sentinel_mcp.core.errors import SwarmError

log = logging.getLogger("sentinel.swarm")
BackendFactory = Callable[[], Awaitable[ModelBackend]]
LISTENER_SECONDS = 10.0  # a caller has this long to take one progress report of its build
BACKEND_CLOSE_SECONDS = 10.0  # a build's model backend has this long to close once the build has ended


class UnknownTaskError(SwarmError, KeyError):
    def __str__(self) -> str:
        # only a well-formed id is named back: any other text is the caller's, of any length and script
        tid = self.args[0] if self.args else ""
        if isinstance(tid, str) and TASK_ID.fullmatch(tid):
            return f"no such task: {tid}"
        return "no such task: not a build id (t<yyyymmdd>-<hhmmss>-<6 hex digits>)"


def new_task_id() -> str:
    return time.strftime("t%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


async def end_orphans(store: SwarmStore, lock: TaskLock) -> list[str]:
    """End (FAILED, state kept) the tasks a process that is gone left mid-run (killed, -9 included), returning
    their ids. Done holding the build slot, so no process is starting a build meanwhile; while a live process
    holds it, the unfinished tasks are its own, running, and nothing is done. One store file (not
    replicas)."""
    if not await store.unfinished():  # the usual case: the slot is left alone (no build is refused for it)
        return []
    try:
        lock.acquire("")
    except BuildBusyError:
        return []
    try:
        return await store.fail_unfinished("interrupted: the process running it stopped")
    finally:
        lock.release()


class BuildService:
    """Layout under ``root`` (the built-in's data dir, ``<data dir>/swarm``): swarm.db, swarm.lock, logs/,
    <task_id>/."""

    def __init__(
        self,
        root: Path,
        settings: SwarmSettings,
        *,
        store: str | None = None,
        replica: str | None = None,
        key: bytes | None = None,
        lease_seconds: float = build_lease.LEASE_SECONDS,
        renew_every: float = build_lease.RENEW_EVERY,
        ends_own_old: bool = True,
    ) -> None:
        """``store``: the ``postgresql://`` URL replicas share (builds leased, ``build_lease.py``);
        ``replica``:
        this replica's name; ``key``: what the shared rows are signed with (``SharedStore.key("swarm
        build")``). Without them the swarm's own SQLite file (one process: the lock file decides).
        ``ends_own_old``: False for a command run beside a replica with its config (``sentinel-mcp swarm``),
        which shares the replica's name but is not its restart: that replica's running builds are its own."""
        self.root = Path(root)
        self.settings = settings
        self.store = SwarmStore(store if store else self.root / "swarm.db", key=key)
        self.replica = replica or "replica"
        # only a replica that knows its name (not a command beside it) ends "its own" old builds at start
        self._named = bool(replica) and ends_own_old
        self.holder = build_lease.new_holder(self.replica)
        self.lease_seconds, self.renew_every = lease_seconds, renew_every
        self._leases: asyncio.Task[None] | None = None
        self.lock = TaskLock(self.root / "swarm.lock")
        self._running: dict[str, asyncio.Task[str]] = {}
        self._entered: set[str] = set()  # builds whose runner has started (its own ``finally`` winds it down)
        self._settling: dict[str, asyncio.Future[None]] = {}  # runners cancelled before they started
        self._listeners: dict[str, list[ProgressSink]] = {}
        self._last_event: dict[str, tuple[float, ProgressEvent]] = {}
        self._started = False
        self._sweeper: asyncio.Task[None] | None = None
        self.toolchain = Toolchain(settings.verify)
        self.turns = BuildTurns()  # who was refused for another principal's build, and has the next turn

    async def start(self, *, sweep: bool = True) -> None:
        """Open the store; ``sweep``: run the retention sweep now and every ``retention.sweep_hours``."""
        if self._started:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        setup_swarm_logging(
            self.root / "logs",
            self.settings.log_retention_days,
            debug_retention_days=self.settings.retention.debug_log_days if self.settings.debug_log else None,
        )
        await self.store.open()
        if self.store.shared:  # several replicas: builds whose runner is gone end by their lapsed lease
            for tid in (
                await build_lease.end_own_old(self.store.db, self.replica, self.holder, key=self.store.key)
                if self._named else []
            ):
                log.warning("build %s: this replica restarted while it ran; ended FAILED (not resumed)", tid)
            await self._end_lapsed()
            self._leases = asyncio.create_task(self._keep_leases(), name="swarm-leases")
        else:
            await self._end_orphans()
        self._started = True
        if sweep:
            self._sweeper = asyncio.create_task(self._sweep_periodically(), name="swarm-retention")

    async def _end_orphans_held(self) -> None:
        """End what a dead process left unfinished, this process holding the slot (so none of it runs)."""
        for tid in await self.store.fail_unfinished("interrupted: the process running it stopped"):
            log.warning("task %s was left unfinished; marked FAILED", tid)

    async def _end_orphans(self) -> None:
        for tid in await end_orphans(self.store, self.lock):
            log.warning("task %s was left unfinished; marked FAILED", tid)

    async def close(self) -> None:
        if self._leases is not None:
            self._leases.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._leases
            self._leases = None
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        for tid in list(self._running):
            await self.cancel(tid)
        await self.store.close()
        self._started = False

    async def gc(self, *, dry_run: bool = False, now: float | None = None) -> SweepReport:
        """Remove what retention allows (failed workspaces, old rotated logs); see ``retention``."""
        report = await sweep(
            self.root, self.store, self.settings, now=now, running=set(self._running), dry_run=dry_run
        )
        if report.workspaces or report.trimmed or report.logs:
            log.info(
                "retention sweep%s: %d failed workspaces, %d kept past their caller's caps, %d log files",
                " (dry run)" if dry_run else "",
                len(report.workspaces),
                len(report.trimmed),
                len(report.logs),
            )
        if report.unsigned_ends:  # kept, never swept for an end no replica signed: said at every sweep
            log.warning("retention sweep: %s", report.skipped[-1])
        return report

    async def _sweep_periodically(self) -> None:
        while True:
            try:
                await self.gc()
            except Exception:  # noqa: BLE001 - a failed sweep is retried at the next one, never fatal
                log.exception("retention sweep failed")
            await asyncio.sleep(self.settings.retention.sweep_hours * 3600)

    def workspace_of(self, task_id: str) -> Workspace:
        if not TASK_ID.fullmatch(task_id):
            raise UnknownTaskError(task_id)
        return Workspace(self.root / task_id)

    async def submit(
        self,
        spec_data: Any,
        backend_factory: BackendFactory,
        *,
        session: str = "",
        caps: dict[str, Any] | None = None,
        listener: ProgressSink | None = None,
        principal: str = OWNER,
        credentials: BuildCredentials | None = None,
    ) -> str:
        """Validate, take the lock, record the task and start it in the background; returns its id.

        Raises ``SpecError`` (what is wrong with the spec), ``ValueError`` (a cap above the configured
        one), ``BuildBusyError`` (another build runs), ``BuildQuotaError`` (the caller's builds within the
        hour) or ``ModelError`` (the backend cannot start). ``credentials``: the starting request's, asked
        before each step and model call (``build_credentials.py``).
        """
        spec = parse_spec(spec_data)
        limits = self.settings.limits.lowered(**(caps or {}))
        await self._within_quota(principal)
        own = await self.store.unfinished_of(principal) if self.store.shared else None
        if own is not None and self._lapsed(own):  # its replica died: end it now, not at the next sweep
            await self._end_lapsed()
            own = await self.store.unfinished_of(principal)
        if own is not None:
            raise self._own_busy(own)  # before its model is started; the claim below decides races
        await self.turns.check(self.store, principal, self.settings.fair_turn_seconds)
        backend = await backend_factory()
        task_id = new_task_id()
        try:
            self.lock.acquire(task_id)
        except BuildBusyError as busy:
            await backend.aclose()
            refused = await self._busy_for(principal, busy)
            if refused is not busy:  # another principal's build: this one has a turn once it is free
                self.turns.waits(principal, await self.store.now())
            raise refused from None
        except BaseException:
            await backend.aclose()
            raise
        try:
            workspace = self.workspace_of(task_id)
            if not self.store.shared:  # holding the one process's slot: a build left unfinished is an orphan
                await self._end_orphans_held()
            created = await self.store.create_task(
                task_id,
                spec.model_dump(),
                workspace.root,
                session=session,
                backend=backend.name,
                principal=principal,
                caps=self._caps_in_force(limits),
                lease=(self.replica, self.holder, self.lease_seconds) if self.store.shared else None,
                per_hour=self.settings.max_builds_per_hour,
            )
            if not created:  # another replica started one of this principal's builds since the check above
                await self._within_quota(principal)
                raise self._own_busy(await self.store.unfinished_of(principal))
            workspace.create()
            self.turns.taken(principal)
        except BaseException:
            self.lock.release()
            await backend.aclose()
            raise
        self._listeners[task_id] = [listener] if listener else []
        orch = Orchestrator(
            task_id=task_id,
            spec=spec,
            store=self.store,
            backend=backend,
            workspace=workspace,
            limits=limits,
            breakers=self.settings.breakers,
            progress=self._fan_out,
            toolchain=self.toolchain,
            coder_max_tokens=self.settings.coder_max_tokens,
            credentials=credentials,
        )
        runner = asyncio.create_task(self._run(orch, backend), name=f"swarm-{task_id}")
        self._running[task_id] = runner
        runner.add_done_callback(lambda t: self._if_never_started(t, orch, backend))
        log.info("task %s started (backend %s, session %s)", task_id, backend.name, session or "-")
        return task_id

    def _caps_in_force(self, limits: Limits) -> dict[str, Any]:
        """What binds this build, as its row keeps it: its limits (the call's, within policy and the
        configuration), the breakers and the caller's hourly quota."""
        return {
            "limits": limits.model_dump(),
            "breakers": self.settings.breakers.model_dump(),
            "max_builds_per_hour": self.settings.max_builds_per_hour,
            "coder_max_tokens": self.settings.coder_max_tokens,
        }

    async def _within_quota(self, principal: str) -> None:
        """Refuse a build past the caller's ``max_builds_per_hour`` (counted from the store, so a restart or
        another replica does not reset it)."""
        cap, now = self.settings.max_builds_per_hour, await self.store.now()
        started = await self.store.started_since(principal, now - 3600)
        if len(started) >= cap:
            wait = max(1, int(started[-cap] + 3600 - now))
            raise BuildQuotaError(
                f"you have started {len(started)} builds within the hour, the most one caller may "
                f"({cap}); nothing was started: ask again in {wait} s"
            )

    @staticmethod
    def _own_busy(task: dict[str, Any] | None) -> BuildBusyError:
        """The caller's own unfinished build (on any replica) holds its one build."""
        where = f" on replica {task['replica']}" if task and task.get("replica") else ""
        tid = str(task["task_id"]) if task else ""
        return BuildBusyError(
            f"you already have a build running (task {tid or '?'}{where}); one build per caller at a time: "
            "nothing was started",
            tid,
        )

    async def _busy_for(self, principal: str, busy: BuildBusyError) -> BuildBusyError:
        """The caller's own build is named; another principal's build is not (its id and the process are
        that principal's to know)."""
        task = await self.store.get_task(busy.task_id) if busy.task_id else None
        if task is not None and task.get("principal") == principal:
            return busy
        return BuildBusyError(
            "another build is running (one build at a time); nothing was started: ask again when it has "
            "finished"
        )

    async def _run(self, orch: Orchestrator, backend: ModelBackend) -> str:
        self._entered.add(orch.task_id)
        heartbeat = asyncio.create_task(self._heartbeat(orch.task_id), name=f"swarm-heartbeat-{orch.task_id}")
        try:
            return await orch.run()
        finally:
            heartbeat.cancel()
            await self._wound_down(orch, backend)
            await self._trim_after(orch.task_id)

    async def _trim_after(self, task_id: str) -> None:
        """A build that ended (COMPLETED or FAILED): its principal's kept builds trimmed to their caps now,
        not at the next sweep (hours later)."""
        try:
            task = await self.store.get_task(task_id)
            if task is None or task["state"] not in TERMINAL_STATES:
                return
            report = await trim_kept(
                self.root, self.store, self.settings, principal=task["principal"], running=set(self._running)
            )
            if report.trimmed:
                log.info("task %s: %d older kept workspaces of its caller removed", task_id,
                         len(report.trimmed))
        except Exception:  # noqa: BLE001 - the periodic sweep trims what this could not
            log.exception("task %s: kept workspaces not trimmed", task_id)

    def _if_never_started(self, runner: asyncio.Task[str], orch: Orchestrator, backend: ModelBackend) -> None:
        """A runner cancelled before the loop first ran it never entered ``_run`` (no ``finally`` of its ran):
        its build is ended and its slots freed here, else the row stays "running" with no lease to lapse
        and this replica's slot stays taken."""
        if orch.task_id in self._entered:
            self._entered.discard(orch.task_id)
            return
        self._settling[orch.task_id] = asyncio.ensure_future(self._end_unstarted(orch, backend))

    async def _end_unstarted(self, orch: Orchestrator, backend: ModelBackend) -> None:
        try:
            with contextlib.suppress(Exception):  # a row left unfinished is ended by the sweeps as before
                await orch._fail("cancelled")
        finally:
            await self._wound_down(orch, backend)
            self._settling.pop(orch.task_id, None)

    async def _wound_down(self, orch: Orchestrator, backend: ModelBackend) -> None:
        """``_wind_down`` to its end whatever cancels the runner meanwhile (a cancel racing the build's end):
        cut short, it left this replica's one build slot held for good (every later build refused)."""
        ending = asyncio.ensure_future(self._wind_down(orch, backend))
        cancelled = False
        while not ending.done():
            try:
                await asyncio.shield(ending)
            except asyncio.CancelledError:
                cancelled = True
        if cancelled:
            raise asyncio.CancelledError

    async def _wind_down(self, orch: Orchestrator, backend: ModelBackend) -> None:
        """What ends a runner, started or not: its model, the replica's slot, the build's lease."""
        # the backend's close is its own (an HTTP client's, a client's session): one that never returns must
        # not keep the slot; left to finish on its own
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(backend.aclose()), BACKEND_CLOSE_SECONDS)
        self.lock.release()
        if self.store.shared:
            with contextlib.suppress(Exception):  # a lease left behind lapses; the row is already ended
                await asyncio.shield(build_lease.release(self.store.db, orch.task_id, self.holder))
        self._running.pop(orch.task_id, None)
        self._listeners.pop(orch.task_id, None)
        self._last_event.pop(orch.task_id, None)

    async def _end_lapsed(self) -> list[str]:
        ended = await build_lease.end_lapsed(self.store.db, key=self.store.key)
        for tid, replica in ended:
            log.warning(
                "build %s of replica %s: its lease lapsed; ended FAILED (not resumed)", tid, replica or "?"
            )
        return [tid for tid, _ in ended]

    async def _keep_leases(self) -> None:
        """Renew the leases of the builds running here, stop those another replica ended (this one could not
        renew in time), and end other replicas' lapsed builds."""
        renewed_at = time.monotonic()
        while True:
            await asyncio.sleep(self.renew_every)
            mine = [t for t in self._running if not self._running[t].done()]
            try:
                kept = await build_lease.renew(self.store.db, mine, self.holder, self.lease_seconds,
                                                 key=self.store.key, replica=self.replica)
                renewed_at = time.monotonic()
                lost = [t for t in mine if t not in kept]
                await self._end_lapsed()
            except Exception as e:  # noqa: BLE001 - the database is away: keep trying, but not past the lease
                log.warning("swarm build leases not renewed: %s", e)
                lost = mine if time.monotonic() - renewed_at > self.lease_seconds else []
            for tid in lost:
                task = self._running.get(tid)
                if task is not None and not task.done():
                    log.warning("build %s lost its lease (ended by another replica); stopping it here", tid)
                    task.cancel()

    async def _fan_out(self, event: ProgressEvent) -> None:
        self._last_event[event.task_id] = (time.monotonic(), event)
        await self._tell(event.task_id, event)

    async def _tell(self, task_id: str, event: ProgressEvent) -> None:
        """Each listener hears ``event`` within ``LISTENER_SECONDS``, or is dropped: a listener is a caller's
        connection (written as the caller reads), and the build waits for it, its caps with it."""
        for listener in list(self._listeners.get(task_id, [])):
            try:
                await asyncio.wait_for(listener(event), LISTENER_SECONDS)
            except asyncio.TimeoutError:
                log.warning("task %s: a caller did not take its progress in time; dropped", task_id)
                with contextlib.suppress(ValueError):
                    self._listeners.get(task_id, []).remove(listener)
            except Exception:  # noqa: BLE001 - a listener that fails must not fail the build
                pass

    async def _heartbeat(self, task_id: str) -> None:
        """While one agent works for long (a local model call can take minutes), tell waiting callers the
        build is alive: their progress notifications keep the call's deadline alive through the gateway."""
        every = self.settings.heartbeat_seconds
        beat_at = time.monotonic()
        while True:
            await asyncio.sleep(every / 4)
            last = self._last_event.get(task_id)
            now = time.monotonic()
            if last is None or now - max(last[0], beat_at) < every:
                continue
            at, event = last
            beat_at = now
            beat = ProgressEvent(
                task_id,
                event.state,
                event.progress,
                event.total,
                f"still working ({now - at:.0f} s): {event.message}",
            )
            await self._tell(task_id, beat)

    def add_listener(self, task_id: str, listener: ProgressSink) -> None:
        self._listeners.setdefault(task_id, []).append(listener)

    def is_running(self, task_id: str) -> bool:
        return task_id in self._running

    def _running_here(self, task_id: str, state: str) -> bool:
        # a finished state is committed before its runner has wound down (closing its backend)
        return self.is_running(task_id) and state not in TERMINAL_STATES

    async def wait(self, task_id: str) -> dict[str, Any]:
        task = self._running.get(task_id)
        if task is not None:
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                # the build was cancelled (it ended FAILED: its status says so), or the waiter was: a caller
                # that gave up waiting must hear it, to stop the build (taken for the first, it went on)
                if not task.done():
                    raise
        return await self.status(task_id)

    async def owned(self, task_id: str, principal: str | None) -> None:
        """Raise ``UnknownTaskError`` unless the build is ``principal``'s (None: the CLI, which sees every
        build);
        another principal's build is as unknown as a missing one."""
        if not TASK_ID.fullmatch(task_id):
            raise UnknownTaskError(task_id)
        if principal is None:
            return
        task = await self.store.get_task(task_id)
        if task is None or task.get("principal") != principal:
            raise UnknownTaskError(task_id)

    async def cancel(self, task_id: str, principal: str | None = None) -> bool:
        """Cancel a build running in this process; it ends FAILED ("cancelled") with its state kept."""
        await self.owned(task_id, principal)
        task = self._running.get(task_id)
        if task is None:
            return False
        # at once (no wait before it: the build goes on meanwhile); a build that has ended and is winding down
        # stays as it ended (its runner finishes), and this cancel then cancelled nothing
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        settling = self._settling.get(task_id)
        if settling is not None:  # cancelled before its runner started: ended by the callback, awaited here
            await asyncio.shield(settling)
        after = await self.store.get_task(task_id) or {}
        return after.get("state") == "FAILED" and after.get("error") == "cancelled"

    async def status(self, task_id: str, principal: str | None = None) -> dict[str, Any]:
        await self.owned(task_id, principal)
        task = await self.store.get_task(task_id)
        if task is None:
            raise UnknownTaskError(task_id)
        if self._lapsed(task):  # looked up before a sweep came round: end it now, then show that
            await self._end_lapsed()
            task = await self.store.get_task(task_id) or task
        elif self._orphaned(task):  # its process died since this one started (a CLI build killed)
            await self._end_orphans()
            task = await self.store.get_task(task_id) or task
        steps = await self.store.steps_of(task_id)
        if self.store.shared:  # rows of the build's signed counts that no signed row answers: deleted in SQL
            missing = {"steps": missing_rows(task, "steps", steps),
                       "model_calls": missing_rows(task, "api_calls", await self.store.api_calls_of(task_id))}
            task["rows_missing"] = {k: v for k, v in missing.items() if v}
        task["running_here"] = self._running_here(task_id, task["state"])
        task["steps"] = [
            {k: s[k] for k in ("step_number", "attempt", "file_path", "status", "issues", "warnings")}
            | ({"unverified": True} if s.get("unverified") else {})
            for s in steps
        ]
        # bounded, and walked off the event loop: a build writes at most 25 files, anything else any number
        listed = await asyncio.to_thread(self.workspace_of(task_id).list_files, MAX_LISTED_FILES + 1)
        task["files"], task["more_files"] = listed[:MAX_LISTED_FILES], len(listed) > MAX_LISTED_FILES
        here = self.workspace_of(task_id).root.exists()
        elsewhere = self.store.shared and not here and task.get("replica", "") not in ("", self.replica)
        # a build's files stay on the disk of the replica that made them (not copied into the shared store):
        # say
        # which replica holds them rather than show an empty or "removed" workspace
        task["files_on_replica"] = task.get("replica") or self.replica if self.store.shared else None
        task["workspace_removed"] = task["state"] in TERMINAL_STATES and not here and not elsewhere
        if elsewhere:
            task["files_note"] = (
                f"the files of this build are on replica {task['replica']}'s disk; ask that "
                "replica (or its data directory) for them"
            )
        return task

    async def files_elsewhere(self, task_id: str) -> str | None:
        """The replica whose disk holds this build's files, when that is not this one (shared store only)."""
        if not self.store.shared or self.workspace_of(task_id).root.exists():
            return None
        task = await self.store.get_task(task_id)
        replica = (task or {}).get("replica") or ""
        return replica if replica and replica != self.replica else None

    def _orphaned(self, task: dict[str, Any]) -> bool:
        """Unfinished, one store file, and not run here: another process's, ended if that process is gone."""
        return (
            not self.store.shared
            and task["state"] not in TERMINAL_STATES
            and not self.is_running(task["task_id"])
        )

    def _lapsed(self, task: dict[str, Any]) -> bool:
        until = task.get("lease_until")
        return (
            self.store.shared
            and task["state"] not in TERMINAL_STATES
            and until is not None
            and until < time.time()
            and not self.is_running(task["task_id"])
        )

    async def list(self, limit: int = 20, principal: str | None = None) -> list[dict[str, Any]]:
        rows = await self.store.list_tasks(limit, principal)
        if any(self._lapsed(r) for r in rows):
            await self._end_lapsed()
            rows = await self.store.list_tasks(limit, principal)
        elif any(self._orphaned(r) for r in rows):
            await self._end_orphans()
            rows = await self.store.list_tasks(limit, principal)
        return [
            {k: r[k] for k in ("task_id", "state", "error", "created_at", "finished_at", "model_calls")}
            | {
                "app_name": (r["spec"] or {}).get("app_name"),
                "running_here": self._running_here(r["task_id"], r["state"]),
            }
            for r in rows
        ]
