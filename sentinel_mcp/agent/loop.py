"""The agent loop: observe the screen, decide with the model, act through the gateway, reflect; repeat under
caps.

Every step is a guarded call on the gateway port (the device's firewall asks the person for risky ones,
through
the relay); the model call is one too when the backend is the local ``llm`` built-in. The loop stops on
completion (the model says ``done``), failure (``fail``, repeated unusable answers or errors, a stuck loop), a
refusal (the guard denies, the person declines, nobody can be asked), or a cap (steps, time, tokens).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import replace
from typing import Any

import anyio

from sentinel_mcp.agent.decision_prompt import HOW, SYSTEM
from sentinel_mcp.agent.decision import (
    Decision,
    UnusableDecision,
    decision_schema,
    device_call,
    parse_decision,
)
from sentinel_mcp.agent.health import HealthMonitor, StepHealth
from sentinel_mcp.agent.personal_steps import result_kinds, tool_kinds
from sentinel_mcp.agent.relay import CallerRelay, asker_of
from sentinel_mcp.agent.run_credentials import OUTCOME as LAPSED, RunCredentials, refused_as_lapsed
from sentinel_mcp.agent.run_result import RunResult
from sentinel_mcp.agent.run_state import Progress, RunState
from sentinel_mcp.agent.screen import Screen, withheld_kinds
from sentinel_mcp.agent.settings import AgentSettings, Caps, allowed_tool
from sentinel_mcp.agent.step_words import (
    decision_id_of,
    field_of,
    not_acted,
    result_text,
    shown_arguments,
    step_words,
    types_password,
)
from sentinel_mcp.agent.trace_store import TraceStore, TraceStoreError
from sentinel_mcp.core.decision import Origin
from sentinel_mcp.core.port import Completed, GatewayPort, NeedsInput, Refused
from sentinel_mcp.core.tool_ref import ToolRef, exposed_name
from sentinel_mcp.core.untrusted_text import first_line
from sentinel_mcp.swarm.backends.base import ModelBackend, ModelError, ModelRequest
from sentinel_mcp.core.errors import AgentError

log = logging.getLogger(__name__)

RESULT_EXCERPT = 600
MAX_ASK_ROUNDS = 3

class _ModelTrouble(UnusableDecision):
    """The model could not be reached or errored: retried after a backoff, not reflected on."""


class _Stop(AgentError):
    def __init__(self, status: str, reason: str, answer: str | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.answer = status, reason, answer


class AgentLoop:
    def __init__(
        self, port: GatewayPort, backend: ModelBackend, store: TraceStore, settings: AgentSettings
    ) -> None:
        self.port = port
        self.backend = backend
        self.store = store
        self.settings = settings

    def tools(self, state: RunState | None = None) -> list[str]:
        """The non-screen tools the model may call (their exposed names): configured, in the catalog now and
        within the reach of the run's principal, never a forbidden one."""
        if state is not None:  # the configured Principal of the run's caller
            tools = self.port.list_catalog_tools(
                self.port.principal_for(state.principal, state.session, state.origin)
            )
        else:
            tools = self.port.list_catalog_tools()
        patterns, identity_of, device = self.settings.tools, self.port.identity_of, self.settings.device
        return sorted(t.name for t in tools if allowed_tool(t.name, identity_of(t.name), patterns, device))

    def device_tool(self, ref: ToolRef) -> str:
        """The name a device tool is exposed under now (its identity when the catalog lacks it: the call is
        then refused as an unknown tool, as any name the catalog does not have)."""
        return exposed_name(ref, self.port) or ref.identity

    async def run(
        self,
        goal: str,
        *,
        session: str,
        principal: str,
        relay: CallerRelay | None = None,
        progress: Progress | None = None,
        caps: Caps | None = None,
        origin: Origin = "builtin",
        purpose: str | None = None,  # its caller stated: every step states it (consents are per purpose)
        credentials: RunCredentials | None = None,  # its caller's: asked before each decision and call
    ) -> RunResult:
        caps = caps or self.settings.caps
        result = RunResult(
            run_id=f"run-{uuid.uuid4().hex[:12]}",
            goal=goal,
            status="running",
            reason="",
            answer=None,
            model=getattr(self.backend, "name", ""),
        )
        started = time.monotonic()
        deadline = started + caps.max_seconds
        state = RunState(
            session=session,
            principal=principal,
            relay=relay,
            origin=origin,
            monitor=HealthMonitor(self.settings.health),
            progress=progress,
            total=caps.max_steps,
            personal=result.personal,
            deadline=deadline,
            purpose=purpose,
            credentials=credentials,
        )
        if relay is not None:  # a step's question waits no longer than the cap; a later yes is no yes
            relay.deadline = deadline
        try:
            await self.store.start_run(result.run_id, principal, session, goal, result.model)
            screen = await self._observe(state)
            for n in range(1, caps.max_steps + 1):
                if time.monotonic() >= deadline:
                    raise _Stop("time_cap", f"stopped at the time cap of {caps.max_seconds:g} s")
                if result.tokens >= caps.max_tokens:
                    raise _Stop("token_cap", f"stopped at the token cap of {caps.max_tokens} tokens")
                if not state.still_holds():  # before the model is asked for the step
                    raise _Stop(LAPSED, state.lapsed or LAPSED)
                screen = await self._step(n, goal, screen, state, result, deadline, caps)
                if progress is not None:
                    last = result.steps[-1]
                    await progress(n, caps.max_steps, result.secrets.scrub(f"step {n}: {last['summary']}"))
            raise _Stop(
                "step_cap", f"stopped at the step cap of {caps.max_steps} steps without reaching the goal"
            )
        except _Stop as stop:
            result.status, result.reason, result.answer = stop.status, stop.reason, stop.answer
            if stop.status == LAPSED and credentials is not None and not state.lapse_recorded:
                await credentials.record(result.run_id, stop.reason)  # the one row saying the run ended
        except TraceStoreError as e:
            result.status, result.reason = "failed", str(e)
        except Exception as e:  # noqa: BLE001 - past every check (a bug): the run still ends, and on disk
            log.exception("agent run %s stopped on an error", result.run_id)
            result.status = "failed"
            result.reason = f"the run stopped on an internal error ({type(e).__name__})"
        except anyio.get_cancelled_exc_class():
            # the caller stopped the run (Ctrl-C in `sentinel-mcp chat`, a cancelled request): say so on disk
            with anyio.CancelScope(shield=True):
                try:
                    await self.store.finish_run(
                        result.run_id,
                        "cancelled",
                        "the caller cancelled the run",
                        None,
                        len(result.steps),
                        result.tokens,
                    )
                except TraceStoreError:
                    pass
            raise
        result.seconds = time.monotonic() - started
        result.asked = result.secrets.scrub(list(relay.asked)) if relay is not None else []
        scrub = result.secrets.scrub
        result.reason, result.answer = scrub(result.reason), scrub(result.answer)
        try:
            await self.store.finish_run(
                result.run_id, result.status, result.reason, result.answer, len(result.steps), result.tokens
            )
        except TraceStoreError as e:
            result.reason += f" ({e})"
        return result

    # ------------------------------------------------------------------ one step
    async def _step(
        self,
        n: int,
        goal: str,
        screen: Screen,
        state: RunState,
        result: RunResult,
        deadline: float,
        caps: Caps,
    ) -> Screen:
        t0 = time.monotonic()
        record: dict[str, Any] = {
            "screen": screen.snapshot_id,
            "app": screen.package,
            "observed": screen.summary(),
        }
        tools = self.tools(state)
        try:
            decision = await self._decide(goal, screen, state, tools, result, deadline, caps)
        except UnusableDecision as bad:
            state.failures += 1
            state.note(f"step {n}: the answer could not be used ({bad})")
            said = result.secrets.scrub(str(bad))  # before any cut: no part of a typed password is kept
            record |= {"outcome": "unusable", "detail": said, "summary": f"unusable answer: {said}"}
            await self._record(result, n, record, t0)
            self._check_failures(state)
            if isinstance(
                bad, _ModelTrouble
            ):  # retry with backoff: a busy or flaky model gets room to recover
                wait = self.settings.health.backoff_seconds * 2 ** (state.failures - 1)
                await self._reflect_on(
                    result,
                    n,
                    "retry",
                    [said[:200]],
                    f"the model failed ({said[:120]}); retrying after {wait:g} s",
                    state,
                )
                await anyio.sleep(min(wait, max(0.0, deadline - time.monotonic())))
            return screen
        if types_password(decision, screen) and result.secrets.add(  # (its pieces, one a step, are one)
            decision.text, screen.window_of(decision.element_id), field_of(decision, screen)
        ):
            await self._scrub_kept(result)  # before this step's record, and before the password is typed
        # what the records, progress lines and reasons quote: the model's words without a typed password,
        # taken out before any of them is cut (a cut first left the start of it)
        scrub = result.secrets.scrub
        shown = replace(decision, text=scrub(decision.text), reasoning=scrub(decision.reasoning))
        record["decision"] = shown.public(screen)
        if decision.final:
            record |= {
                "outcome": decision.action,
                "summary": f"{decision.action}: {shown.text or ''}"[:200],
            }
            await self._record(result, n, record, t0)
            if decision.action == "done":
                raise _Stop("completed", "the goal was reached", shown.text)
            raise _Stop("failed", f"the model gave up: {shown.text or shown.reasoning or 'no reason'}")
        if decision.tool is not None:
            name, arguments = decision.tool, decision.arguments
        else:
            ref, arguments = device_call(decision, self.settings.device)
            name = self.device_tool(ref)
        health = state.monitor.assess(
            snapshot=screen.snapshot_id,
            name=name,
            arguments=arguments,
            seconds=time.monotonic() - t0,
            grounds=state.grounds(goal, screen),
            tool_call=decision.tool is not None,
        )
        record["health"] = health.public()
        if (
            health.repetition < self.settings.health.threshold
            or health.grounding < self.settings.health.threshold
        ):
            await self._recover(n, name, health, state, result, record, t0)
            return screen  # not acted on: the model decides again with the reflection in its context
        if health.latency < self.settings.health.threshold:
            await self._reflect_on(
                result, n, "slow", health.signs, "the step was slow; acting on it anyway", state
            )
        state.low_steps = 0
        record |= {"tool": name, "arguments": shown_arguments(decision, arguments, screen)}
        if state.past_deadline():  # the decision came in at the cap's edge: nothing starts after it
            await self._capped(n, step_words(shown, screen, name), result, record, t0, caps, replace=False)
        state.monitor.acted(screen.snapshot_id, name, arguments)
        record["outcome"] = "acting"
        await self._record(result, n, record, t0)  # on disk before the call is made
        if state.progress is not None:  # the decision, before any question its call may ask
            why = f" - {shown.reasoning[:120]}" if shown.reasoning else ""
            await state.progress(
                n - 0.5,
                state.total,
                result.secrets.scrub(
                    f"step {n}: {step_words(shown, screen, name)} -> {name} "
                    f"{json.dumps(result.secrets.scrub(record['arguments']), ensure_ascii=False)[:300]}{why}"
                ),
            )
        asked_before = len(state.relay.asked) if state.relay is not None else 0
        outcome = await self._invoke(name, arguments, state)
        record["guard"] = "refused" if isinstance(outcome, Refused) else "allowed"
        record["decision_id"] = decision_id_of(outcome)  # the step's audit row
        if state.relay is not None and len(state.relay.asked) > asked_before:
            record["asked"] = state.relay.asked[asked_before:]
        if state.past_deadline() and not_acted(outcome):  # its answer came (or would have) after the cap
            await self._capped(n, step_words(shown, screen, name), result, record, t0, caps, replace=True)
        try:
            screen = await self._reflect(n, name, shown, outcome, screen, state, record)
        finally:  # a refusal stops the run, but the step's outcome is recorded first
            await self._record(result, n, record, t0, replace=True)
        self._check_failures(state)
        return screen

    async def _capped(
        self,
        n: int,
        what: str,
        result: RunResult,
        record: dict[str, Any],
        t0: float,
        caps: Caps,
        *,
        replace: bool,
    ) -> None:
        """The time cap passed before step ``n`` acted: recorded so, and the run stops."""
        record |= {"outcome": "time_cap", "summary": f"{what}: not done, the time cap had passed"}
        await self._record(result, n, record, t0, replace=replace)
        raise _Stop(
            "time_cap",
            f"stopped at the time cap of {caps.max_seconds:g} s: step {n} ({what}) did not act in time (the "
            "cap passed before it could start, while it waited for an answer, or while its call ran: a call "
            "cancelled so may have done part of its work)",
        )

    async def _recover(
        self,
        n: int,
        name: str,
        health: StepHealth,
        state: RunState,
        result: RunResult,
        record: dict[str, Any],
        t0: float,
    ) -> None:
        """A step scored below the threshold: reflect, then replan; stop when that did not help."""
        state.low_steps += 1
        signs = "; ".join(health.signs)
        if state.low_steps > self.settings.health.recoveries:
            record |= {"outcome": "stuck", "summary": f"not acted on ({signs}); recovery failed"}
            await self._record(result, n, record, t0)
            raise _Stop(
                "stuck",
                f"stuck at step {n}: {signs}; {self.settings.health.recoveries} recoveries "
                "(reflection, replan) did not help",
            )
        if state.low_steps == 1:
            kind = "reflection"
            text = (
                f"Reflection: the proposed {name} was not made ({signs}). Choose a different action that "
                "makes progress, using only values from the goal, the screen or earlier results."
            )
        else:
            kind = "replan"
            text = (
                f"Replan: the approach is not working ({signs}). Start again from the current screen with "
                "another way to reach the goal, or answer fail with the reason."
            )
            state.history = [f"(earlier steps folded: {len(state.history)} lines; the approach did not work)"]
        state.note(text)
        await self._reflect_on(result, n, kind, health.signs, text, state)
        record |= {
            "outcome": kind,
            "detail": signs[:RESULT_EXCERPT],
            "summary": f"not acted on: {kind} ({signs})",
        }
        await self._record(result, n, record, t0)

    async def _reflect_on(
        self, result: RunResult, n: int, kind: str, signs: list[str], text: str, state: RunState
    ) -> None:
        scrub = result.secrets.scrub
        reflection = await self.store.record_reflection(result.run_id, n, kind, scrub(signs), scrub(text))
        result.reflections.append(reflection)

    async def _scrub_kept(self, result: RunResult) -> None:
        """A password was just typed for the first time: out of what the run kept so far, on disk too."""
        scrub = result.secrets.scrub
        await self.store.scrub_run(result.run_id, scrub)
        result.goal, result.steps, result.reflections = scrub(result.goal), scrub(result.steps), scrub(
            result.reflections
        )

    async def _decide(
        self,
        goal: str,
        screen: Screen,
        state: RunState,
        tools: list[str],
        result: RunResult,
        deadline: float,
        caps: Caps,
    ) -> Decision:
        tool_text = f" Tools you may call: {', '.join(tools)}." if tools else ""
        prompt = f"Goal: {goal}\n\n{HOW}{tool_text}"
        request = ModelRequest(
            role="agent",
            system=SYSTEM,
            prompt=prompt[:1800],
            context=result.secrets.scrub(state.context(screen)),  # a screen showing a typed password back
            json_schema=decision_schema(screen, tools),
            max_tokens=self.settings.decision_tokens,
        )
        reply = None
        try:
            with anyio.move_on_after(max(1.0, deadline - time.monotonic())):
                reply = await self.backend.complete(request, lambda _msg: None)
        except ModelError as e:
            if e.input_refused:
                raise _Stop("refused", f"the model's input check refused the screen or goal: {e}") from None
            raise _ModelTrouble(f"model error: {e}") from None
        if reply is None:
            raise _Stop(
                "time_cap", f"stopped at the time cap of {caps.max_seconds:g} s (waiting for the model)"
            )
        result.tokens += reply.prompt_tokens + reply.completion_tokens
        if reply.model:
            result.model = reply.model
        return result.secrets.placed(parse_decision(  # and no typed password goes where it does not belong
            reply.json_data if reply.json_data is not None else reply.text, screen, set(tools)
        ), screen)

    async def _invoke(self, name: str, arguments: dict[str, Any], state: RunState) -> Completed | Refused:
        answers: dict[str, Any] = {}
        identity: str | None = None  # once asked: the tool the answers are for (CallRequest.identity)
        if state.relay is not None:  # what the call's server asks: Sentinel's own from the device only
            state.relay.asker = asker_of(self.port.identity_of(name), self.settings.device)
        for _ in range(MAX_ASK_ROUNDS):
            if state.past_deadline():  # (again after the person's answers): nothing starts after the cap
                return Refused(reason=f"{name}: the run's time cap passed before it could start")
            # the step runs as the run's caller: its principal's reach and consents, its front's origin (so
            # the
            # consent gate and the rulebases see who is really asking), questions to that caller only
            if not state.still_holds():  # nothing reaches the phone once its caller's credentials lapsed
                return Refused(reason=state.lapsed or LAPSED)
            refused_before = state.relay.refused if state.relay is not None else 0
            outcome = await state.before_deadline(self.port.invoke(
                name,
                arguments,
                session_id=state.session,
                client=f"agent:{state.principal}",
                origin=state.origin,
                answers=answers or None,
                link=state.relay,
                principal=state.principal,
                identity=identity,
                purpose=state.purpose,
                # and asked again by the gateway right before the call is sent
                recheck=state.credentials.check if state.credentials is not None else None,
            ))
            if outcome is None:  # still running at the cap: cancelled (what it did so far is not known)
                return Refused(reason=f"{name}: no answer before the run's time cap (the call was cancelled)")
            if isinstance(outcome, Completed) and refused_as_lapsed(outcome.result):  # (its row says so)
                state.lapsed, state.lapse_recorded = f"{LAPSED}: {result_text(outcome.result)[:600]}", True
                return Refused(reason=state.lapsed, decision_id=decision_id_of(outcome))
            if (
                state.relay is not None
                and state.relay.refused > refused_before
                and isinstance(outcome, Completed)
            ):
                # the tool asked the person mid-call and they could not be asked: nobody said yes
                return Refused(
                    reason=f"{name}: {result_text(outcome.result)[:300] or 'a question could not be asked'}"
                )
            if isinstance(outcome, Completed):  # what it read, for the trace (kept while the consent is)
                state.personal |= tool_kinds(self.port.find_tool(name), arguments)
                state.personal |= result_kinds(outcome.result)
            if not isinstance(outcome, NeedsInput):
                return outcome
            asked = await state.relay.answer(outcome.questions) if state.relay is not None else None
            if asked is None:
                return Refused(
                    reason=f"{outcome.reason} (the person behind this run cannot be asked, or gave no "
                    "answer in time)"
                )
            answers |= asked
            identity = outcome.identity or ""
        return Refused(reason=f"{name} is still blocked after the person's answers")

    async def _reflect(
        self,
        n: int,
        name: str,
        decision: Decision,
        outcome: Completed | Refused,
        screen: Screen,
        state: RunState,
        record: dict[str, Any],
    ) -> Screen:
        """What the step did, for the trace and the next prompt; stops the run on a refusal."""
        what = step_words(decision, screen, name)
        if isinstance(outcome, Refused) and state.lapsed is not None:
            record |= {"outcome": LAPSED, "detail": state.lapsed[:RESULT_EXCERPT],
                       "summary": f"{what}: not done"}
            raise _Stop(LAPSED, state.lapsed)
        if isinstance(outcome, Refused):
            record |= {
                "outcome": "refused",
                "detail": outcome.reason[:RESULT_EXCERPT],
                "summary": f"{what}: refused",
            }
            raise _Stop("refused", f"step {n} ({what}) was refused: {outcome.reason}")
        r = outcome.result
        data = r.structured_content if isinstance(r.structured_content, dict) else {}
        text = result_text(r)
        status = data.get("status")
        fresh = Screen.from_result(data) if decision.tool is None else None  # from screen actions only
        if r.is_error and status == "denied":
            record |= {"outcome": "refused", "detail": text[:RESULT_EXCERPT], "summary": f"{what}: refused"}
            raise _Stop("refused", f"step {n} ({what}) was refused: {first_line(text)[:300]}")
        if r.is_error and status == "stale":
            state.note(f"step {n}: {what} -> refused as stale; the screen had changed")
            record |= {"outcome": "stale", "summary": f"{what}: stale, screen re-read"}
            return fresh or await self._observe(state)
        if r.is_error:
            state.failures += 1
            state.note(f"step {n}: {what} -> error: {text[:200]}")
            record |= {"outcome": "error", "detail": text[:RESULT_EXCERPT], "summary": f"{what}: error"}
            return screen
        state.failures = 0
        after = fresh or await self._observe(state)
        if decision.tool is not None:
            state.result(name, text)
            state.seen(text[: RESULT_EXCERPT * 6])
        state.seen(after.describe())
        changed = "screen changed" if after.snapshot_id != screen.snapshot_id else "screen unchanged"
        state.note(f"step {n}: {what} -> done; {changed} (app {after.package or 'unknown'})")
        record |= {
            "outcome": "done",
            "summary": f"{what}: done, {changed}",
            "screen_after": after.snapshot_id,
        }
        return after

    async def _observe(self, state: RunState) -> Screen:
        screen_read = self.device_tool(ToolRef(self.settings.device, "screen_read"))
        outcome = await self._invoke(screen_read, {}, state)
        withheld = withheld_kinds(outcome.result if isinstance(outcome, Completed) else None)
        if withheld:  # an app holding personal data is in front: its consent is asked of the run's caller
            outcome = await self._invoke(screen_read, {"personal": withheld}, state)
        if isinstance(outcome, Refused) and state.lapsed is not None:
            raise _Stop(LAPSED, state.lapsed)
        if isinstance(outcome, Refused) and state.past_deadline():
            raise _Stop("time_cap", f"stopped at the time cap: the screen was not read ({outcome.reason})")
        if isinstance(outcome, Refused):
            raise _Stop("refused", f"reading the screen was refused: {outcome.reason}")
        screen = Screen.from_result(outcome.result.structured_content)
        if outcome.result.is_error or screen is None:
            raise _Stop("failed", f"the screen could not be read: {result_text(outcome.result)[:300]}")
        return screen

    async def _record(
        self, result: RunResult, n: int, record: dict[str, Any], t0: float, replace: bool = False
    ) -> None:
        record["seconds"] = round(time.monotonic() - t0, 3)
        if result.personal:
            record["personal"] = sorted(result.personal)
        record = result.secrets.scrub(record)  # a copy: the caller's record goes on being filled in
        await self.store.record_step(result.run_id, n, record)
        if replace and result.steps and result.steps[-1].get("n") == n:
            result.steps[-1] = {"n": n, **record}
        else:
            result.steps.append({"n": n, **record})

    def _check_failures(self, state: RunState) -> None:
        if state.failures >= self.settings.max_failures:
            raise _Stop(
                "failed",
                f"{state.failures} unusable answers or errors in a row; last: "
                f"{state.history[-1] if state.history else 'none'}",
            )
