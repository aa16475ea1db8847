"""Orchestrator first, local when alone: the A2A service's side of offering intents (``orchestrator.py`` is
the
exchange itself). A free-form intent from a peer is offered through the guarded ``a2a__a2a_offer``; when the
orchestrator does not take it, the local loop runs it and the result says it ran degraded.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from sentinel_mcp.a2a import actions
from sentinel_mcp.a2a.actions import GuardedCall
from sentinel_mcp.a2a.protocol import Artifact, Part
from sentinel_mcp.a2a.task_host import TaskHost
from sentinel_mcp.a2a.task_store import TaskRecord
from sentinel_mcp.core.port import Completed
from sentinel_mcp.core.tool_ref import ToolRef, exposed_name

log = logging.getLogger(__name__)
# the a2a built-in's: the offer to the orchestrator is a guarded call too (by the name the catalog gives it)
OFFER_TOOL = ToolRef("a2a", "a2a_offer")
OFFERED_KINDS = (
    "task_offer",
    "chat",
)  # free-form intents; sensor requests and tool calls are local by nature
# offers waiting at once; beyond it an intent runs locally: an orchestrator that sends each offer back as a
# new
# intent (not as its principal) would otherwise nest offers until the timeouts unwind them
MAX_OFFERS_IN_FLIGHT = 4


class OrchestratorFirst(TaskHost):
    """Mixed into ``A2AService`` (uses its ``port``, ``settings``, ``peers``, ``_run``, ``_settle``)."""

    _degraded: dict[str, str]

    _offering: set[str]

    def _start_offer(self, record: TaskRecord, action: GuardedCall) -> None:
        self._offering.add(record.task.id)  # counted now: the next intent's check must see it
        self._set_status(record, "TASK_STATE_WORKING", None)
        record.runner = asyncio.create_task(
            self._run_offer(record, action), name=f"a2a-offer-{record.task.id}"
        )

    def _discovered_orchestrator(self) -> str | None:
        if not self.settings.orchestrator_discover or self.peers is None:
            return None
        from sentinel_mcp.a2a.orchestrator import orchestrator_rpc

        return orchestrator_rpc(self.settings, self.peers)

    def _offers(self, action: GuardedCall, caller: str) -> bool:
        """A free-form intent goes to the orchestrator first, unless the orchestrator itself sent it (a
        sub-task
        assigned back: it runs here, through the guarded loop, and is never offered back)."""
        if action.kind not in OFFERED_KINDS or caller == self.settings.orchestrator_principal:
            return False
        if not (self.settings.orchestrator_url or self.settings.orchestrator_discover):
            return False
        if len(self._offering) >= MAX_OFFERS_IN_FLIGHT:
            log.warning(
                "A2A: %d offers already wait for the orchestrator; running this intent locally",
                len(self._offering),
            )
            return False
        return OFFER_TOOL.resolve(self.port) is not None

    async def _run_offer(self, record: TaskRecord, call: GuardedCall) -> None:
        intent = str(call.arguments.get("goal") or call.arguments.get("prompt") or "")
        reason = ""
        try:
            # what Sentinel can do for this peer: the tools its grants reach, not the whole catalog (the
            # orchestrator planned with tools the peer may not use, and could name to it tools hidden from it)
            asker = self.port.principal_for(record.owner, record.session_id, "a2a")
            outcome = await self.port.invoke(
                exposed_name(OFFER_TOOL, self.port) or OFFER_TOOL.identity,
                {
                    "intent": intent,
                    "intent_id": record.task.id,
                    "tools": [t.name for t in self.port.list_catalog_tools(asker)],
                },
                session_id=record.session_id,
                client=record.owner,
                origin="a2a",
                principal=record.owner,
                recheck=record.recheck,
            )
            if isinstance(outcome, Completed) and not outcome.result.is_error:
                data = outcome.result.structured_content or {}
                data = data.get("result", data) if isinstance(data, dict) else {}
                if data.get("taken") is True:
                    await self._settle_orchestrated(record, data)
                    return
                reason = str(data.get("reason") or "the orchestrator did not take the task")
            elif isinstance(outcome, Completed):
                reason = f"the offer failed: {actions.result_text(outcome.result)[:300]}"
            else:  # the guard did not let the offer go out (or wants a confirmation nobody here can give)
                reason = f"the offer was not allowed: {outcome.reason}"
        except asyncio.CancelledError:
            await self._settle(record, "TASK_STATE_CANCELED", "canceled by the client")
            raise
        except Exception as e:  # noqa: BLE001 - an offer that breaks is a decline: the local loop runs it
            log.warning("A2A task %s: the offer to the orchestrator failed", record.task.id, exc_info=True)
            reason = f"the offer failed: {type(e).__name__}"
        finally:
            self._offering.discard(record.task.id)
        if len(self._degraded) > self.settings.max_tasks:
            self._degraded.pop(next(iter(self._degraded)))
        self._degraded[record.task.id] = reason
        self._set_status(record, "TASK_STATE_WORKING", f"degraded mode: {reason}; running it locally")
        await self._run(record, call, None)

    async def _settle_orchestrated(self, record: TaskRecord, data: dict[str, Any]) -> None:
        """The orchestrator's result, relayed as data marked as another agent's (never acted on here)."""
        task = record.task
        # the peer reads who took its intent, never where the orchestrator is (its URL is this agent's own)
        relayed = {
            "type": "relayed",
            "from_agent": "orchestrator",
            "task_id": data.get("task_id"),
            "artifacts": data.get("artifacts") or [],
        }
        note = {"type": "execution", "mode": "orchestrated"}
        artifact = Artifact(
            artifact_id=f"{task.id}-result-{len(task.artifacts or []) + 1}",
            name="orchestrated",
            description="the orchestrator's result (another agent's data)",
            parts=[Part.of_data(note), Part.of_data(relayed)],
        )
        await self._settle(
            record, "TASK_STATE_COMPLETED", "the orchestrator took the task", artifact=artifact
        )
