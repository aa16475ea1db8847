"""A call's outcome row stores the arguments and the proof its decision row stored: redacted and encoded once
a call, not once a row.

Both rows of an allowed call carry the same arguments object and the same proof (``CallRecord.base``,
``_proof_of(decision)``), and redacting them is most of a row's CPU when a call has arguments: every string
is scanned for card numbers, IBANs, codes and known secret values (~25 us for three short strings, ~80 us for
a search query with filters; a proof's text scanned whole), then cut and encoded (``record_bounds``). The
decision row's results are kept, by decision id, and the outcome row of the same call takes them when it
still holds the very same objects with the same content (their JSON text compared: a tool that changed its
arguments in place gets them redacted again) and the same secret argument names. Its reason and error are
scrubbed of the secret values the arguments held, as ``redact_record`` scrubs them. Nothing is shared between
calls: the key is the call's decision id, and an entry is taken once. Bounded (``CAPACITY`` calls in flight,
``MAX_KEPT_CHARS`` of JSON each: a call whose outcome row never comes holds little); an evicted or unkept
entry only means the outcome row is redacted afresh.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import replace
from typing import Any

from sentinel_mcp.core.audit_entry import AuditEntry
from sentinel_mcp.core.redactor import scrub_with

CAPACITY = 64
MAX_KEPT_CHARS = 65_536  # arguments and proof together, as JSON; larger ones are redacted again
# the content check: strict JSON of exact values (anything else, a NaN or an object: never kept)
_RAW = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


def _raw(value: Any) -> str | None:
    try:
        return _RAW(value)
    except (TypeError, ValueError, RecursionError):
        return None


class _Kept:
    __slots__ = ("arguments", "proof", "sensitive", "raw", "reason", "secrets", "redacted", "arguments_text",
                 "proof_text")

    def __init__(self, entry: AuditEntry, raw: str, secrets: set[str], redacted: AuditEntry,
                 arguments_text: str | None, proof_text: str | None) -> None:
        self.arguments, self.proof, self.sensitive = entry.arguments, entry.proof, entry.sensitive
        self.raw, self.reason, self.secrets = raw, entry.reason, secrets
        self.redacted, self.arguments_text, self.proof_text = redacted, arguments_text, proof_text


class RepeatedRows:
    """The decision rows' redacted arguments and proof, until their calls' outcome rows take them."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self.kept: OrderedDict[str, _Kept] = OrderedDict()  # by decision id, oldest first

    def keep(self, entry: AuditEntry, secrets: set[str] | None, redacted: AuditEntry,
             arguments_text: str | None, proof_text: str | None) -> None:
        """A decision row (``entry`` as the call gave it, ``redacted`` as stored, with the secret values its
        arguments held) whose outcome row will repeat its arguments and proof."""
        if entry.event != "decision" or secrets is None or not entry.decision_id:
            return  # (None: the usual row without arguments or proof, or one redacted from a shallow copy)
        raw = _raw([entry.arguments, entry.proof])
        if raw is None or len(raw) > MAX_KEPT_CHARS:
            return
        self.kept[entry.decision_id] = _Kept(entry, raw, secrets, redacted, arguments_text, proof_text)
        while len(self.kept) > self.capacity:
            self.kept.popitem(last=False)

    def take(self, entry: AuditEntry) -> tuple[AuditEntry, str | None, str | None] | None:
        """The outcome row ``entry`` redacted, with its arguments' and proof's stored texts, from its decision
        row's; None when it does not repeat them (then it is redacted as any row)."""
        if entry.event != "outcome":
            return None
        kept = self.kept.pop(entry.decision_id, None)
        if (kept is None or entry.arguments is not kept.arguments or entry.proof is not kept.proof
                or entry.sensitive != kept.sensitive or _raw([entry.arguments, entry.proof]) != kept.raw):
            return None
        done = kept.redacted
        reason = done.reason if entry.reason == kept.reason else scrub_with(entry.reason, kept.secrets)
        error = scrub_with(entry.error, kept.secrets)
        if (done.arguments is not entry.arguments or done.proof is not entry.proof
                or reason is not entry.reason or error is not entry.error):
            entry = replace(entry, arguments=done.arguments, proof=done.proof, reason=reason, error=error)
        return entry, kept.arguments_text, kept.proof_text
