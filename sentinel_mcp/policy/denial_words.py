"""What a denial says, in words: every rule the call breaks (``unmet_of``) and what the client can do about it
(``how_to_unblock``), from a solver's result; no Prolog terms or variables reach the client."""

from __future__ import annotations

from typing import Any

from sentinel_mcp.policy.solver import SolverResult


def _missing_text(m: dict[str, Any]) -> str:
    """A fact that could not be fetched, in words (no Prolog terms or variables)."""
    what = str(m.get("fact", "")).split("(", 1)[0].replace("_", " ") or "a fact"
    args = ", ".join(f"{k} {v}" for k, v in (m.get("arguments") or {}).items())
    return (
        f"Sentinel could not find out the {what} it needs: {m['tool']}"
        f"{' for ' + args if args else ''} did not tell ({m.get('error') or 'not fetched'})"
    )


UNKNOWN_OUTCOME = "unknown_outcome"
# What clears an unsure fact today: nothing in the session (no expiry; neither a read nor an invalidation nor
# a later write removes it), so the hint says what is true: find out what happened, go on in a new session.
UNKNOWN_OUTCOME_TIP = (
    "an earlier call's outcome is unknown (its answer never came) and this guard cannot tell whether it "
    "happened: check with the user or the service whether it ran; it stays unknown for the rest of this "
    "session (it does not expire, and no read, invalidation or later write clears it), so go on in a new "
    "session once it is known; the rulebase's author can write this guard's \"not yet\" as \\+ G, which "
    "counts an unknown outcome as a possible one"
)


def unmet_of(result: SolverResult, violations: list[dict[str, Any]] | None = None) -> list[str]:
    """Every broken rule, most specific first, each with the policy sentence it formalises when it cites one.
    """
    out = [v["text"] for v in violations] if violations else list(result.unmet)
    out = out or list(result.tentative)
    if any(v.get("kind") == UNKNOWN_OUTCOME for v in violations or []):
        out.append(UNKNOWN_OUTCOME)  # the code a client or the audit can match (unknown_outcomes.pl)
    out += [_missing_text(m) for m in result.missing]
    if not out and result.questions:
        out += [q.get("question", "") for q in result.questions]
    return out or ["the guard's conditions do not hold"]


def how_to_unblock(result: SolverResult, violations: list[dict[str, Any]] | None = None) -> list[str]:
    tips = []
    for m in result.missing:
        tips.append(
            f"check the values given to {m['tool']} ({m.get('error') or 'not fetched'}) and call again"
        )
    for q in result.questions:
        tips.append(f"answer: {q.get('question')}")
    if any(v.get("kind") == "dont_know" for v in violations or []):
        tips.append(
            "the user did not know an answer: follow the step above, then call again (the question is "
            "asked again)"
        )
    if any(v.get("kind") == UNKNOWN_OUTCOME for v in violations or []):
        tips.append(UNKNOWN_OUTCOME_TIP)
    if result.unmet and not tips:
        tips.append(
            "the call breaks the rules above (each quoted from the policy where it cites one); tell the "
            "user why, in those words"
        )
    return tips
