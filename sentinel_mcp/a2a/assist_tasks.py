"""Other agents asking Sentinel's person for help: the A2A service's side of the assist inbox.

A peer's HumanAssistRequest is kept in the inbox (``assist_inbox.py``) under the principal that sent it; its
task
works until the person replies (in ``sentinel-mcp chat`` or the console), then completes with the reply.
"""

from __future__ import annotations

import asyncio

from sentinel_mcp.a2a import actions
from sentinel_mcp.a2a.actions import AssistRequest
from sentinel_mcp.a2a.assist_inbox import AssistInbox, InboxFull
from sentinel_mcp.a2a.protocol import Artifact, Part
from sentinel_mcp.a2a.task_host import TaskHost
from sentinel_mcp.a2a.task_store import TaskRecord
from sentinel_mcp.core.display_text import safe_text

ASSIST_POLL_SECONDS = 0.5
ASSIST_WAIT_SECONDS = 3600.0  # a help request nobody answered within the hour ends FAILED


class PersonAssist(TaskHost):
    """Mixed into ``A2AService`` (uses its ``_settle`` and ``_set_status``)."""

    inbox: AssistInbox | None

    async def _start_assist(self, record: TaskRecord, action: AssistRequest, caller: str) -> None:
        """Keep the request for the person; the task works (waits) until they reply, then carries the reply.
        """
        if self.inbox is None:
            await self._settle(
                record, "TASK_STATE_REJECTED", "no person can be reached here (no assist inbox)"
            )
            return
        har = action.request
        try:  # the requester is who authenticated, whatever agent_id it claims
            request_id = await asyncio.to_thread(
                self.inbox.add,
                from_agent=caller,
                reason=har.reason,  # the peer's text alone: Sentinel's attribution is shown apart from it
                says_agent=har.agent_id,
                questions=har.suggested_questions,
                context=har.context_handle,
                task_id=record.task.id,
            )
        except InboxFull as e:
            await self._settle(record, "TASK_STATE_REJECTED", str(e))
            return
        self._set_status(
            record, "TASK_STATE_WORKING", f"waiting for the person's reply (request {request_id})"
        )
        record.runner = asyncio.create_task(
            self._await_reply(record, request_id), name=f"a2a-assist-{request_id}"
        )

    async def _await_reply(self, record: TaskRecord, request_id: str) -> None:
        assert self.inbox is not None
        loop = asyncio.get_running_loop()
        end = loop.time() + ASSIST_WAIT_SECONDS
        try:
            while loop.time() < end:
                row = await asyncio.to_thread(self.inbox.get, request_id)
                if row is not None and row["status"] == "answered":
                    reply = row["reply"] or ""
                    artifact = Artifact(
                        artifact_id=f"{record.task.id}-reply",
                        name="human_reply",
                        description="the person's reply to the help request",
                        parts=[
                            Part.of_data(
                                {
                                    "type": "human_reply",
                                    "request_id": request_id,
                                    "reply": reply,
                                    "replied_at": row["replied_at"],
                                }
                            ),
                            Part.of_text(safe_text(reply, actions.MAX_TEXT, keep_newlines=True)),
                        ],
                    )
                    await self._settle(
                        record, "TASK_STATE_COMPLETED", "the person replied", artifact=artifact
                    )
                    await asyncio.to_thread(self.inbox.delivered, request_id)
                    return
                await asyncio.sleep(ASSIST_POLL_SECONDS)
            await asyncio.to_thread(self.inbox.close, request_id)
            await self._settle(record, "TASK_STATE_FAILED", "nobody replied to the help request in time")
        except asyncio.CancelledError:
            await asyncio.shield(asyncio.to_thread(self.inbox.close, request_id, "canceled"))
            await self._settle(record, "TASK_STATE_CANCELED", "canceled by the client")
            raise
