"""Questions no caller can be asked, put to the person in Sentinel's console inbox instead of refused.

An A2A peer, an MCP client without elicitation, or an agent run started by one of them cannot show a question
to
anyone. When the console runs, it gives the gateway a ``PersonInbox`` (``Gateway.person_inbox``): such a
question
(the device firewall's "Tap 'Sign in' in Bank? ...", an askable, a consent) waits there for a bounded time;
the
person's answer (provenance ``user``) lets the call go on, no answer refuses it. Without a console nothing
changes:
the call is refused as before.

Who is asked: the principal the call is made for, except for calls that come from A2A (a peer, or an agent run
a
peer started): those go to the phone's owner, so a peer can never answer for the user, not even by signing in
to
the console with its own token.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
from mcp.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    ListRootsResult,
    LoggingMessageNotificationParams,
)

from sentinel_mcp.core.asking import Provenance
from sentinel_mcp.core.caller_link import CallerLink, refusal, shared_note
from sentinel_mcp.core.decision import Answer, Question
from sentinel_mcp.gateway.front_held import relayed_question
from sentinel_mcp.core.shown_schema import attributed_form
from sentinel_mcp.identity.principal import OWNER_NAME

# calls with a person behind them (the policy's own fetches and built-ins' internal calls ask nobody)
PERSON_ORIGINS = ("client", "a2a", "cli")
UPSTREAM_QUESTION = (
    "upstream_question"  # Question.meta kind: a form an upstream (the device firewall) asks mid-call
)


@dataclass(frozen=True, slots=True)
class PersonQuestion:
    """Questions about one call that its caller cannot be asked, for the person it stands for (``person``)."""

    caller: str  # the principal the call is made for
    origin: str
    session: str
    client: str | None
    tool: str
    arguments: Any
    questions: list[Question]
    reason: str

    @property
    def person(self) -> str:
        return person_for(self.caller, self.origin)


class PersonInbox(Protocol):
    async def ask(self, asked: PersonQuestion) -> dict[str, Answer] | None:
        """The person's answers (provenance ``user``), or None: no answer in time, or none can be waited for.
        """
        ...


def person_for(principal: str, origin: str) -> str:
    """Whose inbox a call's question goes to (see the module docstring)."""
    return OWNER_NAME if origin == "a2a" else principal


def reaches_person(link: Any) -> bool:
    """Whether the call's own caller can be asked (pushed to, or through a 2026-era round trip)."""
    return link is not None and bool(getattr(link, "reaches_person", False))


class PersonLink(CallerLink):
    """The link of a call whose caller cannot be asked: an upstream's form question (the device firewall's
    confirmation) goes to the console inbox; everything else is the caller's own link's business."""

    def __init__(self, inner: CallerLink | None, gateway: Any, principal: str, call: Any) -> None:
        self.inner = inner or CallerLink()
        self.gateway = gateway
        self.principal = principal
        self.call = call
        self.who = self.inner.who
        self.decision_id = ""

    @property
    def party(self) -> object | None:
        """The caller's own (``FrontLink.party``): the person answers for any call of that party."""
        return self.inner.party


    answers_as = Provenance.USER  # the person, in the console inbox (or `sentinel-mcp chat`)
    can_push = True  # pushes and 2026-era input requests are answered here (by the person, or refused)
    reaches_person = True

    @property
    def relays_sampling(self) -> bool:  # type: ignore[override]
        return bool(getattr(self.inner, "relays_sampling", False))

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        if not isinstance(params, ElicitRequestFormParams):
            return refusal("a URL elicitation", "nobody behind this call can open it")
        c = self.call
        reason = f"{c.name} asks before it acts"
        if self.of_calls > 1:  # shown with one call's tool and arguments: it may be another's
            reason = f"{reason}; {shared_note(self.of_calls)} (shown with one of them)"
        # a configured server's words never pass for Sentinel's own confirmation in the inbox either: marked
        # first, as on every other path (a built-in Sentinel mounted, the device firewall, asks as Sentinel)
        asker = self._asker(c.name)
        message = relayed_question(params.message, asker, self.of_calls, principal=self.principal)
        question = Question(
            key="confirm",
            message=message,
            # its words in Sentinel's voice the server's too (the console makes each safe where it draws it)
            requested_schema=dict(attributed_form(params.requested_schema or {}, asker)),
            meta={
                "kind": UPSTREAM_QUESTION,
                "tool": c.name,
                "from": ["user"],
                "confirmation": _is_confirmation(params.requested_schema),
                "decision_id": self.decision_id,
                "calls_in_flight": self.of_calls,
            },
        )
        # the caller's (an agent run's time cap): no wait, and no yes, after it
        said = getattr(self.inner, "deadline", None)
        deadline = float(said) if isinstance(said, (int, float)) and not isinstance(said, bool) else None
        answers = None
        try:
            with anyio.move_on_after(math.inf if deadline is None else deadline - time.monotonic()):
                answers = await self.gateway.ask_person(
                    PersonQuestion(
                        caller=self.principal,
                        origin=c.origin,
                        session=c.session_id,
                        client=c.client,
                        tool=c.name,
                        arguments=c.arguments,
                        questions=[question],
                        reason=reason,
                    )
                )
        except Exception as e:  # noqa: BLE001 - an inbox that fails is nobody saying yes
            return refusal("an elicitation", f"the console inbox could not take it ({type(e).__name__})")
        if deadline is not None and time.monotonic() >= deadline:
            return refusal("an elicitation", "its caller's time ran out before it was answered")
        answer = (answers or {}).get(question.key)
        if answer is None:
            return refusal("an elicitation", "nobody answered it in Sentinel's console inbox in time")
        return ElicitResult(
            action=answer.action, content=answer.content if answer.action == "accept" else None
        )

    def _asker(self, tool: str) -> str | None:
        try:
            if self.gateway.mounted_by_sentinel(tool):
                return None
            return str(self.gateway.upstream_of(tool) or "an upstream server")
        except Exception:  # noqa: BLE001 - a server that cannot be named is still not Sentinel
            return "an upstream server"

    def decided(self, decision_id: str) -> None:
        self.decision_id = decision_id
        self.inner.decided(decision_id)

    async def sample(self, params: CreateMessageRequestParams) -> CreateMessageResult | ErrorData:
        return await self.inner.sample(params)

    async def list_roots(self) -> ListRootsResult | ErrorData:
        return await self.inner.list_roots()

    async def log(self, params: LoggingMessageNotificationParams) -> None:
        await self.inner.log(params)

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        await self.inner.progress(progress, total, message)

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "asks": "the console inbox"}


def _is_confirmation(schema: Any) -> bool:
    """A yes/no form (one required boolean): the console marks it risky (a sound, a highlight)."""
    if not isinstance(schema, dict):
        return False
    props, required = schema.get("properties") or {}, schema.get("required") or []
    return any(isinstance(props.get(r), dict) and props[r].get("type") == "boolean" for r in required)
