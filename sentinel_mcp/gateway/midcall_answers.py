"""An accept to an upstream's question during a call, decided again before the upstream gets it.

An upstream asks while it runs (a handshake-era push; a 2026-era input request put to a client that can be
pushed to; either held for a 2026-era client's next round), and the answer may come minutes later, on the
decision made at the call's start. What that decision rested on may have changed meanwhile: a write of this
conversation or another, a fact expired, the policy's answer to a read, the caller's credentials. An accept
lets the call act, so before one is relayed the caller is checked again and the call decided again
(``DecideStep._decided_again``: a preview, nothing asked or spent). A deny, a lapsed credential, or a
question the call was not allowed on (the person would be asked first now) refuses the accept and every later
one of the call: the upstream gets a refusal naming no policy, and the call ends refused with why, whatever
the upstream answers then. A decline or cancel lets the call act on nothing: it goes through as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Collection

from mcp.types import ElicitResult

from sentinel_mcp.core.caller_link import CallerLink, refusal
from sentinel_mcp.core.decision import Ask, Question
from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.identity.resolver import AuthFailed

OUR_PREFIX = "sentinel."  # a question's key as the wire carries it (``input_rounds.wire_key``) or not


@dataclass(frozen=True)
class MidCallRefusal:
    """Why an accept was not relayed, and the call's audit outcome for it."""

    why: str
    outcome: str


class AcceptGate:
    """One call's ``CallerLink.answer_gate``: ``decide`` says why the call may no longer act (None: it
    may)."""

    def __init__(self, decide: Callable[[], Awaitable[MidCallRefusal | None]]) -> None:
        self._decide = decide
        self.refused: MidCallRefusal | None = None  # once refused, every later accept of the call is too

    async def __call__(self, answer: Any) -> Any:
        if not isinstance(answer, ElicitResult) or answer.action != "accept":
            return answer
        if self.refused is None:
            self.refused = await self._decide()
        if self.refused is None:
            return answer
        return refusal("an answer", "the call it belongs to is no longer allowed")


async def gated(link: CallerLink, answer: Any) -> Any:
    """``answer`` as the upstream may get it, through the link's gate (``CallerLink.answer_gate``)."""
    gate = link.answer_gate
    return answer if gate is None else await gate(answer)


def lapsed(recheck: Callable[[], Any] | None) -> str | None:
    """Why the caller's credentials no longer hold (``caller_recheck.py``), or None."""
    if recheck is None:
        return None
    try:
        recheck()
    except AuthFailed as e:
        return compose(
            "refused: the credentials this call was sent with no longer hold (", safe_text(str(e), 300),
            "); the answer to its upstream's question was not passed on",
        )
    return None


def unasked(decision: Ask, answered: Collection[str]) -> list[Question]:
    """The questions of ``decision`` the call was not allowed on: a confirmation its allow spent as the call
    left is asked again by a preview, and is no new question (keys compared with or without our prefix)."""
    keys = {k.removeprefix(OUR_PREFIX) for k in answered}
    return [q for q in decision.questions if q.key.removeprefix(OUR_PREFIX) not in keys]
