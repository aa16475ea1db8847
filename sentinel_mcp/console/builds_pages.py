"""Builds: the swarm's app builds of this principal (progress, plan steps, attempts, files).

Builds belong to the principal that asked for them (``swarm/build_service.owned``): another principal's build,
and any id that is not a build's, is "not found" for everybody else, the owner included. Read from the swarm's
own store (``<data dir>/swarm/swarm.db``, shared: the built-in may be writing it) and its workspaces; a file
is
shown only through ``Workspace.read_file`` (relative, no ``..``, no symlink on the way). While a build runs
the
page refreshes itself (a plain ``<meta refresh>``: no script needed).
"""

from __future__ import annotations

import asyncio
import codecs
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from sentinel_mcp.console.auth import Viewer
from sentinel_mcp.console.segment_routes import routable
from sentinel_mcp.console.web import Console
from sentinel_mcp.core.display_text import safe_text
from sentinel_mcp.swarm.build_lease import end_lapsed
from sentinel_mcp.swarm.build_progress import missing_rows
from sentinel_mcp.swarm.path_safety import UnsafePathError, check_relative_path
from sentinel_mcp.swarm.state import TERMINAL_STATES, SwarmStore
from sentinel_mcp.swarm.task_lock import TaskLock
from sentinel_mcp.swarm.workspace import MAX_LISTED_FILES, NotBuildFileError, Workspace

MAX_SHOWN_FILE = 200_000  # characters of one file shown on its page
# files listed on a build's page: a build's tools may make any number, and 100,000 of them made a 31 MB page
# whose rendering held the gateway's event loop (every call) for 6 s, again on every 5 s refresh
MAX_LISTED = MAX_LISTED_FILES
LIST = 100


def _root(console: Console) -> Path | None:
    """The swarm built-in's data directory, when it is configured."""
    config = console.runtime.config
    return config.data_dir / "swarm" if "swarm" in config.sentinel.builtins else None


async def _store(console: Console) -> SwarmStore | None:
    root = _root(console)
    url = console.runtime.config.store_url
    if root is not None and url:  # replicas share the builds: any replica's console shows them all
        store = await SwarmStore(url, key=console.runtime.services.swarm_key).open()
        # a dead replica's builds read as ended (with why, the end signed), never "running" forever
        await end_lapsed(store.db, key=store.key)
        return store
    if root is None or not (root / "swarm.db").exists():
        return None
    # the build service (the swarm's pipeline, its backends) imported by the first look at a build, not by
    # the front's start (issue 21, cold start; tests/console/test_console_start_imports.py)
    from sentinel_mcp.swarm.build_service import end_orphans

    store = await SwarmStore(root / "swarm.db").open()
    # a build whose process died (killed, the machine restarted) reads as ended, never "running" for ever:
    # the built-in ends such builds only when it starts, at its first use
    try:
        await end_orphans(store, TaskLock(root / "swarm.lock"))
    except BaseException:
        await store.close()
        raise
    return store


async def _owned(store: SwarmStore, task_id: str, principal: str) -> dict[str, Any] | None:
    from sentinel_mcp.swarm.build_service import TASK_ID

    if not TASK_ID.fullmatch(task_id):
        return None
    task = await store.get_task(task_id)
    return task if task is not None and task.get("principal") == principal else None


def _progress(task: dict[str, Any], steps: list[dict[str, Any]]) -> tuple[int, int]:
    """(plan steps accepted, plan steps): the plan's own count, else what the steps show."""
    plan = task.get("plan") or {}
    planned = plan.get("steps") if isinstance(plan, dict) else None
    total = len(planned) if isinstance(planned, list) else len({s["step_number"] for s in steps})
    done = len({s["step_number"] for s in steps if s.get("status") == "ACCEPTED"})
    if task.get("state") == "COMPLETED":
        done = max(done, total)
    return min(done, total) if total else done, total


def _head(workspace: Workspace, rel: str, chars: int, written: str | None = None) -> tuple[str, bool]:
    """The first ``chars`` characters of a workspace file (through the workspace's own path checks), and
    whether it is longer. Only what is shown is read: a build's tools may write a file of any size, and
    reading it whole for 200,000 characters of it took 500 MB of the gateway's memory for a 200 MB file, on
    every view."""
    limit = chars * 4  # bytes of at most ``chars`` UTF-8 characters
    # a regular file, no link on the way, no other name unless it holds what the build wrote (``written``)
    with workspace.open_file(rel, written) as f:
        data = f.read(limit + 1)
    longer = len(data) > limit
    # an incremental decoder keeps a character the cut splits back instead of calling it invalid
    text = codecs.getincrementaldecoder("utf-8")().decode(data[:limit], final=not longer)
    return text[:chars], longer or len(text) > chars


def _openable(name: str) -> bool:
    """A file the page may open: a path a build may write (a tool may create others; they are listed only)
    that its link can name (segment_routes: no control character)."""
    if not routable(name, "with_slash"):
        return False
    try:
        check_relative_path(name)
    except UnsafePathError:
        return False
    return True


def routes(console: Console) -> list[tuple[str, Any, list[str], bool]]:
    async def builds(request: Request, viewer: Viewer) -> Response:
        store = await _store(console)
        tasks: list[dict[str, Any]] = []
        if store is not None:
            try:
                for task in await store.list_tasks(LIST, viewer.principal.name):
                    done, total = _progress(task, await store.steps_of(task["task_id"]))
                    tasks.append(task | {"done": done, "total": total})
            finally:
                await store.close()
        running = any(t["state"] not in TERMINAL_STATES for t in tasks)
        return console.render(
            request,
            viewer,
            "builds.html",
            tasks=tasks,
            configured=_root(console) is not None,
            refresh=running,
        )

    async def build(request: Request, viewer: Viewer) -> Response:
        task_id = str(request.path_params["task"])
        store = await _store(console)
        if store is None:
            return console.problem(request, viewer, 404, "no such build of yours")
        try:
            task = await _owned(store, task_id, viewer.principal.name)
            if task is None:
                return console.problem(request, viewer, 404, "no such build of yours")
            steps = await store.steps_of(task_id)
            calls = await store.api_calls_of(task_id)
        finally:
            await store.close()
        done, total = _progress(task, steps)
        workspace = Workspace(_root(console) / task_id)  # type: ignore[operator]
        names = await asyncio.to_thread(workspace.list_files, MAX_LISTED + 1)
        files = [(name, _openable(name)) for name in names[:MAX_LISTED]]
        return console.render(
            request,
            viewer,
            "build.html",
            task=task,
            steps=steps,
            files=files,
            more_files=len(names) > MAX_LISTED,
            done=done,
            total=total,
            # the build's signed count of its calls when it has one (rows deleted in SQL are counted missing)
            model_calls=task.get("calls_recorded") if store.shared else len(calls),
            missing_calls=missing_rows(task, "api_calls", calls) if store.shared else 0,
            missing_steps=missing_rows(task, "steps", steps) if store.shared else 0,
            refresh=task["state"] not in TERMINAL_STATES,
        )

    async def build_file(request: Request, viewer: Viewer) -> Response:
        task_id, rel = str(request.path_params["task"]), str(request.path_params["path"])
        store = await _store(console)
        if store is None:
            return console.problem(request, viewer, 404, "no such build of yours")
        try:
            task = await _owned(store, task_id, viewer.principal.name)
            written = await store.written_sha256(task_id, rel) if task is not None else None
        finally:
            await store.close()
        if task is None:
            return console.problem(request, viewer, 404, "no such build of yours")
        workspace = Workspace(_root(console) / task_id)  # type: ignore[operator]
        try:
            content, cut = await asyncio.to_thread(_head, workspace, rel, MAX_SHOWN_FILE, written)
        except UnsafePathError:
            return console.problem(
                request,
                viewer,
                404,
                "no such file in this build (only paths inside its "
                "workspace, without '..' or links, are shown)",
            )
        except (OSError, UnicodeDecodeError, NotBuildFileError):
            return console.problem(request, viewer, 404, "no such text file in this build")
        # generated code is hostile text too: escaped by the template, invisible and direction characters
        # shown
        return console.render(
            request,
            viewer,
            "build_file.html",
            task=task,
            rel=rel,
            content=safe_text(content, MAX_SHOWN_FILE, keep_newlines=True),
            cut=cut,
        )

    return [
        ("/builds", builds, ["GET"], False),
        ("/builds/{task}", build, ["GET"], False),
        ("/builds/{task}/files/{path:with_slash}", build_file, ["GET"], False),
    ]
