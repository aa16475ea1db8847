"""The orchestrator: PLANNING -> EXECUTING -> VERIFYING -> COMPLETED, or FAILED from any state.

Steps run in plan order, one at a time. Caps are checked where the design says (wall clock before
each agent, model calls before each call, tokens after each call); breakers and the retry cap abort
the task; cancellation ends it FAILED with everything recorded so far kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from sentinel_mcp.swarm.agents.coder import answer_data, coder_request
from sentinel_mcp.swarm.agents.critic import (
    CriticReplyRefused,
    critic_request,
    deterministic_verdict,
    parse_critic_reply,
)
from sentinel_mcp.swarm.agents.planner import parse_planner_reply, planner_request
from sentinel_mcp.swarm.agents.verifier import parse_verifier_reply, verifier_request
from sentinel_mcp.swarm.backends.base import ModelBackend, ModelError, ModelReply, ModelRequest, extract_json
from sentinel_mcp.swarm.build_credentials import BuildCredentials, CredentialsLapsed, still_holds
from sentinel_mcp.swarm.breakers import (
    BreakerSettings,
    BreakerTripped,
    ConsecutiveFailureBreaker,
    ModelErrorBreaker,
)
from sentinel_mcp.swarm.checks import check_file, check_placeholders, check_project
from sentinel_mcp.swarm.feature_code.answers import Decisions, parse_answer, schema_issues
from sentinel_mcp.swarm.feature_code.render import render_step, texts_of, with_answer
from sentinel_mcp.swarm.feature_code.strings import all_strings, strings_xml
from sentinel_mcp.swarm.limits import Budget, LimitExceeded, Limits
from sentinel_mcp.swarm.messages import CriticVerdict, Issue
from sentinel_mcp.swarm.path_safety import UnsafePathError
from sentinel_mcp.swarm.plan import Plan, PlanError, PlanStep
from sentinel_mcp.swarm.scaffold import scaffold_file
from sentinel_mcp.swarm.spec import TaskSpec
from sentinel_mcp.swarm.state import TERMINAL_STATES, SwarmStore
from sentinel_mcp.swarm.toolchain import Toolchain
from sentinel_mcp.swarm.workspace import Workspace
from sentinel_mcp.core.display_text import safe_text
from sentinel_mcp.core.errors import SwarmError
from sentinel_mcp.core.utf8_text import utf8_prefix

log = logging.getLogger("sentinel.swarm")


class StepFailed(SwarmError):
    """A step was not accepted within its attempts."""


@dataclass(frozen=True)
class ProgressEvent:
    task_id: str
    state: str
    progress: float
    total: float | None
    message: str


ProgressSink = Callable[[ProgressEvent], Awaitable[None]]
MAX_REFUSED_PLAN_CHARS = 4000  # of a refused blueprint, kept for the audit
MAX_MODEL_NAME_CHARS = 80  # of the model name a backend reports, in each api_calls row
MAX_ERROR_CHARS = 2000  # of why a build failed
_ABORTS = (
    PlanError, LimitExceeded, BreakerTripped, StepFailed, UnsafePathError, ModelError, CredentialsLapsed
)


class Orchestrator:
    def __init__(self, *, task_id: str, spec: TaskSpec, store: SwarmStore, backend: ModelBackend,
                 workspace: Workspace, limits: Limits, breakers: BreakerSettings | None = None,
                 progress: ProgressSink | None = None, clock: Callable[[], float] = time.monotonic,
                 toolchain: Toolchain | None = None, coder_max_tokens: int = 512,
                 credentials: BuildCredentials | None = None) -> None:
        """``credentials``: the check of the request that started the build (``build_credentials.py``),
        asked before each step and model call."""
        self.task_id = task_id
        self.spec = spec
        self.store = store
        self.backend = backend
        self.workspace = workspace
        self.limits = limits
        breakers = breakers or BreakerSettings()
        self.budget = Budget(limits, clock)
        self.step_failures = ConsecutiveFailureBreaker(breakers.consecutive_failures)
        self.model_errors = ModelErrorBreaker(breakers.model_errors, breakers.error_window_seconds, clock)
        self._progress = progress
        self.toolchain = toolchain or Toolchain()
        self.coder_max_tokens = coder_max_tokens
        self.credentials = credentials
        self.lapsed: str | None = None  # why the build stopped, when its credentials stopped holding
        self.decisions: Decisions | None = None  # the blueprint and every accepted answer, once planned
        self.state = "PLANNING"
        self.warnings: list[str] = []
        self.completed: dict[str, str] = {}
        self._total: float | None = None
        self._plan_paths: dict[int, str] = {}
        self._done = 0.0

    # ---- the run -------------------------------------------------------------------------------------
    async def run(self) -> str:
        try:
            plan = await self._planning()
            await self._set_state("EXECUTING")
            for step in plan.steps:
                await self._execute(step)
            await self._set_state("VERIFYING")
            await self._verifying()
            await self._set_state("COMPLETED")
            await self._emit(f"completed: {len(self.completed)} files")  # where: the caller's own to say
        except asyncio.CancelledError:
            if self.state in TERMINAL_STATES:  # cancelled after it ended (reporting it): it stays as it ended
                raise
            # record the end even if cancelled again meanwhile: whoever awaits this task (close()) then
            # finds the store written, never half-way
            ending = asyncio.ensure_future(self._fail("cancelled"))
            while not ending.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(ending)
            raise
        except _ABORTS as e:
            await self._fail(str(e))
            if isinstance(e, CredentialsLapsed) and self.credentials is not None:
                self.lapsed = str(e)
                await self.credentials.record(self.task_id, self.lapsed)
        except Exception as e:  # a defect: the task still ends FAILED with its state kept
            log.exception("task %s: internal error", self.task_id)
            await self._fail(f"internal error: {type(e).__name__}: {e}")
        return self.state

    async def _planning(self) -> Plan:
        await self._emit("planning")
        reply = await self._call(planner_request(self.spec, self.limits.max_steps), None)
        try:
            blueprint, plan = parse_planner_reply(reply, self.spec, self.limits.max_steps)
        except PlanError:
            # keep what the planner said, so the audit shows why its plan was refused
            said: Any = reply.json_data
            if said is None:
                try:
                    said = extract_json(reply.text)
                except ValueError:
                    said = reply.text[:MAX_REFUSED_PLAN_CHARS]
            if len(json.dumps(said)) > MAX_REFUSED_PLAN_CHARS:  # the audit keeps its start, as for text
                said = json.dumps(said)[:MAX_REFUSED_PLAN_CHARS]
            await self.store.set_plan(self.task_id, {"blueprint": said, "steps": []})
            raise
        await self.store.set_plan(self.task_id, {"blueprint": blueprint.model_dump(), **plan.model_dump()})
        self.decisions = Decisions(self.spec, blueprint)
        self._plan_paths = {s.step_number: s.file_path for s in plan.steps}
        self._total = len(plan.steps) + 2
        self._done = 1
        model_steps = sum(1 for s in plan.steps if s.origin == "model")
        await self._emit(f"plan accepted: {len(plan.steps)} steps ({model_steps} by the model, "
                         f"{len(plan.steps) - model_steps} from the spec)")
        return plan

    async def _execute(self, step: PlanStep) -> None:
        still_holds(self.credentials)
        if step.origin == "scaffold":
            await self._scaffold(step)
            return
        assert self.decisions is not None
        feedback: list[Issue] | None = None
        attempts = self.limits.max_retries + 1
        last_reason = ""
        for attempt in range(1, attempts + 1):
            await self._emit(f"step {step.step_number}: {step.file_path} (attempt {attempt}/{attempts})")
            request = coder_request(step, self.decisions, feedback, self.coder_max_tokens)
            try:
                reply = await self._call(request, step.step_number)
            except ModelError as e:
                if e.status is not None and 400 <= e.status < 500 and e.status != 429:
                    raise  # a permanent refusal (bad key, bad request): retrying cannot help, abort
                last_reason = f"coder failed: {e}"
                await self._record(
                    step, attempt, "FAILED", [Issue(severity="BLOCKER", message=last_reason)], [], 0
                )
                self.step_failures.record_failure(f"step {step.step_number}: {last_reason}")
                continue
            try:
                data = answer_data(reply)
            except ValueError as e:
                last_reason = f"coder answer is not JSON ({e})"
                await self._record(
                    step, attempt, "FAILED", [Issue(severity="BLOCKER", message=last_reason)], [], 0
                )
                self.step_failures.record_failure(f"step {step.step_number}: {last_reason}")
                feedback = [Issue(severity="BLOCKER", message="answer with one JSON object only")]
                continue
            answer, issues = parse_answer(step, data, self.decisions)
            if answer is not None and request.json_schema is not None:
                issues += schema_issues(step, data, request.json_schema)
            if answer is not None:
                issues += [i for t in _texts(answer) for i in check_placeholders(t, step.file_path)]
            if answer is None or any(i.severity == "BLOCKER" for i in issues):
                # the answer itself is wrong (schema, references, uniqueness): no file, no critic call
                feedback = issues
                last_reason = "rejected: " + "; ".join(i.line() for i in issues)[:500]
                await self._record(step, attempt, "REJECTED", issues, [], 0)
                continue
            trial = with_answer(self.decisions, step, answer)
            content = render_step(step, trial)
            step_warnings: list[str] = []
            whole = content
            content = utf8_prefix(whole, self.limits.max_file_bytes)
            if content != whole:
                step_warnings.append(f"{step.file_path} truncated to {self.limits.max_file_bytes} bytes")
            verdict = await self._critique(step, content, trial)
            if verdict.warning:
                step_warnings.append(verdict.warning)
            if verdict.decision == "ACCEPT":
                self.workspace.write_file(step.file_path, content)  # path checked again here
                self.completed[step.file_path] = content
                self.decisions = trial
                self.warnings += step_warnings
                await self._record(
                    step, attempt, "ACCEPTED", verdict.issues, step_warnings, len(content.encode("utf-8")),
                    written=content,
                )
                self.step_failures.record_success()
                self._done += 1
                await self._emit(f"step {step.step_number} accepted: {step.file_path}")
                return
            feedback = verdict.issues or [Issue(severity="MAJOR", message="rejected without details")]
            last_reason = "rejected: " + "; ".join(i.line() for i in feedback)[:500]
            await self._record(
                step, attempt, "REJECTED", feedback, step_warnings, len(content.encode("utf-8"))
            )
        raise StepFailed(
            f"step {step.step_number} ({step.file_path}) not accepted after {attempts} attempts; "
            f"last: {last_reason}"
        )

    async def _scaffold(self, step: PlanStep) -> None:
        """A file that follows from the spec and the decisions so far: written and checked, no model call."""
        assert self.decisions is not None
        await self._emit(f"step {step.step_number}: {step.file_path} (from the spec)")
        content = scaffold_file(step, self.decisions)
        size = len(content.encode("utf-8"))
        if size > self.limits.max_file_bytes:
            # the cap holds for every file; cut, a file of the project's skeleton (a Gradle file, the
            # manifest, the string resources) would only be broken, and it has no model to try again
            await self._record(step, 1, "REJECTED", [], [], size)
            raise StepFailed(
                f"step {step.step_number} ({step.file_path}), written from the spec, is {size} bytes: over "
                f"max_file_bytes ({self.limits.max_file_bytes})"
            )
        findings = await self._findings(step, content, self.decisions)
        if any(i.severity == "BLOCKER" for i in findings):
            await self._record(step, 1, "REJECTED", findings, [], size)
            raise StepFailed(
                f"step {step.step_number} ({step.file_path}), written from the spec, fails its checks: "
                + "; ".join(i.line() for i in findings)[:500]
            )
        self.workspace.write_file(step.file_path, content)
        self.completed[step.file_path] = content
        await self._record(step, 1, "ACCEPTED", findings, [], size, written=content)
        self._done += 1
        await self._emit(f"step {step.step_number} written: {step.file_path}")

    async def _findings(self, step: PlanStep, content: str, d: Decisions) -> list[Issue]:
        """Deterministic checks of one file, then the real tools where this machine has them."""
        findings = check_file(step.file_path, step.file_type, content)
        if any(i.severity == "BLOCKER" for i in findings):
            return findings
        # the tools run within the build's wall clock too (a hung tool is stopped at the cap, not at its own
        # timeout); the cap is then looked at before the file goes on
        left = self.budget.wall_seconds_left
        if step.file_path.endswith((".kt", ".kts")):
            if step.origin == "model":  # Kotlin written from the spec is parsed with the whole project
                findings += (await self.toolchain.check_kotlin({step.file_path: content}, within=left)).issues
        elif step.file_path.endswith(".xml"):
            files = {**self.completed, step.file_path: content}
            if step.kind != "strings":  # layouts name texts that strings.xml gets at its own step
                files["app/src/main/res/values/strings.xml"] = _strings_xml(d)
            findings += (
                await self.toolchain.check_resources(
                    files,
                    self.spec.package_name,
                    min_sdk=self.spec.min_sdk,
                    target_sdk=self.spec.target_sdk,
                    within=left,
                )
            ).issues
        self.budget.check_wall_clock()
        return findings

    async def _critique(self, step: PlanStep, content: str, trial: Decisions) -> CriticVerdict:
        findings = await self._findings(step, content, trial)
        verdict = deterministic_verdict(findings)
        if verdict is not None:
            return verdict
        try:
            reply = await self._call(
                critic_request(self.spec, step, content, findings, texts_of(step, trial)), step.step_number
            )
            return parse_critic_reply(reply)
        except (LimitExceeded, BreakerTripped, CredentialsLapsed):  # never failed open: the build stops
            raise
        except CriticReplyRefused as e:  # its JSON was there, but not one verdict: not a crash, no fail-open
            refusal = Issue(severity="BLOCKER", file=step.file_path, message=str(e)[:400])
            return CriticVerdict(decision="REJECT", issues=[*findings, refusal])
        except ModelError as e:
            if e.input_refused:  # the content itself was refused: failing open would let it through
                refusal = Issue(
                    severity="BLOCKER",
                    file=step.file_path,
                    message=f"the file could not be reviewed: {str(e)[:400]}",
                )
                return CriticVerdict(decision="REJECT", issues=[*findings, refusal])
            return self._fail_open(step, e, findings)
        except Exception as e:  # noqa: BLE001 - any critic crash fails open, as designed
            return self._fail_open(step, e, findings)

    def _fail_open(self, step: PlanStep, e: Exception, findings: list[Issue]) -> CriticVerdict:
        why = (
            f"critic failed on step {step.step_number} ({type(e).__name__}: {str(e)[:200]}); "
            "accepted without review (fail-open)"
        )
        log.warning("task %s: %s", self.task_id, why)
        return CriticVerdict(decision="ACCEPT", issues=findings, warning=why)

    async def _verifying(self) -> None:
        still_holds(self.credentials)
        await self._emit("verifying")
        files = dict(self.completed)
        findings = check_project(files, self.spec.package_name)
        # within the wall clock, as the verifier's call: past the cap they are not run (the report says so)
        kotlin = await self.toolchain.check_kotlin(files, style=True, within=self.budget.wall_seconds_left)
        resources = await self.toolchain.check_resources(
            files,
            self.spec.package_name,
            min_sdk=self.spec.min_sdk,
            target_sdk=self.spec.target_sdk,
            within=self.budget.wall_seconds_left,
        )
        findings += kotlin.issues + resources.issues
        report: dict = {
            "checks": [i.model_dump() for i in findings],
            "verifier": None,
            "verifier_error": None,
            "tools": self.toolchain.describe() + kotlin.notes + resources.notes,
        }
        if self.spec.architecture != "MVVM":
            self.warnings.append(
                f"the spec asks for {self.spec.architecture}; the generated code is MVVM "
                "(the only architecture the swarm renders)"
            )
        try:
            reply = await self._call(verifier_request(self.spec, files, findings), None)
            report["verifier"] = parse_verifier_reply(reply).model_dump()
        # advisory only: every file is accepted by now, so nothing it meets can fail the task. A cap it
        # would exceed is still honoured: the call is not made (or its result is not used).
        except (ModelError, ValueError, ValidationError, LimitExceeded, BreakerTripped) as e:
            why = f"verifier failed ({type(e).__name__}: {str(e)[:200]}); completing without its report"
            log.warning("task %s: %s", self.task_id, why)
            report["verifier_error"] = why
            self.warnings.append(why)
        await self.store.set_report(self.task_id, report)
        await self._save_counters()
        self._done = self._total or self._done

    # ---- model calls, caps, breakers ------------------------------------------------------------------
    async def _call(self, request: ModelRequest, step_number: int | None) -> ModelReply:
        still_holds(self.credentials)  # first: a lapsed caller's call is neither made nor counted
        self.budget.check_wall_clock()
        self.budget.before_model_call()
        started = time.monotonic()
        errors: list[str] = []

        def on_error(why: str) -> None:
            errors.append(why)
            self.model_errors.record_error(why)  # may raise BreakerTripped: the call ends there

        try:
            # the cap holds while the call runs too: nothing else bounds a client's model asked by sampling
            try:
                reply = await asyncio.wait_for(
                    self.backend.complete(request, on_error), self.budget.wall_seconds_left
                )
            except asyncio.TimeoutError:
                raise self.budget.wall_clock_reached() from None
        except BaseException as e:
            await asyncio.shield(
                self.store.record_api_call(
                    self.task_id,
                    step_number=step_number,
                    role=request.role,
                    backend=self.backend.name,
                    model="",
                    status="ERROR",
                    attempts=max(1, len(errors)),
                    prompt_tokens=0,
                    completion_tokens=0,
                    duration_ms=int((time.monotonic() - started) * 1000),
                    error=f"{type(e).__name__}: {e}"[:500]
                    if not isinstance(e, asyncio.CancelledError)
                    else "cancelled",
                )
            )
            await asyncio.shield(self._save_counters())
            raise
        log.debug(
            "task %s: %s call (step %s) %d+%d tokens in %d ms: %s",
            self.task_id,
            request.role,
            step_number,
            reply.prompt_tokens,
            reply.completion_tokens,
            int((time.monotonic() - started) * 1000),
            reply.text[:2000],
        )
        await self.store.record_api_call(
            self.task_id,
            step_number=step_number,
            role=request.role,
            backend=self.backend.name,
            model=safe_text(reply.model, MAX_MODEL_NAME_CHARS),  # the backend's (a client's) to write
            status="OK",
            attempts=reply.attempts,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            duration_ms=int((time.monotonic() - started) * 1000),
            error="; ".join(errors)[:500] or None,
        )
        try:
            self.budget.after_model_call(reply.prompt_tokens, reply.completion_tokens)
        finally:
            await self._save_counters()
        return reply

    # ---- bookkeeping ---------------------------------------------------------------------------------
    def _dependency_paths(self, step: PlanStep) -> list[str]:
        paths = (self._plan_paths.get(d) for d in step.dependencies)
        return [p for p in paths if p is not None and p in self.completed]

    async def _record(
        self, step: PlanStep, attempt: int, status: str, issues: list[Issue], warnings: list[str], size: int,
        *, written: str | None = None,
    ) -> None:
        """``written``: the file an ACCEPTED step wrote; its SHA-256 is kept with the step."""
        digest = hashlib.sha256(written.encode("utf-8")).hexdigest() if written is not None else None
        await self.store.record_step(
            self.task_id,
            step.step_number,
            attempt,
            step.file_path,
            status,
            [i.model_dump() for i in issues],
            warnings,
            size,
            digest,
        )

    async def _save_counters(self) -> None:
        await self.store.set_counters(
            self.task_id,
            self.budget.model_calls,
            self.budget.prompt_tokens,
            self.budget.completion_tokens,
            self.warnings,
        )

    async def _set_state(self, state: str) -> None:
        self.state = state
        # written whole even when a cancel lands meanwhile: the state said here is the one the store holds
        await asyncio.shield(self.store.set_state(self.task_id, state))

    async def _fail(self, reason: str) -> None:
        # a model error quotes the backend (a client's refusal, an endpoint's message): bounded, shown safely
        reason = safe_text(reason, MAX_ERROR_CHARS, keep_newlines=True)
        self.state = "FAILED"
        log.warning("task %s FAILED: %s", self.task_id, reason)
        try:
            await self._save_counters()
            await self.store.set_state(self.task_id, "FAILED", error=reason)
        finally:
            await self._emit(f"failed: {reason}")

    async def _emit(self, message: str) -> None:
        log.info("task %s [%s] %s", self.task_id, self.state, message)
        if self._progress is None:
            return
        try:
            await self._progress(ProgressEvent(self.task_id, self.state, self._done, self._total, message))
        except Exception:  # a listener that fails must not fail the build
            log.debug("progress listener failed", exc_info=True)


def _texts(value: object) -> list[str]:
    """Every text in a model answer (its texts become string resources; names are patterns already)."""
    if hasattr(value, "model_dump"):
        value = value.model_dump()  # type: ignore[union-attr]
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


def _strings_xml(d: Decisions) -> str:
    return strings_xml(all_strings(d))
