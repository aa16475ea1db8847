"""The observe step of the gateway's pipeline (``core.py``), and how a call's outcome is written: an
untrusted source's result marked, the guard learning from it while the outcome row is committed
(``_observe``); a call sent whose result never came told to the guard as an unknown outcome
(``_outcome_unknown``); the outcome on disk before the answer leaves, or the answer saying it could not be
(``_done``, the end of every step that forwarded).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import anyio
from mcp.types import CallToolResult, TextContent

from sentinel_mcp.config import Config
from sentinel_mcp.core.decision import Allow, Decision, Guard, ToolCall
from sentinel_mcp.core.port import Completed
from sentinel_mcp.gateway.call_record import CallRecord
from sentinel_mcp.gateway.catalog import ToolRoute
from sentinel_mcp.gateway.decide_step import _proof_of
from sentinel_mcp.gateway.own_results import sentinel_result
from sentinel_mcp.gateway.untrusted import mark_untrusted, untrusted_source
from sentinel_mcp.storage import StorageError

log = logging.getLogger("sentinel_mcp.gateway.core")  # the logger these lines were always written to


def error_result(text: str, **info: Any) -> CallToolResult:
    """Sentinel's own error result (details in ``_meta``, never in ``structuredContent``)."""
    return sentinel_result(text, **info)


class ObserveStep:
    """The ``Gateway``'s observe step and the outcome written (a base of ``Gateway``, which sets these
    attributes)."""

    config: Config
    guard: Guard

    async def _outcome_unknown(self, call: ToolCall) -> None:
        """Sent, and its result never came, or came and was refused: it may have run (the guard's
        ``observe_unknown``). Shielded: a caller that cancels now does not undo what the upstream did."""
        with anyio.CancelScope(shield=True):
            try:
                await self.guard.observe_unknown(call)
            except Exception:  # noqa: BLE001 - as observing a result: never fails the call
                log.exception("guard could not take the unknown outcome of %s", call.name)

    async def _observe(
        self, rec: CallRecord, call: ToolCall, route: ToolRoute, decision: Allow, result: CallToolResult
    ) -> Completed:
        """Mark an untrusted source's result; the guard learns from it while the outcome row is committed."""
        source = untrusted_source(route.exposed, call.identity, self.config.sentinel.untrusted, result)
        marked = mark_untrusted(result, source) if source is not None else result

        # two files (facts store, audit log), two fsyncs, in parallel instead of one after the other; both are
        # done before the answer leaves
        async def learn() -> None:
            try:
                await self.guard.observe(call, result)
            except Exception:  # noqa: BLE001 - learning facts from a result must not fail the call
                log.exception("guard could not observe the result of %s", call.name)

        # only when the guard may learn something (most results teach nothing: no task, no turn of the loop);
        # a bare task rather than a task group (a fifth of this step's cost); awaited before the answer
        # leaves. Never cancelled with the call: the upstream has answered, so a write has happened, and its
        # effects and spent confirmation must be learned (a cancelled learning let the same write through
        # again on the confirmation it had used, past a rule such as one certificate per reservation)
        learning = asyncio.ensure_future(learn()) if self.guard.observes(call, result) else None
        try:
            completed = await self._done(
                rec,
                decision,
                "tool_error" if marked.is_error else "ok",
                marked,
                proof=_proof_of(decision),
                error=_first_text(marked) if marked.is_error else None,
            )
            if learning is not None:
                await learning
        except BaseException:
            if learning is not None:
                # bounded all the same: a guard whose store hangs must not hold the cancelled call for ever
                bound = self.config.sentinel.policy.guard_timeout
                with anyio.CancelScope(shield=True):
                    done, _ = await asyncio.wait([learning], timeout=bound)
                    if not done:
                        learning.cancel()
                        await asyncio.wait([learning])
            raise
        return completed

    @staticmethod
    async def _done(
        rec: CallRecord, decision: Decision, outcome: str, result: CallToolResult, **kw: Any
    ) -> Completed:
        """The outcome on disk before the answer leaves; if it cannot be, the answer says so."""
        try:
            await rec.finished(outcome, reason=decision.reason, **kw)
        except StorageError as e:
            return Completed(
                result=rec.stamp(
                    error_result(
                        f"{rec.base['tool']} ran, but Sentinel could not record its outcome, so the result "
                        f"is withheld: {e}",
                        error="audit_unavailable",
                    )
                )
            )
        return Completed(result=rec.stamp(result))


def _first_text(result: CallToolResult) -> str | None:
    for c in result.content:
        if isinstance(c, TextContent):
            return c.text[:500]
    return None
