"""Strict symbolic mode: a guarded call's identifiers must come from established facts or contexts.

An LLM that invents an identifier ("reservation ZZZ999") is refused before any proof: every string
argument (at any depth) must appear among the arguments of the session's valid facts or the values of
its bound contexts. What the agent itself says grounds nothing: its answers (``sentinel_answer``, inputs
of its choosing: ``FactStore.known_values``) and a context declared without a check, which it binds to any
value. Numbers and booleans are quantities, not identifiers, and are not checked.
"""

from __future__ import annotations

from typing import Any, Iterator

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.fact_rows import string_values
from sentinel_mcp.policy.knowledge import Knowledge
from sentinel_mcp.policy.rulebase import Rulebase


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{path}.{k}")


async def ungrounded_arguments(knowledge: Knowledge, call: ToolCall, rb: Rulebase) -> list[str]:
    exempt = set(rb.info.symbolic_exempt.get(call.identity, []))
    checked = [
        (p, v)
        for name, value in call.arguments.items()
        if name not in exempt
        for p, v in _strings(value, name)
    ]
    if not checked:
        return []
    store = knowledge.store
    # only the call's own values are looked up (indexed), never the whole session's facts
    known = await store.known_values(call.session_id, {v for _, v in checked}, process_clock.now())
    if len(known) < len({v for _, v in checked}):
        # a context bound after its check proved (context/3): a value facts gave; one declared without a
        # check holds whatever the agent bound it to (sentinel_bind), a literal it may have made up
        contexts = await store.contexts(call.session_id)
        known.update(string_values([v for k, v in contexts.items() if k in rb.info.checked_contexts]))
    return [f"{p}={v!r}" for p, v in checked if v not in known]
