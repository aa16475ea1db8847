"""The ``agent`` built-in: ``agent_run(goal)`` drives the phone through the gateway; its runs can be read
back.

It speaks the push era to the gateway (``BuiltinTraits(protocol="legacy")``) so a step's question reaches the
person
who started the run while the run waits. One run at a time: the phone has one screen.
"""

# no `from __future__ import annotations`: MCPServer evaluates tool annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from sentinel_mcp.agent.framed_lines import one_line, quoted
from sentinel_mcp.agent.personal_steps import TRACE_KINDS
from sentinel_mcp.agent.relay import CallerRelay
from sentinel_mcp.agent.run_credentials import RunCredentials, checked_invoker
from sentinel_mcp.agent.settings import AgentSettings, Caps, agent_settings
from sentinel_mcp.agent.trace_store import TraceStore
from sentinel_mcp.core.builtin import SELF_CONFIRMS, BuiltinContext, BuiltinTraits, declare
from sentinel_mcp.core.call_meta import (
    behind_gateway,
    can_sample_of,
    consented_of,
    decision_id_of,
    origin_of,
    principal_of,
    purpose_of,
    session_of,
    standing_of,
)
from sentinel_mcp.core.caller_checks import LapseRecorder, check_of
from sentinel_mcp.core.decision import Origin
from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.core.secret_names import SENSITIVE_META
from sentinel_mcp.core.tool_ref import ToolRef, exposed_name
from sentinel_mcp.core.untrusted_text import UNTRUSTED_META, marker
from sentinel_mcp.swarm.backends.base import ModelError
from sentinel_mcp.swarm.backends.factory import make_backend

if TYPE_CHECKING:  # the loop is imported by the first run (agent_run): the built-in starts without it
    from sentinel_mcp.agent.loop import RunResult

Settings = AgentSettings  # the built-in contract: its typed settings beside create_server

log = logging.getLogger(__name__)
BUSY_GRACE_SECONDS = 5.0  # how long a new run waits for one that is ending
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
# it acts on the phone, but only through guarded calls: each step is decided on its own
RUN = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
)
# a run's steps are made as its caller's calls (reach, consent gate, rulebases see that front); a run started
# by another built-in acts as that built-in
# the goal may hold what the person typed for the agent to type (a password): the run learns which words those
# are only when it types them, after the gateway's audit row (hash-chained, never rewritten) was written, so
# that row and the console's copies keep the goal's length only; agent.db keeps it, typed passwords redacted
RUN_META = {**SELF_CONFIRMS, SENSITIVE_META: ["goal"]}
STEP_ORIGINS: dict[str, Origin] = {"client": "client", "a2a": "a2a", "cli": "cli"}
INSTRUCTIONS = (
    "A phone agent: agent_run(goal) observes the screen, decides each step with a model, and acts through "
    "Sentinel's guarded device tools. Risky steps ask you first; a refusal stops the run. agent_runs and "
    "agent_trace show what earlier runs did."
)


# a run's record holds the screens it saw, the labels it acted on and the model's answer written from them:
# the apps' words, marked as such by the gateway (as device__screen_read's are), error or not
PHONES_SOURCE = "the phone's screens, through the agent's model"
PHONES_WORDS = {UNTRUSTED_META: {"source": PHONES_SOURCE}}
PROGRESS_LIMIT = 600
# the trace's readers are told which kinds of personal data their caller still holds consent for (as the
# device's screen tools are): what a run read of any other kind is taken out of the trace
TRACE_CONSENTS = {"sentinel/personal_screen": {"kinds": list(TRACE_KINDS)}}


def held_kinds(ctx: Context, told: Any = consented_of) -> frozenset[str] | None:
    """The kinds the caller holds consent for, as the gateway says (``told``: ``consented_of``, for this
    call's purpose, or ``standing_of``, for any; None: all, standalone)."""
    if not behind_gateway(ctx):
        return None
    kinds = told(ctx)
    return None if kinds is None else frozenset(kinds)


def _result(
    text: str, data: dict[str, Any], error: bool = False, *, untrusted: bool = False
) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=data, is_error=error,
        _meta=dict(PHONES_WORDS) if untrusted else None,
    )


def _summary(run: "RunResult") -> str:
    """The run in lines of Sentinel's own: the answer, reasons and step summaries (the model's words, from the
    screens) stay inside theirs (``framed_lines``)."""
    lines = [
        (
            f"agent run {run.run_id}: {run.status} after {len(run.steps)} step(s), {run.seconds:.1f} s, "
            f"{run.tokens} tokens - {one_line(run.reason)}"
        )
    ]
    if run.answer:
        lines.append(f"answer:\n{quoted(run.answer)}")
    lines += [f"  {s['n']}. {one_line(str(s.get('summary', '')))}" for s in run.steps]
    return "\n".join(lines)


def run_credentials(
    ctx: Context, record: LapseRecorder | None, *, builtin: str, tool: str
) -> RunCredentials | None:
    """The caller's credential check, kept by the run it starts (None: credentials that hold for the
    process's life, or no gateway); a run it stops gets one audit row (``credentials_lapsed``)."""
    check = check_of(decision_id_of(ctx))
    if check is None:
        return None
    principal, session = principal_of(ctx), session_of(ctx)

    async def recorded(run_id: str, reason: str) -> None:
        if record is not None:
            await record(builtin=builtin, tool=tool, principal=principal, session=session,
                         reason=f"agent run {run_id}: {reason}")

    return RunCredentials(check, recorded)


def build_server(
    settings: AgentSettings, store: TraceStore, *, port: Any, call_tool: Any, name: str = "agent",
    record_lapse: LapseRecorder | None = None,
) -> MCPServer:
    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        if not store.is_open:
            await store.open()
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                await store.close()

    server = MCPServer(name, version="0.1.0", instructions=INSTRUCTIONS, lifespan=lifespan)
    # it pushes the steps' questions mid-call; a run may take its whole time cap, plus a person's answer to
    # the last step's question
    declare(server, BuiltinTraits(protocol="legacy", timeout=settings.caps.max_seconds + 120))
    one_at_a_time = anyio.Lock()

    @server.tool(annotations=RUN, meta=RUN_META)
    async def agent_run(
        goal: Annotated[
            str,
            Field(
                description="what to achieve on the phone, e.g. 'open Messages and read the newest message'"
            ),
        ],
        ctx: Context,
        max_steps: Annotated[int | None, Field(description="lower the step cap for this run", ge=1)] = None,
        max_seconds: Annotated[
            float | None, Field(description="lower the time cap for this run", gt=0)
        ] = None,
    ) -> CallToolResult:
        """Reach a goal on the phone: observe the screen, decide a step with the model, act through the
        gateway
        (every step guarded; risky ones ask you), reflect, repeat until done, refused or a cap is hit."""
        goal = goal.strip()
        if not goal:
            return _result("goal must not be empty", {"status": "error"}, error=True)
        if len(goal) > settings.max_goal_chars:
            return _result(
                f"goal is longer than {settings.max_goal_chars} characters", {"status": "error"}, error=True
            )
        origin, principal = origin_of(ctx), principal_of(ctx)
        if origin == "a2a" and not any(fnmatchcase(principal, p) for p in settings.a2a_peers):
            return _result(
                f"the phone's owner has not allowed {principal!r} to run the phone agent (add the "
                "principal to sentinel.agent.a2a_peers); nothing was done",
                {"status": "refused"},
                error=True,
            )
        if port is None:
            return _result(
                "the agent runs inside Sentinel's gateway only (its steps are guarded calls)",
                {"status": "error"},
                error=True,
            )
        caps = Caps(
            max_steps=min(max_steps or settings.caps.max_steps, settings.caps.max_steps),
            max_seconds=min(max_seconds or settings.caps.max_seconds, settings.caps.max_seconds),
            max_tokens=settings.caps.max_tokens,
        )
        if one_at_a_time.locked():
            # a run just cancelled may still be winding down (its cancellation reaches this server after the
            # person's Ctrl-C was answered): wait briefly for the phone before calling it busy
            with anyio.move_on_after(BUSY_GRACE_SECONDS):
                while one_at_a_time.locked():
                    await anyio.sleep(0.05)
        if one_at_a_time.locked():
            return _result(
                "another agent run is using the phone; try again when it has finished",
                {"status": "busy"},
                error=True,
            )
        tool = exposed_name(ToolRef(name, "agent_run"), port) or f"{name}__agent_run"
        credentials = run_credentials(ctx, record_lapse, builtin=name, tool=tool)
        try:
            # through the gateway, it says whether the caller's own model can be asked (sampling relayed);
            # its model calls there are made under the caller's check too
            backend = make_backend(
                settings,
                call_tool=checked_invoker(
                    call_tool, principal, credentials.check if credentials is not None else None
                ),
                session=ctx.session,
                protocol_version=ctx.protocol_version,
                relayed=can_sample_of(ctx),
                related_request_id=ctx.request_id,
            )
        except ModelError as e:
            return _result(f"no model for the agent: {e}", {"status": "error"}, error=True)

        async def progress(step: float, total: float | None, message: str | None) -> None:
            # a step's line quotes the screen's labels and the model's reasoning: marked as the run's result
            # is (a notification has no _meta the caller reads), one line, hidden characters shown
            if message is not None:
                message = compose(marker(PHONES_SOURCE), " ", safe_text(message, PROGRESS_LIMIT))
            try:
                await ctx.report_progress(step, total, message)
            except Exception:
                log.debug("agent progress not delivered", exc_info=True)

        async with one_at_a_time:
            try:
                # imported by the first run, not at start-up (the built-in is built then); once, ~20 ms
                from sentinel_mcp.agent.loop import AgentLoop

                run = await AgentLoop(port, backend, store, settings).run(
                    goal,
                    session=session_of(ctx),
                    principal=principal,
                    relay=CallerRelay(ctx),
                    progress=progress,
                    caps=caps,
                    origin=STEP_ORIGINS.get(origin, "builtin"),
                    purpose=purpose_of(ctx),
                    credentials=credentials,
                )
            finally:
                await backend.aclose()
        return _result(_summary(run), run.public(), error=run.status != "completed", untrusted=True)

    @server.tool(annotations=READ, meta=TRACE_CONSENTS)
    async def agent_runs(ctx: Context, limit: Annotated[int, Field(ge=1, le=200)] = 20) -> CallToolResult:
        """Your most recent agent runs (goal, status, steps, tokens), newest first."""
        # kept on disk while held for any purpose; shown while held for this call's
        runs = await store.runs(principal_of(ctx), limit, held_kinds(ctx, standing_of), shown=held_kinds(ctx))
        text = (
            "\n".join(
                f"{r['run_id']} {r['status']} steps={r['steps']} tokens={r['tokens']}: {r['goal'][:80]}"
                for r in runs
            )
            or "no agent runs yet"
        )
        # each run's answer and reason are the model's words, written from the screens: marked as a trace is
        return _result(text, {"runs": runs}, untrusted=True)

    @server.tool(annotations=READ, meta=TRACE_CONSENTS)
    async def agent_trace(run_id: str, ctx: Context) -> CallToolResult:
        """Every step of one of your runs: the screen it saw, the decision, the guarded call and its outcome.
        """
        run = await store.run(principal_of(ctx), run_id, held_kinds(ctx, standing_of), shown=held_kinds(ctx))
        if run is None:
            return _result(f"no agent run {run_id!r} of yours", {"status": "error"}, error=True)
        return _result(json.dumps(run, indent=1, default=str)[:20000], run, untrusted=True)

    return server


def create_server(ctx: BuiltinContext) -> MCPServer:
    settings = agent_settings(ctx.settings, f"sentinel.{ctx.name}")
    # replicas on one PostgreSQL keep runs there (any replica's console shows them); else the data dir's file
    store = TraceStore(ctx.store or ctx.data_dir / "agent.db", key=ctx.services.agent_trace_key)
    if ctx.services.agent_traces is None:  # the console's agent page reads (and follows) it
        ctx.services.agent_traces = store
    return build_server(settings, store, port=ctx.services.gateway, call_tool=ctx.call_tool, name=ctx.name,
                        record_lapse=ctx.services.record_lapse)
