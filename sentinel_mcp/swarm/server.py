"""The ``swarm`` built-in: app builds as MCP tools, the generated files as resources.

Tools: ``swarm_validate`` (read-only: is a spec valid, and why not), ``swarm_build`` (returns the task id
at once, or with ``wait=true`` reports progress until the build ends), ``swarm_status``, ``swarm_list``,
``swarm_cancel``. Resources: ``swarm://<task_id>`` (the status, as JSON) and ``swarm://<task_id>/<path>``
(a generated file). A client whose requests time out quickly starts with ``wait=false`` and reads those.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from sentinel_mcp.core.builtin import BuiltinContext, BuiltinTraits, declare
from sentinel_mcp.core.call_meta import can_sample_of, decision_id_of, principal_of, session_of
from sentinel_mcp.core.caller_checks import check_of
from sentinel_mcp.core.builtin import ToolInvoker
from sentinel_mcp.core.tool_ref import ToolRef, exposed_name
from sentinel_mcp.core.display_text import compose, safe_text, said
from sentinel_mcp.swarm.backends.base import ModelError
from sentinel_mcp.swarm.backends.factory import make_backend
from sentinel_mcp.swarm.build_credentials import BuildCredentials
from sentinel_mcp.swarm.build_service import BuildService, UnknownTaskError
from sentinel_mcp.swarm.orchestrator import ProgressEvent
from sentinel_mcp.swarm.path_safety import MAX_PATH_CHARS, UnsafePathError
from sentinel_mcp.swarm.retention import TASK_DIR, TASK_ID_LENGTH, TASK_ID_PATTERN
from sentinel_mcp.swarm.settings import swarm_settings
from sentinel_mcp.swarm.spec import SpecError, parse_spec
from sentinel_mcp.swarm.state import OWNER
from sentinel_mcp.swarm.task_lock import BuildBusyError, BuildQuotaError
from sentinel_mcp.swarm.workspace import NotBuildFileError
from sentinel_mcp.swarm.settings import SwarmSettings

Settings = SwarmSettings  # the built-in contract: its typed settings beside create_server

INSTRUCTIONS = (
    "Generates complete Android projects (Kotlin, XML, Gradle) from an app spec with a planner, "
    "coder, critic and verifier under hard caps. Check a spec with swarm_validate, start with swarm_build "
    "(wait=false returns the task id at once; wait=true reports progress until the build ends), follow "
    "with swarm_status or the resource swarm://<task_id>, read files as swarm://<task_id>/<path>."
)
SPEC_HELP = (
    "App spec: app_name (str), package_name (e.g. com.example.notes), features (1-10 short phrases), "
    "min_sdk (21-35, default 24), target_sdk (>= min_sdk, default 34), architecture (MVVM|MVP|MVI), "
    "ui_system (Views|Compose), description (optional)"
)


class _ServiceHolder:
    """Starts the service on first use and stops it when the last connection closes."""

    def __init__(self, service: BuildService) -> None:
        self.service = service
        self._lock = asyncio.Lock()
        self._connections = 0

    async def get(self) -> BuildService:
        async with self._lock:
            await self.service.start()
        return self.service

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[None]:
        self._connections += 1
        try:
            yield
        finally:
            self._connections -= 1
            if self._connections == 0:
                async with self._lock:
                    await self.service.close()  # running builds end FAILED ("cancelled"), state kept


def create_server(ctx: BuiltinContext) -> MCPServer:
    settings = swarm_settings(ctx.settings, where=f"sentinel.{ctx.name}")
    # replicas on one PostgreSQL: builds recorded and leased there (build_lease.py); else the data dir's
    # SQLite
    holder = _ServiceHolder(
        BuildService(
            Path(ctx.data_dir),
            settings,
            store=ctx.services.store_url,
            replica=ctx.services.replica,
            key=ctx.services.swarm_key,
            lease_seconds=settings.build_lease_seconds,
            renew_every=min(settings.build_lease_renew_seconds, settings.build_lease_seconds / 3),
        )
    )

    @contextlib.asynccontextmanager
    async def lifespan(_server: MCPServer) -> AsyncIterator[dict[str, Any]]:
        async with holder.connection():
            yield {}

    mcp = MCPServer(ctx.name, instructions=INSTRUCTIONS, lifespan=lifespan)

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False))
    async def swarm_validate(spec: Annotated[dict[str, Any], Field(description=SPEC_HELP)]) -> dict[str, Any]:
        """Check an app spec without building anything: valid, or every problem by field. (A text field that
        holds
        the JSON literal true, false or null is read as that word: the policy engine, which asks this tool
        before
        a build is confirmed, cannot tell them from strings; swarm_build itself checks strictly.)"""
        try:
            parsed = parse_spec(_literals_as_words(spec))
        except SpecError as e:
            return {
                "valid": False,
                "problems": e.problems,
                "summary": "invalid app spec: " + "; ".join(e.problems)[:600],
            }
        return {
            "valid": True,
            "problems": [],
            "summary": f"{parsed.app_name} ({parsed.package_name}), {len(parsed.features)} features",
        }

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True))
    async def swarm_build(
        spec: Annotated[dict[str, Any], Field(description=SPEC_HELP)],
        ctx_: Context,
        # strict, as the spec: JSON types as sent ("3" or true is no cap, "false" no truth value), so the
        # build runs on what the policy judged (it refuses a cap that is no number)
        wait: Annotated[
            bool, Field(strict=True, description="true: report progress and return when the build ends")
        ] = False,
        max_steps: Annotated[
            int | None, Field(ge=1, le=25, strict=True, description="lower the plan-step cap")
        ] = None,
        max_model_calls: Annotated[int | None, Field(ge=1, le=80, strict=True)] = None,
        max_tokens: Annotated[int | None, Field(ge=1, le=200_000, strict=True)] = None,
        max_minutes: Annotated[float | None, Field(gt=0, le=90, strict=True, allow_inf_nan=False)] = None,
    ) -> dict[str, Any]:
        """Build an Android app from a spec. Returns the task id at once (or the final status with wait=true).
        """
        service = await holder.get()
        caps = {
            "max_steps": max_steps,
            "max_model_calls": max_model_calls,
            "max_tokens": max_tokens,
            "max_wall_seconds": max_minutes * 60 if max_minutes is not None else None,
        }

        credentials = build_credentials(ctx, ctx_)

        async def backend_factory():
            # through the gateway, it says whether the caller's own model can be asked (sampling relayed); its
            # model calls are the caller's, checked as the build's steps are
            return make_backend(
                settings,
                call_tool=caller_invoker(ctx.call_tool, caller(ctx_), credentials),
                session=ctx_.session,
                protocol_version=ctx_.protocol_version,
                relayed=can_sample_of(ctx_),
                wait=wait,
                related_request_id=ctx_.request_id,
            )

        async def report(event: ProgressEvent) -> None:
            await ctx_.report_progress(event.progress, event.total, f"[{event.state}] {event.message}")

        try:
            task_id = await service.submit(
                spec,
                backend_factory,
                session=session_of(ctx_),
                caps=caps,
                listener=report if wait else None,
                principal=caller(ctx_),
                credentials=credentials,
            )
        except (SpecError, BuildBusyError, BuildQuotaError, ModelError, ValueError) as e:
            raise ToolError(str(e)) from None
        if not wait:
            return {
                "task_id": task_id,
                "state": "PLANNING",
                "workspace": _address(task_id),
                "backend": (await service.status(task_id))["backend"],
                "status": f"swarm://{task_id}",
                "files": f"swarm://{task_id}/<path>",
            }
        try:
            status = await service.wait(task_id)
        except asyncio.CancelledError:  # the caller gave up waiting: the build stops too
            await asyncio.shield(service.cancel(task_id))
            raise
        return _summary(_as_seen(status))

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def swarm_status(task_id: TaskId, ctx_: Context) -> dict[str, Any]:
        """State, plan, steps, counters, warnings and the verifier's report of one build."""
        service = await holder.get()
        try:
            return _as_seen(await service.status(task_id, caller(ctx_)))
        except UnknownTaskError as e:
            raise ToolError(str(e)) from None

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def swarm_list(
        ctx_: Context, limit: Annotated[int, Field(ge=1, le=200, strict=True)] = 20
    ) -> dict[str, Any]:
        """The caller's most recent builds, newest first."""
        service = await holder.get()
        return {"tasks": await service.list(limit, caller(ctx_))}

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True))
    async def swarm_cancel(task_id: TaskId, ctx_: Context) -> dict[str, Any]:
        """Cancel a running build; it ends FAILED ("cancelled") and keeps what it made so far."""
        service = await holder.get()
        try:
            cancelled = await service.cancel(task_id, caller(ctx_))
            status = await service.status(task_id, caller(ctx_))
        except UnknownTaskError as e:
            raise ToolError(str(e)) from None
        return {
            "task_id": task_id,
            "cancelled": cancelled,
            "state": status["state"],
            "error": status["error"],
        }

    @mcp.resource(
        "swarm://{task_id}",
        name="swarm-status",
        mime_type="application/json",
        description="The status of a swarm build (state, counters, steps, files), as swarm_status gives it",
    )
    async def swarm_task(task_id: str, ctx_: Context) -> str:
        service = await holder.get()
        try:
            return json.dumps(_as_seen(await service.status(task_id, caller(ctx_))), default=str)
        except UnknownTaskError as e:
            raise ResourceError(f"swarm://{_shown(task_id)}: {e}") from None

    @mcp.resource(
        "swarm://{task_id}/{+path}",
        name="swarm-file",
        mime_type="text/plain",
        description="A file generated by a swarm build",
    )
    async def swarm_file(task_id: str, path: str, ctx_: Context) -> str:
        service = await holder.get()
        # the caller's path, decoded from the URI (line breaks, escapes, any length), is shown marked and cut
        address = compose("swarm://", _shown(task_id), "/", safe_text(path, MAX_PATH_CHARS))
        try:
            await service.owned(task_id, caller(ctx_))
            elsewhere = await service.files_elsewhere(task_id)
            if elsewhere is not None:  # build files stay on the disk of the replica that made them
                raise ResourceError(
                    compose(
                        address,
                        ": the files of this build are on replica ",
                        safe_text(elsewhere, 100),
                        "'s disk; read them through that replica",
                    )
                )
            written = await service.store.written_sha256(task_id, path)  # lets a copy's hard links through
            return service.workspace_of(task_id).read_file(path, written)
        except (FileNotFoundError, IsADirectoryError):
            raise ResourceError(compose(address, ": no such file")) from None
        except (UnknownTaskError, UnsafePathError, NotBuildFileError) as e:
            raise ResourceError(compose(address, ": ", safe_text(said(e)))) from None

    # the defaults: a build reports progress, so the timeout without progress holds (CALL_LIMITS caps it)
    return declare(mcp, BuiltinTraits())


# a build id, bounded in the tool's schema (the MCP layer refuses any other before the call) and again in code
TaskId = Annotated[
    str, Field(min_length=TASK_ID_LENGTH, max_length=TASK_ID_LENGTH, pattern=f"^{TASK_ID_PATTERN}$")
]


def _shown(task_id: str) -> str:
    """A task id as an error may name it: a well-formed one, never the caller's other text (any length)."""
    return task_id if TASK_DIR.fullmatch(task_id) else "<not a build id>"


def caller(ctx_: Context) -> str:
    """Whose builds the caller sees: its principal (through the gateway), the owner when run standalone.
    Builds belong to a principal: another's are as unknown as missing ones."""
    return principal_of(ctx_, default=OWNER)


_TEXT_FIELDS = ("app_name", "package_name", "description")


def build_credentials(ctx: BuiltinContext, ctx_: Context) -> BuildCredentials | None:
    """The caller's credential check, kept by the build it starts (None: credentials that hold for the
    process's life, or run on its own); a build it stops gets one audit row (``credentials_lapsed``)."""
    check = check_of(decision_id_of(ctx_))
    if check is None:
        return None
    record, principal, session = ctx.services.record_lapse, caller(ctx_), session_of(ctx_)
    gateway = ctx.services.gateway
    tool = (exposed_name(ToolRef(ctx.name, "swarm_build"), gateway) if gateway is not None else None)

    async def recorded(task_id: str, reason: str) -> None:
        if record is not None:
            await record(builtin=ctx.name, tool=tool or "swarm_build", principal=principal, session=session,
                         reason=f"build {task_id}: {reason}")

    return BuildCredentials(check, recorded)


def caller_invoker(call_tool: ToolInvoker | None, principal: str,
                   credentials: BuildCredentials | None) -> ToolInvoker | None:
    """The gateway's invoker, its calls made as the build's caller (their reach, quota and audit rows, not
    Sentinel's own) and under the caller's credential check."""
    if call_tool is None:
        return None
    own, own_check = principal, credentials.check if credentials is not None else None

    async def invoke(name: str | ToolRef, arguments: dict[str, Any], *, principal: str | None = None,
                     recheck: Callable[[], Any] | None = None) -> Any:
        # always the build's caller and check, whatever a backend names
        return await call_tool(name, arguments, principal=own, recheck=own_check)

    return invoke


def _literals_as_words(spec: dict[str, Any]) -> dict[str, Any]:
    """JSON true/false/null in a text field as the words (how a spec reads after a trip through Prolog terms).
    """
    word = {True: "true", False: "false", None: "null"}

    def text(v: Any) -> Any:
        return word[v] if v is None or isinstance(v, bool) else v

    out = {k: text(v) if k in _TEXT_FIELDS else v for k, v in spec.items()}
    if isinstance(out.get("features"), list):
        out["features"] = [text(f) for f in out["features"]]
    return out


def _address(task_id: str) -> str:
    return f"swarm://{task_id}/"


def _as_seen(status: dict[str, Any]) -> dict[str, Any]:
    """A status as a caller sees it: the workspace by its swarm:// address, never its path on this disk (the
    data directory, the account's home are the server's to know)."""
    return status | {"workspace": _address(status["task_id"])}


def _summary(status: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "task_id",
        "state",
        "error",
        "backend",
        "workspace",
        "files",
        "warnings",
        "model_calls",
        "prompt_tokens",
        "completion_tokens",
        "report",
        "caps",
    )
    return {k: status.get(k) for k in keys}
