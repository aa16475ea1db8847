"""The gateway's ``person_inbox`` (see ``gateway/person_inbox.py``): a question no caller can be asked waits
in
the console inbox of the person it is for, for ``sentinel.console.ask_seconds``; then it is withdrawn (a late
answer lets nothing pass) and the call is refused."""

from __future__ import annotations

from typing import Any

from sentinel_mcp.console.approval_arguments import approval_arguments
from sentinel_mcp.console.inbox import Inbox
from sentinel_mcp.core.decision import Answer
from sentinel_mcp.gateway.person_inbox import PersonQuestion


class PersonQuestions:
    def __init__(self, inbox: Inbox, gateway: Any, wait_seconds: float) -> None:
        self.inbox = inbox
        self.gateway = gateway
        self.wait_seconds = wait_seconds

    def _shown(self, name: str, arguments: Any) -> Any:
        # what will run, but the tool's own secrets (approval_arguments): never the audit's scrubbed copy;
        # the tool through the port (exposed name or identity)
        return approval_arguments(self.gateway.find_tool(name), arguments)

    async def ask(self, asked: PersonQuestion) -> dict[str, Answer] | None:
        if self.wait_seconds <= 0:
            return None
        person, caller = asked.person, asked.caller
        who = caller if caller == person else f"{caller} ({asked.origin})"
        note = (
            f"{asked.reason}. Asked for {who}, who cannot be asked directly; the call waits "
            f"{self.wait_seconds:g} s for your answer here, then it is refused."
        )
        item = self.inbox.post(
            principal=person,
            session=asked.session,
            client=asked.client,
            tool=asked.tool,
            arguments=asked.arguments,
            shown_arguments=self._shown(asked.tool, asked.arguments),
            version=self.gateway.guard.version,
            reason=note,
            questions=asked.questions,
            kind="waiting",
            asker=caller,  # counted against the caller's own bound in the person's inbox
        )
        answers = await self.inbox.wait(item, self.wait_seconds, withdraw=True)
        # provenance user whatever was sent: it was given in the person's own signed-in console
        return (
            {k: a.model_copy(update={"provenance": "user"}) for k, a in answers.items()} if answers else None
        )
