"""Strict symbolic mode: a guarded call's identifiers must come from established facts or contexts.

An LLM that invents an identifier ("reservation ZZZ999") is refused before any proof: every string
argument (at any depth) must appear among the arguments of the session's valid facts or the values of
its bound contexts. Numbers and booleans are quantities, not identifiers, and are not checked.
"""

from __future__ import annotations

import time
from typing import Any, Iterator

from sentinel_mcp.gateway.decision import ToolCall
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


def _scalars(value: Any) -> Iterator[str]:
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _scalars(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _scalars(v)
    elif isinstance(value, str):
        yield value


async def ungrounded_arguments(knowledge: Knowledge, call: ToolCall, rb: Rulebase) -> list[str]:
    exempt = set(rb.info.symbolic_exempt.get(call.name, []))
    store = knowledge.store
    known: set[str] = set()
    for f in await store.valid(call.session_id, time.time()):
        if not f.internal:
            known.update(_scalars(f.args))
    known.update(_scalars(list((await store.contexts(call.session_id)).values())))
    bad = []
    for name, value in call.arguments.items():
        if name in exempt:
            continue
        bad.extend(f"{p}={v!r}" for p, v in _strings(value, name) if v not in known)
    return bad
