"""A built-in's own decision record (the device firewall's, the sensors'): typed, redacted, linked to the
gateway's decision log.

The gateway's audit log is the one decision log: every guarded call has a row with a ``decision_id``, and
the gateway hands that id to the built-in it forwards to (``call_meta.DECISION_KEY``). What a built-in
decides inside that call (the firewall's confirmation, the sensors' consent and scope) is a
``BuiltinRecord`` carrying the same ``decision_id``: a row that points to the log, never a trail of its own.
Built standalone (no gateway), ``decision_id`` is empty.

Records pass through the one redaction path (``core.redactor``) before they are written, then the one bound
(``core.record_bounds``, ``DEVICE_DECISION``): details of megabytes, or nested thousands of levels deep, are
kept cut, with the notice ``sentinel_cut`` (how much, and the hash of the full details). A record that
cannot be written raises ``RecordNotWritten``: the caller then refuses (fail closed).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from sentinel_mcp.core.errors import SentinelError
from sentinel_mcp.core.record_bounds import CUT_KEY, DEVICE_DECISION, KEPT_KEY, bounded, cut_text, shallow
from sentinel_mcp.core.redactor import redact_record

__all__ = ["BuiltinRecord", "Outcome", "RecordNotWritten"]


class Outcome(StrEnum):
    """What a built-in decided, one vocabulary for the device firewall and the sensors."""

    APPROVED = "approved"  # decided, not yet done: written before anything reaches the device
    ALLOWED = "allowed"  # done
    DENIED = "denied"  # refused: by the person, a consent, a policy or the gate
    REFUSED = "refused"  # the device gate refused a command: nothing sent
    STALE = "stale"  # the screen changed under the action: nothing sent
    THROTTLED = "throttled"
    INVALID = "invalid"  # the request itself was malformed
    FAILED = "failed"  # the source or device failed
    ERROR = "error"


class RecordNotWritten(SentinelError):
    """A built-in's decision record could not be stored: whatever it was about is refused."""

    area = "storage"  # a record that cannot be stored: the storage area's kind of failure
    code = "record_not_written"


@dataclass(frozen=True)
class BuiltinRecord:
    area: str  # "device", "sensors"
    outcome: Outcome
    decision_id: str  # the gateway's decision this belongs to ("" when the built-in runs alone)
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        # type-strict: a stray string must not pass as an outcome (Outcome("allowed ") raises)
        object.__setattr__(self, "outcome", Outcome(self.outcome))
        if not isinstance(self.decision_id, str) or len(self.decision_id) > 200:
            raise ValueError("decision_id must be a string of at most 200 characters")

    def redacted(self) -> dict[str, Any]:
        """The record as it may be stored, flat: its details scrubbed like the gateway's own audit rows
        (cards, one-time codes, tokens), then the typed fields, which details cannot override."""
        try:
            scrubbed = redact_record({"reason": self.reason, "error": self.details})
        except (RecursionError, ValueError):  # nested deeper than it recurses, an integer too long to write:
            # what lies below the kept depth is cut first (it would not be kept anyway)
            scrubbed = redact_record({"reason": self.reason,
                                      "error": shallow(self.details, DEVICE_DECISION.depth)})
        details = bounded(scrubbed["error"], DEVICE_DECISION)
        if CUT_KEY in details and isinstance(details.get(KEPT_KEY), dict):
            # the kept details stay where readers look for them, beside the notice of the cut
            details = {**details[KEPT_KEY], CUT_KEY: details[CUT_KEY]}
        return dict(details) | {"area": self.area, "outcome": self.outcome.value,
                                "decision_id": self.decision_id,
                                "reason": cut_text(scrubbed["reason"], DEVICE_DECISION.string),
                                "recorded_at": self.at}
