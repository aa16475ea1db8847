"""The audit row of a built-in's work that its caller's credentials stopped (``core/caller_checks.py``).

A build started by a call runs on after the call answered; when the token that started it is rotated or its
certificate revoked, the build ends at its next step. The call's own rows are long written: this is the row
that says the work ended and why, with the outcome a call refused for it gets (``credentials_lapsed``)."""

from __future__ import annotations

from sentinel_mcp.core.display_text import safe_text
from sentinel_mcp.gateway.call_record import CallRecord
from sentinel_mcp.gateway.caller_recheck import OUTCOME
from sentinel_mcp.gateway.core import Gateway


def lapse_recorder(gateway: Gateway):  # type: ignore[no-untyped-def]
    """A ``LapseRecorder`` writing to ``gateway``'s audit log."""

    async def record(*, builtin: str, tool: str, principal: str, session: str, reason: str) -> None:
        rec = CallRecord(
            gateway.audit, gateway.guard.version, gateway.observers,
            session=safe_text(session, 200), client=f"builtin:{builtin}", origin="builtin", tool=tool,
            principal=principal, upstream=builtin,
        )
        # the row's outcome names the kind: "credentials_lapsed: the ..." in its text read to the redactor as
        # a secret's name and value ("[redacted] credentials this run..."), for builds and agent runs alike
        text = safe_text(reason.replace(f"{OUTCOME}: ", "", 1), 2000)
        await rec.final("deny", OUTCOME, reason=text, error=text)

    return record
