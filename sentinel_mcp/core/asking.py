"""One way to ask the user: the question, the channel it goes by, and whose answer counts (provenance).

The policy (a rule's ``ask``/``confirm``), the default guard (a risky call's confirmation), the device
firewall (a risky tap) and the sensors (a read's consent) each ask the person something. They build the
question here, so every question's text goes through the same safety path (``display_text.safe_question``:
hidden characters named, quoted values cut) and says who asked it, by which channel, and which answers
count: an answer from another provenance (an agent answering "for the user") is not an answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from mcp_types import ElicitResult
from pydantic import BaseModel

from sentinel_mcp.core.call_meta import behind_gateway

from sentinel_mcp.core.decision import Question
from sentinel_mcp.core.display_text import Marked, safe_question
from sentinel_mcp.core.secret_values import mask_secret_values, secret_strings

__all__ = ["ANSWERED_BY", "Asker", "AskUser", "Channel", "Provenance", "answered_by", "marked",
           "marked_responses", "spelled_refusal"]


class Asker(StrEnum):
    POLICY = "policy"
    GUARD = "guard"  # the default guard's confirmation
    DEVICE = "device"  # the device firewall
    SENSORS = "sensors"  # a sensor read's consent


class Channel(StrEnum):
    """How the question reaches the person."""

    CLIENT = "client"  # the calling client: elicitation (2025 era) or an input request (2026 era)
    INBOX = "inbox"  # Sentinel's person inbox (console, `sentinel-mcp chat`) when the client cannot be asked
    PHONE = "phone"  # on the phone itself: press Volume Up


class Provenance(StrEnum):
    """Who gave an answer."""

    USER = "user"
    AGENT = "agent"
    POLICY = "policy"


@dataclass(frozen=True)
class AskUser:
    asker: Asker
    text: str  # as the asker wrote it; quotes ``values`` (a call's arguments, screen labels) as they are
    values: Mapping[str, Any] | None = None
    channel: Channel = Channel.CLIENT
    accepts_from: tuple[Provenance, ...] = (Provenance.USER,)
    meta: dict[str, Any] = field(default_factory=dict)
    # names of ``values`` the tool declares secret (``ToolCall.secret_arguments``): their values are masked
    # wherever the text quotes them, however its writer (a rulebase's ``~w``) spelled it
    secret: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "asker", Asker(self.asker))
        object.__setattr__(self, "channel", Channel(self.channel))
        object.__setattr__(self, "accepts_from", tuple(Provenance(p) for p in self.accepts_from))
        if not self.accepts_from:
            raise ValueError("a question that no answer can satisfy is not a question")

    def shown(self) -> str:
        """The text the person sees: the one safety path for every question."""
        values = dict(self.values) if self.values else None
        text = self.text
        hidden = [v for k, v in values.items() if k in self.secret] if values and self.secret else []
        if values and hidden:
            masked = mask_secret_values(text, (s for v in hidden for s in secret_strings(v)))
            # a text this module's caller marked safe stays marked: a mask is plain printable text
            text = Marked(masked) if isinstance(text, Marked) else masked
            values = {k: ("[redacted]" if k in self.secret else v) for k, v in values.items()}
        return safe_question(text, values)[0]

    def spelled_secrets(self) -> list[str]:
        """The names of the ``secret`` values the text spells (where ``shown`` would mask them). A finished
        text cannot tell a secret's own place from the words around it, so its askers refuse instead of
        asking: a mask there would let the caller choose which word the person does not see (a PIN sent as
        "not", as the amount, as the payee)."""
        if not self.values or not self.secret:
            return []
        text = str(self.text)
        return sorted(k for k, v in self.values.items()
                      if k in self.secret and mask_secret_values(text, secret_strings(v)) != text)

    def counts(self, provenance: str) -> bool:
        """Whether an answer with this provenance answers the question."""
        return provenance in {p.value for p in self.accepts_from}

    def question(self, key: str, requested_schema: dict[str, Any]) -> Question:
        """As the gateway carries it (elicitation, input requests, the inbox)."""
        return Question(key=key, message=self.shown(), requested_schema=requested_schema,
                        meta={"asked_by": self.asker.value, "channel": self.channel.value,
                              "from": [p.value for p in self.accepts_from]} | self.meta)

    def hears(self, ctx: Any, answer: Any) -> bool:
        """Whether a built-in may take this answer (an ``ElicitResult``) as given by someone it accepts:
        through
        the gateway, by the gateway's mark of who answered (``ANSWERED_BY``); run alone, its client is its
        user."""
        return isinstance(answer, ElicitResult) and self.counts(answered_by(ctx, answer))

    async def push(self, ctx: Any, requested_schema: dict[str, Any]) -> ElicitResult:
        """Ask during the call (handshake era: ``elicitation/create`` on the call's own stream). The raw
        answer,
        so that who answered can be read (``hears``); ``ctx`` is an MCPServer ``Context``."""
        return await ctx.request_context.session.elicit_form(
            self.shown(), requested_schema, related_request_id=ctx.request_id
        )


# --- who answered: the gateway's mark on every answer it passes to a built-in or a guard
# -----------------------
ANSWERED_BY = "sentinel/answered_by"
_OURS = "sentinel/"


def marked(answer: Any, provenance: Provenance | str | None) -> Any:
    """An ``ElicitResult`` as the gateway passes it on: every ``sentinel/`` key its giver wrote removed
    (nobody
    forges the gateway's word), then who answered stamped. ``provenance`` None: the answer is relayed as the
    gateway already marked it (a built-in relaying its own caller's answer, which the gateway marked)."""
    # any result a round can carry (an elicitation, a sampling or roots answer): each has a ``_meta``
    # its giver writes, so each is stripped and stamped, not only the elicitation results
    if not isinstance(answer, BaseModel) or "meta" not in type(answer).model_fields or provenance is None:
        return answer
    meta = getattr(answer, "meta", None)
    given = meta if isinstance(meta, dict) else {}
    kept = {k: v for k, v in given.items() if not (isinstance(k, str) and k.startswith(_OURS))}
    return answer.model_copy(update={"meta": kept | {ANSWERED_BY: Provenance(provenance).value}})


def marked_responses(
    responses: dict[str, Any] | None, provenance: Provenance | str | None
) -> dict[str, Any] | None:
    """A 2026-era round's answers (``inputResponses``), each marked as ``marked`` does."""
    if responses is None:
        return None
    return {key: marked(value, provenance) for key, value in responses.items()}


def answered_by(ctx: Any, answer: Any) -> str:
    """Who gave an answer a built-in received: through the gateway, the gateway's mark ("" when there is none,
    which counts for nobody); run alone (no gateway), the built-in's own client, which is its user's."""
    if not behind_gateway(ctx):
        return Provenance.USER.value
    meta = getattr(answer, "meta", None) or {}
    value = meta.get(ANSWERED_BY) if isinstance(meta, dict) else None
    return value if isinstance(value, str) and value in Provenance._value2member_map_ else ""


def spelled_refusal(tool: str, names: list[str]) -> str:
    """Why a call whose question spells its secret arguments ``names`` is refused (``spelled_secrets``)."""
    # the names are the tool's schema's (``redactor.secret_arguments_of``), as its name is: never the value
    return (f"{tool}: the question it needs would show a text that spells the value of its secret argument "
            f"{', '.join(names[:8])}; masking it would hide words of the question from the person, so it is "
            "not asked")
