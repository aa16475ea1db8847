"""How a refused or a blocked call reads to the client: the text result of a deny, and of a call waiting for
the user's answers (with how an agent may record the ones it may answer)."""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult

from sentinel_mcp.core.display_text import Marked, compose, safe_text, shown
from sentinel_mcp.core.port import NeedsInput, Refused
from sentinel_mcp.gateway.own_results import sentinel_result


def refused_result(outcome: Refused) -> CallToolResult:
    """A deny: its reason, what was unmet and what would unblock it (each value shown safely)."""
    d = outcome.decision
    # a reason may quote any value: a marked one (``Marked``: Sentinel's words around values it showed) is
    # kept, any other shown here, each once
    parts: list[str] = ["Sentinel refused this call: ", outcome.reason]
    info: dict[str, Any] = {"decision": "deny", "reason": outcome.reason}
    if d is not None:
        if d.unmet:
            parts.append("\nUnmet: " + "; ".join(d.unmet))
        if d.how_to_unblock:
            parts.append("\nTo unblock: " + "; ".join(d.how_to_unblock))
        info.update(unmet=d.unmet, how_to_unblock=d.how_to_unblock)
    text = Marked("".join(p if isinstance(p, Marked) else shown(p, len(p), keep_newlines=True).text
                          for p in parts))
    shown_text = safe_text(text, 8000, keep_newlines=True)
    return sentinel_result(shown_text, **info, decision_id=outcome.decision_id)


def blocked_result(outcome: NeedsInput, inbox: Any) -> CallToolResult:
    """``inbox``: the web console's, when it runs (its hint says where the user answers)."""
    qs: list[dict[str, Any]] = []
    for q in outcome.questions:
        entry: dict[str, Any] = {"key": q.key, "question": q.message, "answer_schema": q.requested_schema}
        # an askable the agent may answer is recorded with sentinel_answer's own arguments; a confirmation
        # (or a question only the user may answer) refuses an agent's answer, so none is offered for it
        if q.meta.get("kind") == "ask" and "agent" in (q.meta.get("from") or []):
            entry["answer_with"] = {
                "tool": "sentinel__sentinel_answer",
                "predicate": q.meta.get("predicate"),
                "inputs": q.meta.get("inputs", []),
            }
        qs.append(entry)
    agent_may = any("answer_with" in e for e in qs)
    user_only = any("answer_with" not in e for e in qs)
    # one marked text (a question was marked where it was asked): shown again, a mark is never re-marked
    text = compose(
        "Sentinel is waiting for the user: ", safe_text(outcome.reason), "\nAsk the user: ",
        *(p for i, q in enumerate(outcome.questions)
          for p in ((" | ",) if i else ()) + (Marked(q.message),)),
        ("\nThen record each answer with the sentinel__sentinel_answer tool (predicate, inputs and the "
           "answer, as each question's answer_with says) and call again" if agent_may else "")
        + ("\nOnly the user can answer " + ("the others" if agent_may else "it")
           + ": through a client that supports elicitation" if user_only else ""),
        f" ({inbox.hint})." if inbox is not None else ".",
    )
    return sentinel_result(
        text,
        decision="ask",
        blocked=True,
        reason=outcome.reason,
        questions=qs,
        decision_id=outcome.decision_id,
    )
