"""The front's hook into the inbox: where a call that needs the user's answer waits when its client cannot
ask.

``Front.inbox`` is an ``InboxAsking`` when the console runs (``None`` otherwise: the front behaves as before).
- a client that cannot elicit: its questions go to the inbox; the call is held open (``hold_seconds``) while a
  console of that principal is open (or always, by config), and completes with the person's answer; otherwise
  it gets the structured blocked result at once, and the answer given later lets its retry pass;
- a 2026-era client that can elicit gets its ``InputRequiredResult`` as before; its questions are also shown
  in the inbox, and an answer there lets a fresh retry of the same call pass;
- a handshake-era client that can elicit is asked directly (nothing goes to the inbox).
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.console.approval_arguments import approval_arguments
from sentinel_mcp.console.inbox import Inbox
from sentinel_mcp.gateway import call_timings
from sentinel_mcp.core.decision import Answer
from sentinel_mcp.core.port import NeedsInput


class InboxAsking:
    def __init__(self, inbox: Inbox, gateway: Any) -> None:
        self.inbox = inbox
        self.gateway = gateway

    @property
    def hint(self) -> str:
        return self.inbox.hint

    def _shown(self, name: str, arguments: Any) -> Any:
        # what will run, but the tool's own secrets (approval_arguments): never the audit's scrubbed copy;
        # the tool through the port (exposed name or identity)
        return approval_arguments(self.gateway.find_tool(name), arguments)

    async def given(
        self, *, principal: str, session: str, name: str, arguments: Any, retry_kind: str | None,
        identity: str = "",
    ) -> dict[str, Answer]:
        """Answers the person gave in the console for this exact call (fresh calls only), once. ``identity``:
        the tool ``name`` routes to now (the front then lets the call reach that tool only)."""
        if retry_kind == "ask":  # the client answered itself
            self.inbox.settle_elsewhere(principal=principal, session=session, tool=name, arguments=arguments)
            return {}
        if retry_kind is not None:
            return {}
        return (
            await self.inbox.take(
                principal=principal,
                session=session,
                tool=name,
                arguments=arguments,
                version=_about(self.gateway.guard.version, identity),
            )
            or {}
        )

    async def needs_input(
        self,
        *,
        principal: str,
        session: str,
        client: str | None,
        name: str,
        arguments: Any,
        outcome: NeedsInput,
        client_asks: bool,
        modern: bool,
    ) -> dict[str, Answer] | None:
        """Post the call's questions; the person's answers when the call was held and they answered in time.
        """
        if client_asks and not modern:
            return None  # pushed to the client's own user
        kind = "retry" if client_asks else ("held" if self.inbox.should_hold(principal) else "blocked")
        version = _about(self.gateway.guard.version, outcome.identity or "")
        if kind != "held" and await self.inbox.open_elsewhere(
            principal=principal, session=session, tool=name, arguments=arguments, version=version
        ):
            return None  # asked on another replica and not answered yet: that question is this call's too
        item = self.inbox.post(
            principal=principal,
            session=session,
            client=client,
            tool=name,
            arguments=arguments,
            shown_arguments=self._shown(name, arguments),
            version=version,
            reason=outcome.reason,
            questions=outcome.questions,
            kind=kind,  # type: ignore[arg-type]
        )
        if kind != "held":
            return None
        asked = call_timings.now()
        given = await self.inbox.wait(item, self.inbox.hold_seconds)
        if given:
            call_timings.waited(call_timings.now() - asked)  # the decision it lets through carries the wait
        return given


def _about(version: str, identity: str) -> str:
    """The version part of an item's call key: the policy version, and the tool (by identity) its questions
    are about. The person answered about that tool; once the catalog routes the same name to another server's
    tool, the answer matches no call of it (the console shows the name, the key binds the tool)."""
    return f"{version}\x1f{identity}"
