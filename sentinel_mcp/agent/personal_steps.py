"""Which kinds of personal data a run read, and what its trace keeps of them once the consent is gone.

A step's record holds the screen it was decided on (labels, a summary), the model's decision and reasoning
written from it, and questions naming its words; a run's answer and reason are written from what it read. A
run that read a personal app's screen (the device says so in the result's ``_meta``: ``PERSONAL_SHOWN``) or
called a personal read (a tool declaring ``sentinel/personal``) keeps those kinds for the rest of the run: the
model's context carries them into every later step.

The trace is read through the gateway, which tells the agent's read tools the kinds the caller holds consent
for (they declare ``sentinel/personal_screen``, as the device's screen tools do). A step or run whose kinds
are not all held any more is rewritten on disk without what was read: which tool ran, its outcome, guard and
audit row stay; labels, arguments, reasoning, questions, answer and reflections go. A kind the agent does
not know (a configured app's own kind) is never held here: its steps are always taken out (fail closed).
"""

from __future__ import annotations

from typing import Any

PERSONAL_SHOWN = "sentinel/personal_shown"  # a device result's _meta: the kinds of personal data it shows
PERSONAL_META = "sentinel/personal"  # a tool's _meta: the kind of personal data it reads
PERSONAL_ARGUMENTS_META = "sentinel/personal_arguments"  # argument -> kind it reads when set
# the kinds a trace may show while held: the device's personal apps' kinds and its personal reads'
TRACE_KINDS = ("battery", "calendar", "contacts", "email", "identifiers", "location", "messages",
               "notifications", "one_time_codes", "passwords", "photos", "security_codes")
# what a withheld step keeps: what ran and how it ended, never what it read
KEPT_FIELDS = ("tool", "outcome", "guard", "decision_id", "seconds", "app")
MAX_KINDS = 16


def _kinds(value: Any) -> set[str]:
    if isinstance(value, str) and value:
        return {value[:40]}
    if isinstance(value, list):
        return {k[:40] for k in value[:MAX_KINDS] if isinstance(k, str) and k}
    return set()


def result_kinds(result: Any) -> set[str]:
    """The kinds a tool result says it shows (only the device built-in's say reaches the agent: the gateway
    keeps ``PERSONAL_SHOWN`` from the built-in that declares it and drops it from every other upstream)."""
    meta = getattr(result, "meta", None)
    return _kinds(meta.get(PERSONAL_SHOWN)) if isinstance(meta, dict) else set()


def tool_kinds(tool: Any, arguments: dict[str, Any]) -> set[str]:
    """The kinds a call of ``tool`` with ``arguments`` reads, by the tool's declaration."""
    meta = getattr(tool, "meta", None)
    if not isinstance(meta, dict):
        return set()
    found = _kinds(meta.get(PERSONAL_META))
    by_argument = meta.get(PERSONAL_ARGUMENTS_META)
    if isinstance(by_argument, dict):
        for arg, kind in by_argument.items():
            if arguments.get(arg) not in (None, False, "", 0, [], {}):
                found |= _kinds(kind)
    return found


def unheld(kinds: Any, held: frozenset[str] | None) -> list[str]:
    """The kinds among ``kinds`` not held (``held`` None: all are)."""
    if held is None:
        return []
    return sorted(_kinds(kinds) - held)


def withheld_step(record: dict[str, Any], kinds: list[str]) -> dict[str, Any]:
    """A step's record without what it read."""
    kept = {k: record[k] for k in KEPT_FIELDS if k in record}
    return kept | {"withheld": {"kinds": kinds, "reason": withheld_reason(kinds)}}


def withheld_reason(kinds: list[str]) -> str:
    words = " and ".join(k.replace("_", " ") for k in kinds)
    return f"withheld: this run read your {words}, and the consent for it is no longer held"
