"""The downstream side of one in-flight call: where an upstream's requests *during* that call go.

A handshake-era upstream may push requests back while it works on a call: elicitation (form or URL), sampling
(``sampling/createMessage``), roots (``roots/list``), log lines. Each belongs to the client whose call caused
it,
never to another one. The gateway hands each forwarded call a ``CallerLink``; the upstream connection routes
what
the upstream pushes to the link of the call it belongs to (see ``Upstream._caller_for_push``).

The base class refuses everything with a clear error: a caller that is not an MCP client (an A2A peer, the
policy
solver fetching facts, a built-in) cannot be asked.
"""

from __future__ import annotations

import contextvars
import copy
from dataclasses import dataclass
from typing import Any, Protocol, Self

from mcp_types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    ListRootsResult,
    LoggingMessageNotificationParams,
)

from sentinel_mcp.core.asking import Provenance

NO_BACK_CHANNEL = -32600  # INVALID_REQUEST: what the SDK answers when a client lacks a capability

# The link of the call the current task is forwarding. In-process upstreams (built-ins) run their handler in a
# task that inherits this, so their pushes name their call exactly; over stdio/HTTP nothing carries it.
CURRENT_LINK: contextvars.ContextVar["CallerLink | None"] = contextvars.ContextVar(
    "sentinel_caller_link", default=None
)


def shared_note(of_calls: int) -> str:
    """What a question that names no call says of itself when it is shown with one of ``of_calls`` calls of
    its party in flight (``CallerLink.for_one_of``), and what a refused answer to it is recorded with."""
    return (
        f"the question names no call: it may be about any of the {of_calls} calls this client had in flight "
        "at that server"
    )


def refusal(what: str, why: str) -> ErrorData:
    return ErrorData(code=NO_BACK_CHANNEL, message=f"sentinel: {what} cannot be relayed: {why}")


class AnswerGate(Protocol):
    """One call's bound on its upstream's questions and check of their answers (``gateway/midcall_answers``).
    """

    def take_question(self, calls: int = 1, kind: str = "elicitation") -> bool: ...

    async def __call__(self, answer: Any, *, shared: bool = False) -> Any: ...


@dataclass(frozen=True, slots=True)
class CallOf:
    """The call a link stands for, as the gateway decided it (``CallerLink.call_of``): what a refused push
    is audited with (``gateway/push_refusals.py``)."""

    principal: str | None
    session: str
    tool: str
    origin: str
    client: str | None
    decision_id: str


class CallerLink:
    """A caller that cannot be asked anything (subclasses relay to a real client)."""

    call_of: CallOf | None = None  # set by the gateway before the upstream runs the call
    # what an answer to the upstream's question goes through before the upstream gets it (set by the gateway
    # with ``call_of``: an accept is decided again, ``gateway/midcall_answers.py``); None: as it is
    answer_gate: AnswerGate | None = None

    who = "this caller (not an MCP client)"
    relays_sampling = False  # whether sample() reaches a client that declared sampling
    # when (time.monotonic()) an answer stops letting the call act: an agent run's time cap. A question asked
    # through this link (or the console inbox standing in for it) waits no longer, and a later answer is no
    # answer: the upstream is refused, so nothing starts after the cap. None: no such time
    deadline: float | None = None
    # who gives the answers this link returns (the gateway marks every answer with it, ``asking.marked``):
    # a link that does not reach a person gives an agent's answers at best; None relays answers the gateway
    # already marked as they are (a built-in asking its own caller)
    answers_as: Provenance | None = Provenance.AGENT
    # how many of its party's calls in flight a question asked through this link may be about (``for_one_of``;
    # shown by the link where it shows the question)
    of_calls = 1

    @property
    def party(self) -> object | None:
        """Who may be asked for any of this caller's calls in flight (compared with ==): a question an
        upstream pushes naming no call reaches the right caller when every call in flight is that party's
        (``party_turns.py``). None: nobody stands in for this call, it runs alone."""
        return None

    @property
    def asking(self) -> bool:
        """Whether a question asked here now would wait behind another (a held call's round shows one at a
        time): a question that names no call goes to a call of its party that is not asking, if any."""
        return False

    def for_one_of(self, calls: int) -> Self:
        """This link, for a question of one of ``calls`` calls of its party in flight (which one, the question
        does not say): a copy with ``of_calls`` set, for the link to say so where it shows the question."""
        if calls < 2:
            return self
        other = copy.copy(self)
        other.of_calls = calls
        return other

    def decided(self, decision_id: str) -> None:
        """The gateway's decision that let this call reach its upstream (what the upstream asks during the
        call
        belongs to it: the questions held for a 2026-era client and the console's inbox name it)."""
        return None

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        return refusal("an elicitation", f"{self.who} cannot be asked")

    async def sample(self, params: CreateMessageRequestParams) -> CreateMessageResult | ErrorData:
        return refusal("a sampling request", f"{self.who} offers no model")

    async def list_roots(self) -> ListRootsResult | ErrorData:
        return refusal("a roots request", f"{self.who} has no roots")

    async def log(self, params: LoggingMessageNotificationParams) -> None:
        return None

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        return None

    def describe(self) -> dict[str, Any]:
        return {"who": self.who}
