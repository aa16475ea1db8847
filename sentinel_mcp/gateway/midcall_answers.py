"""An accept to an upstream's question during a call, decided again before the upstream gets it.

An upstream asks while it runs (a handshake-era push; a 2026-era input request put to a client that can be
pushed to; either held for a 2026-era client's next round), and the answer may come minutes later, on the
decision made at the call's start. What that decision rested on may have changed meanwhile: a write of this
conversation or another, a fact expired, the policy's answer to a read, the caller's credentials. An accept
lets the call act, so before one is relayed the caller is checked again and the call decided again
(``DecideStep._decided_again``: a preview, nothing asked or spent). A deny, a lapsed credential, or a
question the call was not allowed on (the person would be asked first now) refuses the accept and every later
one of the call: the upstream gets a refusal naming no policy, and the call ends refused with why, whatever
the upstream answers then. A decline or cancel lets the call act on nothing: it goes through as it is. An
accept that comes once the call has ended (cancelled while its question was open) is refused the same way.

A call's questions are bounded too (``MAX_QUESTIONS_PER_CALL``): a handshake-era upstream asked its user
1,000 questions in one call, one after another (and a 2026-era upstream's one input-required result may hold
as many, each pushed in turn to a handshake-era client, or shown at once to a 2026-era one: such a result is
relayed to no one), every one put to the person.

A sampling or roots request's answer lets the call act as much as an accept does (the model's words, the
client's folders, the upstream goes on with them), so it is decided again the same way; each kind is bounded
apart (an upstream asking roots 1,000 times in one call had every one put to the client).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Collection

from mcp.types import CreateMessageResult, CreateMessageResultWithTools, ElicitResult, ListRootsResult

from sentinel_mcp.core.caller_link import CallerLink, refusal
from sentinel_mcp.core.decision import Ask, Question
from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.gateway.input_rounds import ELICITATION, ROOTS, SAMPLING
from sentinel_mcp.identity.resolver import AuthFailed

# questions one call's upstream may put to its user (each one the person reads and answers: a few are a
# task's, more are a flood); the 2026-era rounds are bounded apart (``upstream_rounds``), and this counts
# their questions too when a handshake-era client is asked them
MAX_QUESTIONS_PER_CALL = 16
OUR_PREFIX = "sentinel."  # a question's key as the wire carries it (``input_rounds.wire_key``) or not
# what each kind of request is called in a refusal (``refusal``)
WHAT = {ELICITATION: "an elicitation", SAMPLING: "a sampling request", ROOTS: "a roots request"}


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
        self.asked: dict[str, int] = {}  # requests of each kind put to the user so far (bounded)
        self.closed = False  # the call has ended (answered, failed, cancelled): no accept lets it act

    @property
    def questions(self) -> int:
        return self.asked.get(ELICITATION, 0)

    def close(self) -> None:
        self.closed = True

    def take_question(self, calls: int = 1, kind: str = ELICITATION) -> bool:
        """Whether one more request of the upstream of ``kind`` may be put to the user (counted when it may).
        ``calls``: a question that names no call is shown with one of its party's ``calls`` in flight (the
        oldest not asking), so that call's count is bounded for all of them (60 calls asking one each are
        60 questions, not one call's 60)."""
        if self.asked.get(kind, 0) >= MAX_QUESTIONS_PER_CALL * max(1, calls):
            return False
        self.asked[kind] = self.asked.get(kind, 0) + 1
        return True

    async def __call__(self, answer: Any, *, shared: bool = False) -> Any:
        """``shared``: the question named no call and may be another of the party's calls' (still running:
        ``CallerLink.for_one_of``), so this one's end does not refuse its answer."""
        if not acts(answer):
            return answer
        if self.closed and not shared:  # cancelled while asking: no yes for an upstream deaf to that
            return refusal("an answer", "the call it belongs to has ended")
        if self.refused is None:
            self.refused = await self._decide()
        if self.refused is None:
            return answer
        return refusal("an answer", "the call it belongs to is no longer allowed")


TOO_MANY = (f"the call's upstream has asked its user {MAX_QUESTIONS_PER_CALL} questions already; no "
            "more are put to them")


def too_many(kind: str) -> str:
    """Why a request of ``kind`` past its call's bound is refused."""
    if kind == ELICITATION:
        return TOO_MANY
    return (f"the call's upstream has sent {MAX_QUESTIONS_PER_CALL} {kind} requests already; no more are "
            "relayed")


def acts(answer: Any) -> bool:
    """Whether ``answer`` lets the call act: an accept, a completion of the client's model, the client's
    roots (a decline, a cancel or a refusal lets it act on nothing)."""
    if isinstance(answer, ElicitResult):
        return answer.action == "accept"
    return isinstance(answer, (CreateMessageResult, CreateMessageResultWithTools, ListRootsResult))


def too_many_at_once(requests: dict[str, Any] | None) -> str | None:
    """Why a 2026-era upstream's one input-required result is relayed to no one (more questions than a call
    may put to its user), or None."""
    count = len(requests or {})
    if count <= MAX_QUESTIONS_PER_CALL:
        return None
    return f"the upstream asked {count} questions at once; a call may put at most {MAX_QUESTIONS_PER_CALL}"


async def asked(link: CallerLink, ask: Callable[[], Awaitable[Any]],
                refused: Callable[[str], Awaitable[None]] | None = None, kind: str = ELICITATION) -> Any:
    """``ask()`` of the call's user (a request of ``kind``), within the call's bound, its answer as the
    upstream may get it (through the link's gate: ``CallerLink.answer_gate``); ``refused(why)``: told of a
    request past the bound (its audit row) before the upstream is."""
    gate = link.answer_gate
    if gate is None:
        return await ask()
    if not gate.take_question(link.of_calls, kind):
        answer = refusal(WHAT[kind], too_many(kind))
        if refused is not None:
            await refused(answer.message)
        return answer
    return await gate(await ask(), shared=link.of_calls > 1)


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
