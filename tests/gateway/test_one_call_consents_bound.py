"""The consents given "for this call only" held in the process are bounded, and the bound is shared fairly:
past it the principal holding the most loses its oldest. Oldest first over all let one principal's many
one-call consents (each for other arguments, never used) push out another's consent given a moment before its
call, so that person's "allow" was lost and they were asked again."""

from __future__ import annotations

from pathlib import Path

from sentinel_mcp.core.decision import Answer, Ask, ToolCall
from sentinel_mcp.gateway.consent_gate import ConsentGate
from sentinel_mcp.gateway.consents import ConsentBook

ALLOW = Answer(action="accept", content={"allow": True}, provenance="user")


def call(principal: str, n: int) -> ToolCall:
    return ToolCall(name="tb__echo", server="tb", tool="echo", arguments={"text": f"hi {n}"},
                    principal=principal, purpose="show it", session_id=f"{principal}/conv-1")


def allow_once(gate: ConsentGate, c: ToolCall) -> None:
    asked = gate.asks(c, None)
    assert isinstance(asked, Ask)
    for q in asked.questions:
        gate.record(c, q, ALLOW)


def test_one_principals_one_call_consents_never_push_out_anothers(tmp_path: Path) -> None:
    gate = ConsentGate(ConsentBook(tmp_path / "consents.db"), {"tb__echo": "messages"}, max_once=100)
    allow_once(gate, call("bob", 0))
    for n in range(1_000):
        allow_once(gate, call("alice", n))
    assert len(gate._once) == 100
    assert gate.asks(call("bob", 0), None) is None  # bob's "allow" still waits for his call
    assert gate.asks(call("alice", 999), None) is None and gate.asks(call("alice", 0), None) is not None
