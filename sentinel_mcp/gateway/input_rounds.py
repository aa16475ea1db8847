"""The 2026-era input round trip: the states Sentinel issues, and the answers it accepts back.

With every ``InputRequiredResult`` Sentinel issues a sealed state of one kind:

- ``ask``: Sentinel's own questions (policy askables, confirmations) about one call;
- ``allowed``: the call was allowed and its upstream asks for input; the retry carries the upstream's answers;
- ``hold``: a held upstream call waits for the answer to a question it pushed.

Each state is bound to the principal it was issued to, the conversation, the tool, the argument digest, the
policy version and the keys it asked, expires, and is used once (its nonce). Answers (``inputResponses``)
count only together with such a state, from a 2026-era client that declared elicitation, for exactly the
keys that state asked. Anything else is refused with the reason, and the caller audits it.
"""

from __future__ import annotations

import hmac
from collections.abc import Collection
from secrets import token_urlsafe
from dataclasses import dataclass, field
from typing import Any

from mcp.types import (
    CreateMessageRequest,
    ElicitRequest,
    ElicitRequestURLParams,
    ElicitResult,
    ListRootsRequest,
)

from sentinel_mcp.core.answer_validation import relayed_problem
from sentinel_mcp.core.decision import Answer, argument_digest
from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.gateway.relayed_answer import relayed_answer
from sentinel_mcp.gateway.request_state import RequestStateSeal

OUR_KEY_PREFIX = "sentinel."
AGAIN = "; call the tool again to be asked afresh"
# what a client must have declared to be asked a request of each kind, and so to answer it: an answer from a
# client that could not have been shown the question (an LLM host that declared sampling only) is nobody's
ELICITATION, URL_ELICITATION, SAMPLING, ROOTS = "elicitation", "elicitation.url", "sampling", "roots"


def capability_asked(request: Any) -> str:
    """The capability a client needs to be asked ``request`` (anything unknown needs a form's, the strictest
    a person answers)."""
    if isinstance(request, CreateMessageRequest):
        return SAMPLING
    if isinstance(request, ListRootsRequest):
        return ROOTS
    if isinstance(request, ElicitRequest) and isinstance(request.params, ElicitRequestURLParams):
        return URL_ELICITATION
    return ELICITATION


@dataclass
class Retry:
    """What a call brings back: nothing (a fresh call), or answers that passed every check."""

    kind: str | None = None  # None (fresh call) | "ask" | "allowed" | "hold"
    state: dict[str, Any] = field(default_factory=dict)
    ours: dict[str, Answer] = field(default_factory=dict)  # keyed with and without the "sentinel." prefix
    theirs: dict[str, Any] = field(default_factory=dict)  # an upstream's answers, verbatim


@dataclass
class RefusedRetry:
    reason: str
    state: dict[str, Any] | None = None  # set when the state was genuine (and has now been used)


@dataclass
class LateAnswer:
    """A pushed (handshake-era) answer that came after its question's time to answer: refused with ``reason``
    (the pushed counterpart of a state past its age)."""

    reason: str


def wire_key(key: str) -> str:
    return key if key.startswith(OUR_KEY_PREFIX) else OUR_KEY_PREFIX + key


class InputRounds:
    def __init__(self, seal: RequestStateSeal) -> None:
        self.seal = seal

    async def issue(self, kind: str, *, principal: str, session: str, tool: str, arguments: Any, version: str,
              asked: list[str], schemas: dict[str, Any] | None = None,
              needs: dict[str, str] | None = None, **extra: Any) -> str:
        """A sealed state for one round; ``schemas`` are those of relayed (upstream) questions, ``needs`` the
        capability each relayed request needs (``capability_asked``; Sentinel's own questions are forms)."""
        return await self.seal.seal_async(
            {
                "kind": kind,
                "principal": principal,
                "session": session,
                "tool": tool,
                "version": self._version_tag(version),
                "digest": argument_digest(arguments if isinstance(arguments, dict) else None),
                "asked": list(asked),
                "schemas": schemas or {},
                "needs": needs or {},
                **extra,
            }
        )

    async def accept(
        self,
        *,
        modern: bool,
        declared: Collection[str],
        principal: str,
        session: str,
        tool: str,
        arguments: Any,
        version: str,
        responses: dict[str, Any] | None,
        request_state: str | None,
    ) -> Retry | RefusedRetry:
        if not responses:
            return Retry()  # a state without answers grants nothing: the call is decided afresh
        if not modern:
            return RefusedRetry(
                "answers are not accepted in inputResponses on this connection: it began with the "
                "initialize handshake, where Sentinel asks its questions directly (elicitation) "
                "and only the replies to those count"
            )
        if not declared:
            return RefusedRetry(
                "answers are not accepted from a client that declared no elicitation capability "
                "(nor sampling or roots): Sentinel never asked it anything"
            )
        state = self.seal.open(request_state)
        if state is not None and state.get("principal") != principal:
            state = None  # another caller's reads as one never issued: nobody learns it is genuine and live
        if state is None:
            why = (
                "without a request state"
                if not request_state
                else "with a request state Sentinel did not issue, or one that was altered or has expired"
            )
            return RefusedRetry(
                f"the answers came {why}; an answer counts only with the state of the question "
                f"it answers{AGAIN}"
            )
        problem = self._binding_problem(state, principal, session, tool, arguments, version)
        if problem:
            return RefusedRetry(compose(problem, AGAIN))
        asked = [str(k) for k in state.get("asked") or []]
        unasked = sorted(k for k in responses if k not in asked)
        if unasked:
            return RefusedRetry(compose(
                "answers for questions that were not asked: ", safe_text(", ".join(unasked), 300),
                " (asked: ", ", ".join(asked), ")", AGAIN,
            ))
        needs = state.get("needs") if state.get("kind") != "ask" else None
        needs = needs if isinstance(needs, dict) else {}
        lacking = sorted(k for k in responses if needs.get(k, ELICITATION) not in declared)
        if lacking:  # checked before the state is used: another connection's attempt leaves it to its own
            need = needs.get(lacking[0], ELICITATION)
            return RefusedRetry(compose(
                "the answer to ", safe_text(lacking[0], 120), " is not accepted from a client that did not "
                f"declare the {need} capability: such a client is never asked that question", AGAIN,
            ))
        if not await self.seal.consume_async(state):
            return RefusedRetry("this request state was already used: an answer counts once" + AGAIN)
        kind = state.get("kind")
        if kind == "ask":
            ours: dict[str, Answer] = {}
            for key, value in responses.items():
                if not isinstance(value, ElicitResult):
                    return RefusedRetry(f"the answer to {key} is not an elicitation result{AGAIN}", state)
                answer = Answer(action=value.action, content=value.content, provenance="user")
                ours[key] = ours[key.removeprefix(OUR_KEY_PREFIX)] = answer
            return Retry("ask", state, ours=ours)
        for key, value in responses.items():
            problem = relayed_answer_problem(state.get("schemas", {}).get(key), value)
            if problem:
                why = compose("the answer to ", key, " does not fit its question: ", problem)
                return RefusedRetry(why, state)
        # what reaches the upstream: a decline's or a link's answer without the content it cannot carry
        theirs = {k: relayed_answer(v, link=needs.get(k) == URL_ELICITATION) for k, v in responses.items()}
        return Retry(str(kind), state, theirs=theirs)

    def _version_tag(self, version: str, salt: str | None = None) -> str:
        """The policy version as a state carries it: salted and keyed, so a client (who reads its state: it
        is sealed, not encrypted) can neither read the version nor tell two states' versions apart; only
        Sentinel checks it is the version in force (a rulebase's version is for those who may read it)."""
        salt = salt if salt is not None else token_urlsafe(9)
        mac = self.seal.mac(b"policy-version\0" + salt.encode() + b"\0" + version.encode())
        return f"{salt}.{mac.hex()[:32]}"

    def _version_matches(self, tag: Any, version: str) -> bool:
        if not isinstance(tag, str) or "." not in tag or len(tag) > 80:
            return False
        return hmac.compare_digest(tag.encode(), self._version_tag(version, tag.split(".", 1)[0]).encode())

    def _binding_problem(
        self, state: dict[str, Any], principal: str, session: str, tool: str, arguments: Any, version: str
    ) -> str | None:
        if state.get("kind") not in ("ask", "allowed", "hold"):
            return "the request state is not one Sentinel issues for answers"
        if state.get("principal") != principal:  # (refused as never issued before this is asked)
            return "the request state was issued to another caller"
        if state.get("session") != session:
            return "the request state belongs to another conversation"
        if state.get("tool") != tool:
            theirs = safe_text(state.get("tool"), 80)
            return compose("the request state was issued for another tool (", theirs, ")")
        if state.get("digest") != argument_digest(arguments if isinstance(arguments, dict) else None):
            return "the request state was issued for the same tool with other arguments"
        if not self._version_matches(state.get("version"), version):
            return "the policy changed since the question was asked"
        return None


def relayed_answer_problem(schema: Any, value: Any) -> str | None:
    """Why an answer to a relayed (upstream) question does not fit the schema the client was shown."""
    if not isinstance(value, ElicitResult) or value.action != "accept" or not isinstance(schema, dict):
        return None  # a decline/cancel, or a non-form request (sampling, URL): the upstream judges it
    return relayed_problem(schema, value.content)
