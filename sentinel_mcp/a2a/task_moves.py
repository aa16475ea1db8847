"""A task's moves: started (WORKING), its guarded call run through the gateway port, and settled with the
outcome (COMPLETED with an artifact, INPUT_REQUIRED with the questions, REJECTED or FAILED), committed to the
journal before a peer can see it, then announced to its streams. Mixed into ``A2AService`` (service.py).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from sentinel_mcp.a2a import actions
from sentinel_mcp.a2a.actions import GuardedCall
from sentinel_mcp.a2a.offer_contexts import OffersUnavailable
from sentinel_mcp.a2a.on_behalf import asking_principal
from sentinel_mcp.a2a.protocol import Artifact, Message, Part, Task, TaskStatus, now_iso
from sentinel_mcp.a2a.task_events import TaskEvents
from sentinel_mcp.a2a.task_host import TaskHost
from sentinel_mcp.a2a.task_journal import LeaseLost
from sentinel_mcp.identity.credential_stamp import stamp_from
from sentinel_mcp.a2a.task_store import PendingCall, TaskRecord
from sentinel_mcp.core import process_clock
from sentinel_mcp.core.decision import Answer
from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.core.port import Completed, InvokeOutcome, NeedsInput
from sentinel_mcp.storage import StorageError

log = logging.getLogger("sentinel_mcp.a2a.service")


class TaskMoves(TaskHost):
    events: TaskEvents
    _degraded: dict[str, str]  # task id -> why it ran alone (an orchestrator that could not be reached)

    def _start(
        self, record: TaskRecord, call: GuardedCall, answers: dict[str, Answer] | None,
        identity: str | None = None,
    ) -> None:
        """``identity``: with answers, the tool they were asked about (``PendingCall.identity``)."""
        self._set_status(record, "TASK_STATE_WORKING", None)
        record.runner = asyncio.create_task(
            self._run(record, call, answers, identity), name=f"a2a-task-{record.task.id}"
        )

    async def _run(
        self, record: TaskRecord, call: GuardedCall, answers: dict[str, Answer] | None,
        identity: str | None = None,
    ) -> None:
        try:
            # an orchestrator's sub-task serving a peer's intent is the peer's call, and the orchestrator's
            try:
                offers = self.peers.offers if self.peers else None
                asking = await asking_principal(self.settings.orchestrator_principal, record.owner,
                                                record.task.context_id, offers)
            except OffersUnavailable as e:  # whose it is unknown: never run on the orchestrator's grants
                await self._settle(record, "TASK_STATE_REJECTED", compose("a sub-task refused: ", str(e)))
                return
            if asking is not None:
                refused = await self.port.refusal_for(
                    record.owner, call.tool, call.arguments, session_id=record.session_id
                )
                if refused is not None:
                    why = compose("a sub-task for ", safe_text(asking, 100), "'s intent: ", refused)
                    await self._settle(record, "TASK_STATE_REJECTED", why)
                    return
            outcome = await self.port.invoke(
                call.tool,
                call.arguments,
                session_id=record.session_id,
                client=record.owner,
                origin="a2a",
                answers=answers,
                principal=asking or record.owner,
                identity=identity,
                recheck=record.recheck,  # it runs on after its request: sent only while that caller holds
            )
            await self._apply(record, call, outcome)
        except asyncio.CancelledError:
            record.pending = None
            await self._settle(record, "TASK_STATE_CANCELED", "canceled by the client")
            raise
        except Exception as e:  # the peer gets a failed task, never a dead server
            log.exception("A2A task %s: %s failed", record.task.id, call.tool)
            await self._settle(
                record, "TASK_STATE_FAILED", f"internal error while calling {call.tool}: {type(e).__name__}"
            )

    async def _apply(self, record: TaskRecord, call: GuardedCall, outcome: InvokeOutcome) -> None:
        task = record.task
        decided = _decision_meta(
            outcome
        )  # the gateway's audit record of this decision, for the peer to quote
        if isinstance(outcome, Completed):
            result = outcome.result
            if result.is_error:
                text = actions.result_text(result) or "the tool reported an error"
                await self._settle(record, "TASK_STATE_FAILED", f"{call.tool}: {text}", metadata=decided)
                return
            task_result = actions.task_result_of(task.id, call, result)
            artifact_id = f"{task.id}-result-{len(task.artifacts or []) + 1}"
            parts = actions.result_parts(task_result, result)
            degraded = self._degraded.pop(task.id, None)
            if degraded is not None:  # it says it ran alone, and why
                parts += [
                    Part.of_data({"type": "execution", "mode": "degraded", "reason": degraded}),
                    Part.of_text(f"ran locally in degraded mode: {degraded}"),
                ]
            artifact = Artifact(
                artifact_id=artifact_id,
                name=call.kind,
                description=f"result of {call.tool}",
                parts=parts,
                metadata=decided,
            )
            # committed with the artifact before anyone can see it COMPLETED (a restart keeps what was
            # reported)
            await self._settle(
                record, "TASK_STATE_COMPLETED", f"{call.tool} completed", artifact=artifact, metadata=decided
            )
        elif isinstance(outcome, NeedsInput):
            record.pending = PendingCall(
                call.tool, call.arguments, [q.key for q in outcome.questions], call.kind,
                outcome.identity or "",
                credential=stamp_from(record.recheck),  # proved again wherever it resumes
            )
            parts = actions.input_request_parts(
                self.settings.name, task.context_id, outcome.reason, outcome.questions
            )
            await self._settle(record, "TASK_STATE_INPUT_REQUIRED", parts=parts, metadata=decided)
        else:  # Refused: a guard's Deny is a rejection; anything else (unknown tool, bad args) a failure
            state = "TASK_STATE_REJECTED" if outcome.decision is not None else "TASK_STATE_FAILED"
            reason = outcome.reason
            if outcome.decision is not None and outcome.decision.how_to_unblock:
                reason += " (to unblock: " + "; ".join(outcome.decision.how_to_unblock) + ")"
            await self._settle(record, state, reason, metadata=decided)

    async def _settle(
        self,
        record: TaskRecord,
        state: str,
        text: str | None = None,
        parts: list[Part] | None = None,
        artifact: Artifact | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Move to a state a peer may act on: committed to the journal first, then visible and announced."""
        task = record.task
        message = _agent_message(task, text, parts, metadata)
        history = [*(task.history or []), message] if message else task.history
        artifacts = [*(task.artifacts or []), artifact] if artifact else task.artifacts
        status = TaskStatus(state=state, message=message, timestamp=now_iso())  # type: ignore[arg-type]
        journal = self.store.journal
        if journal is not None and self.store.holds(record):
            try:
                await journal.commit(
                    record,
                    task.model_copy(update={"history": history, "status": status, "artifacts": artifacts}),
                )
            except StorageError as e:  # not recorded: say so rather than report a state that may not survive
                if isinstance(e, LeaseLost):  # another replica ended it: the store keeps its reason
                    self.store.drop(task.id)
                log.error("A2A task %s: could not record %s: %s", task.id, state, e)
                fail = Message(
                    message_id=str(uuid.uuid4()),
                    context_id=task.context_id,
                    task_id=task.id,
                    role="ROLE_AGENT",
                    parts=[
                        # (the store's words name its server or path: they stay in the log above)
                        Part.of_text("the result could not be recorded (the task store failed)")
                    ],
                )
                history, artifacts = [*(task.history or []), fail], task.artifacts
                status = TaskStatus(state="TASK_STATE_FAILED", message=fail, timestamp=now_iso())
                artifact = None
        task.history, task.artifacts, task.status = history, artifacts, status
        record.status_clock = (status.timestamp, process_clock.now())
        if artifact is not None:
            self.events.publish(
                task.id,
                {
                    "artifactUpdate": {
                        "taskId": task.id,
                        "contextId": task.context_id,
                        "artifact": artifact.to_wire(),
                        "append": False,
                        "lastChunk": True,
                    }
                },
            )
        self._announce_status(task)

    def _set_status(
        self, record: TaskRecord, state: str, text: str | None = None, parts: list[Part] | None = None
    ) -> None:
        task = record.task
        message = _agent_message(task, text, parts)
        if message is not None:
            task.history = [*(task.history or []), message]
        task.status = TaskStatus(state=state, message=message, timestamp=now_iso())  # type: ignore[arg-type]
        record.status_clock = (task.status.timestamp, process_clock.now())
        self.store.saved(record)
        self._announce_status(task)

    def _announce_status(self, task: Task) -> None:
        self.events.publish(
            task.id,
            {
                "statusUpdate": {
                    "taskId": task.id,
                    "contextId": task.context_id,
                    "status": task.status.to_wire(),
                }
            },
        )


DECISION_META = "sentinel/decision_id"  # as in an MCP result's ``_meta``


def _decision_meta(outcome: InvokeOutcome) -> dict[str, Any] | None:
    """``{"sentinel/decision_id": id}`` when the outcome went through a decision (Sentinel's own word: the
    gateway stamped it and dropped any upstream's claim to it)."""
    if isinstance(outcome, Completed):
        found = (outcome.result.meta or {}).get(DECISION_META)
    else:
        found = outcome.decision_id
    return {DECISION_META: found} if isinstance(found, str) and found else None


def _agent_message(
    task: Task, text: str | None, parts: list[Part] | None, metadata: dict[str, Any] | None = None
) -> Message | None:
    """The agent's message a new status carries (its text made safe: a person may read it), if any."""
    if not (text or parts):
        return None
    shown = safe_text(text or "", actions.MAX_TEXT, keep_newlines=True)
    return Message(
        message_id=str(uuid.uuid4()),
        context_id=task.context_id,
        task_id=task.id,
        role="ROLE_AGENT",
        parts=parts or [Part.of_text(shown)],
        metadata=metadata,
    )
