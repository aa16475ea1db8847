"""Answers that cannot count (no valid state, replayed, not asked, for a tool the name no longer routes to):
the refusal, audited before it leaves. Mixed into the ``Gateway`` (core.py), which owns the audit log, the
guard and the catalog.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sentinel_mcp.core.answer_validation import AnswerNotAccepted
from sentinel_mcp.core.decision import Guard, Origin, argument_digest
from sentinel_mcp.core.port import Refused
from sentinel_mcp.core.wire_limits import MAX_ARGUMENT_DEPTH, value_problem
from sentinel_mcp.gateway.audit import AuditLog
from sentinel_mcp.gateway.call_record import CallRecord, storage_refusal
from sentinel_mcp.gateway.upstream_manager import UpstreamManager
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.storage import StorageError


class AnswerRefusals:
    """A base of ``Gateway`` (which sets these attributes)."""

    audit: AuditLog
    guard: Guard
    observers: list[Any]
    manager: UpstreamManager

    if TYPE_CHECKING:  # the Gateway's own

        def principal_for(
            self, principal: Principal | str | None, session_id: str, origin: Origin
        ) -> Principal: ...

    async def refuse_answers(
        self,
        name: str,
        arguments: Any,
        *,
        session_id: str,
        client: str | None,
        origin: Origin,
        reason: str,
        principal: Principal | str | None = None,
    ) -> Refused:
        """Answers that cannot count (no valid state, replayed, not asked, ...): audited before the refusal
        leaves (redacted, like every row), nothing recorded. If even that cannot be written, the refusal says
        so."""
        args = (
            arguments
            if isinstance(arguments, dict) and value_problem(arguments, MAX_ARGUMENT_DEPTH) is None
            else None
        )
        who = self.principal_for(principal, session_id, origin)
        route = self.manager.catalog.route(name)
        sensitive = route.sensitive if route is not None else frozenset()
        rec = CallRecord(
            self.audit,
            self.guard.version,
            self.observers,
            session=session_id,
            client=client,
            origin=origin,
            tool=name,
            principal=who.name,
            arg_digest=argument_digest(args),
            arguments=args,
            sensitive=sensitive,
        )
        unblock = ["call the tool again; the user is asked afresh"]
        refusal = Refused(
            reason=f"the answer was not accepted: {reason}",
            decision_id=rec.decision_id,
            decision=AnswerNotAccepted(reason=reason, unmet=["answer_refused"], how_to_unblock=unblock),
        )
        try:
            await rec.final("deny", "answer_refused", reason=reason)
        except StorageError as e:
            return refusal.model_copy(
                update={"reason": f"{refusal.reason}; {storage_refusal(e)}", "decision_id": None}
            )
        return refusal

