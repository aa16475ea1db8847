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

from sentinel_mcp.core.decision import Question
from sentinel_mcp.core.display_text import safe_question

__all__ = ["Asker", "AskUser", "Channel", "Provenance"]


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

    def __post_init__(self) -> None:
        object.__setattr__(self, "asker", Asker(self.asker))
        object.__setattr__(self, "channel", Channel(self.channel))
        object.__setattr__(self, "accepts_from", tuple(Provenance(p) for p in self.accepts_from))
        if not self.accepts_from:
            raise ValueError("a question that no answer can satisfy is not a question")

    def shown(self) -> str:
        """The text the person sees: the one safety path for every question."""
        return safe_question(self.text, dict(self.values) if self.values else None)[0]

    def counts(self, provenance: str) -> bool:
        """Whether an answer with this provenance answers the question."""
        return provenance in {p.value for p in self.accepts_from}

    def question(self, key: str, requested_schema: dict[str, Any]) -> Question:
        """As the gateway carries it (elicitation, input requests, the inbox)."""
        return Question(key=key, message=self.shown(), requested_schema=requested_schema,
                        meta={"asked_by": self.asker.value, "channel": self.channel.value,
                              "from": [p.value for p in self.accepts_from]} | self.meta)
