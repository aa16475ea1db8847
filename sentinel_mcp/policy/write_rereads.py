"""What a write is decided on: for the bindings marked ``fresh_for_writes``, the upstream's answer now.

A binding's ``ttl`` bounds how long a read may stand in for the upstream between reads. For a write (a tool an
``effect`` names) that can be too long: another conversation's write, or the upstream itself, may have changed
the record since (retail policy.md: "you should check its status before taking the action"). Before, an order
one conversation read as pending was cancelled there after another conversation had modified its items, and
its address changed after another had cancelled it, each decided on the status read before.

Opt-in per binding: some rules stand on what was read before a change on purpose (airline.pl's certificate
for a delay seen on a flight the change replaced), and a read again costs a call upstream per write.
"""

from __future__ import annotations

from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.knowledge import Knowledge
from sentinel_mcp.policy.prolog_text import quote_atom
from sentinel_mcp.policy.rulebase import Rulebase


async def reread_for_write(knowledge: Knowledge, call: ToolCall, rb: Rulebase, *, spend: bool) -> None:
    """For a write decided to be carried out (``spend``; not a look at what it would get): drop the session's
    facts of every ``fresh_for_writes`` binding (and their fetch markers), so its proof reads them again."""
    if not spend or not rb.info.names_effect(call.identity):
        return
    heads = sorted({(b.predicate, b.arity) for b in rb.info.bindings if b.fresh_for_writes})
    if not heads:
        return
    await knowledge.ensure(call.session_id, rb)
    for predicate, arity in heads:
        pattern = quote_atom(predicate) + (f"({', '.join(['_'] * arity)})" if arity else "")
        await knowledge.invalidate(call.session_id, pattern, rb)
