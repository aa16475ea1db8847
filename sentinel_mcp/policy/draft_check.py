"""A draft checked before it is offered: by the checker ``check --connect`` and the gateway's load use,
against the tools it was drafted from, named by identity (``<server>__<tool>``, what its guards bind to).

A draft is built from hostile text (an upstream's schemas, a policy document). The draft's writer escapes
every name and value it writes; this check is the second line, the same one any rulebase meets: any way the
text still finds into a clause (a directive, an undefined goal, a guard of a tool the server lacks, a binding
to a write) is an error here, and a draft with an error is not offered."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from mcp_types import Tool
from pydantic import ValidationError

from sentinel_mcp.policy.prolog_text import quote_atom
from sentinel_mcp.policy.rulebase import Problem

# the drafter writes no read_only/1 (it reads the tools' hints), no guard that only looks like a condition and
# no effect that establishes a fact (nor a "not yet" blind to it): a finding of these kinds came from its
# hostile inputs, and a draft is not offered with it. Told by the problem's code: a message holds the tool's
# and the arguments' names, hostile text too.
# A guard the checker could not finish checking for one of these kinds (out of its budget, an error) is
# refused as well: fail closed, a draft is never offered as checked when it was not (unchecked_guard).
# A declaration's name at another arity (guard/4: a goal split by a top-level comma) is a load error already;
# named here too, so that it refuses whatever its severity (reserved_heads.pl). The drafter writes no
# directive either: one (never run) is a warning in a person's file, and in a draft hostile text that got out.
REFUSING_CODES = frozenset({
    "read_only_unasked", "read_only_destructive", "tautological_guard", "unsure_blind_read",
    "unchecked_guard", "reserved_arity", "vacuous_case_analysis", "directive",
})


def catalog_tool(server: str, tool: dict[str, Any]) -> Tool | str:
    """The tool as the gateway's catalog reads it (``mcp.types.Tool``: what a client makes of a listing, its
    annotations' ``"false"`` the boolean false), named ``<server>__<tool>``; or, when the catalog refuses it,
    why: the fields it refuses (by the model's names: never the upstream's text)."""
    try:
        return Tool.model_validate({**tool, "name": f"{server}__{tool['name']}"})
    except ValidationError as e:
        fields = sorted({".".join(str(p) for p in err["loc"][:2] if isinstance(p, (str, int))
                                  and _FIELD.fullmatch(str(p))) for err in e.errors()[:5]} - {""})
        return "the gateway's catalog refuses its listing (" + (", ".join(fields) or "its shape") + ")"
    except (TypeError, KeyError):
        return "the gateway's catalog refuses its listing (its shape)"


_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,40}|[0-9]{1,6}")


def catalog_of(server: str, tools: list[dict[str, Any]]) -> list[Tool]:
    """The tools as the gateway would name them to its rules; one its schema does not describe is left out
    (the draft leaves it out too, and a guard of it is then a tool no upstream has)."""
    return [t for t in (catalog_tool(server, t) for t in tools) if isinstance(t, Tool)]


async def reserved_of(facts: list[tuple[str, int]]) -> frozenset[str]:
    """The names among a draft's base predicates that no base predicate may take: the engine's builtins, a
    construct, Sentinel's own (declaration_checks.pl's reserved_base_name/1, the check's own test)."""
    from sentinel_mcp.policy.engine import shared_engine

    if not facts:
        return frozenset()
    pairs = ",".join(f"{quote_atom(n)}/{int(a)}" for n, a in facts)
    goal = (f"findall(N, ( member(N/A, [{pairs}]), sentinel_core:reserved_base_name(N/A) ), Ns), "
            "sort(Ns, S), sentinel_core:to_json_atom(json([names=S]), Out)")
    answer = await shared_engine().json_query(goal)
    return frozenset(n for n in answer.get("names", []) if isinstance(n, str))


async def draft_problems(server: str, tools: list[dict[str, Any]], text: str,
                         document: Path | None = None) -> list[Problem]:
    """The checker's problems of a draft's text. ``document``: the policy it cites, copied beside the draft
    under its own name (the text names it so: a rulebase's documents lie in its own directory)."""
    from sentinel_mcp.policy.checker import check_paths
    from sentinel_mcp.policy.engine import shared_engine

    with tempfile.TemporaryDirectory(prefix="sentinel-draft-") as tmp:
        if document is not None:
            shutil.copyfile(document, Path(tmp) / document.name)
        path = Path(tmp) / "draft.pl"
        path.write_text(text, encoding="utf-8")
        problems = await check_paths(shared_engine(), [path], catalog_of(server, tools))
    return [p.model_copy(update={"file": "draft", "severity": "error" if p.code in REFUSING_CODES
                                 else p.severity}) for p in problems]
