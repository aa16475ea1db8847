"""Policy history and the editor's check: every rulebase version this Sentinel loaded (hash, time, cause,
who),
the difference between any two, and ``check`` of a candidate text as it is typed.

The check works as a plain form post (the policy page comes back with the problems and the text kept); the
console's script sends the same form as the person types and shows the answer (JSON, rendered as text only).
The candidate is written to a private temporary directory for the check only; the files in force are never
touched from the console. Rulebase versions are read by whoever may read the rulebase in force
(``rulebase_readers.py``: the rule of the resource ``sentinel://rulebase``, and the owner).
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from sentinel_mcp.console.auth import Viewer
from sentinel_mcp.console.candidate_tree import editable_files, write_candidate
from sentinel_mcp.console.form_body import bounded
from sentinel_mcp.policy.rulebase_file_text import RulebaseFileUnreadable, rulebase_file_text
from sentinel_mcp.console.query_params import read_query, takes_query
from sentinel_mcp.console.rulebase_readers import OUT_OF_REACH, may_read_rulebase
from sentinel_mcp.policy.check_places import ChecksBusy, check_slot
from sentinel_mcp.policy.check_process import check_isolated
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.console.web import HEADERS, Console
from sentinel_mcp.core.display_text import safe_text
from sentinel_mcp.policy.version_history import diff

VERSION = re.compile(r"^[0-9a-f]{64}$")
MAX_CANDIDATE = 200_000  # characters
# A candidate rulebase is code: its check runs in a child process (check_process), but its what-if replay runs
# in Sentinel's own Prolog engine, the one every principal's decisions wait for: its inference budget bounds
# its steps, not a builtin's own work (a format/3 repeat count, msort over a long list, counted as one step
# each), so only the owner, who sets the policy in force anyway, may try one.
OWNER_ONLY = (
    "only the owner may check or replay a changed rulebase: a candidate runs in Sentinel's own policy engine"
)


def _guard(console: Console) -> PolicyGuard | None:
    """The policy guard, when the gateway runs one (rulebases to show); the default guard has none."""
    guard = console.runtime.gateway.guard
    return guard if isinstance(guard, PolicyGuard) else None


async def check_candidate(
    console: Console, chosen: str, text: str, viewer: Viewer
) -> tuple[list[Any], str | None]:
    """The checker's problems of the rulebase with ``chosen`` replaced by ``text`` (those of the candidate
    file
    first; an error elsewhere counts too), or a reason the form is not one to check."""
    guard = _guard(console)
    files = list(guard.rulebases.files) if guard is not None else []
    editable = await asyncio.to_thread(editable_files, files)
    if guard is None or chosen not in editable or len(text) > MAX_CANDIDATE:
        return (
            [],
            f"choose one of the loaded files and give its new text (at most {MAX_CANDIDATE} characters)",
        )
    # as policy_pages._check: the viewer's tools, and the documents the rulebase in force cites
    tools = console.runtime.gateway.catalog_by_identity(viewer.principal)
    untrusted = guard.untrusted_bounds()
    text = text.replace("\r\n", "\n")
    with tempfile.TemporaryDirectory(prefix="sentinel-check-") as tmp:
        # among the files it is read with (those the one in force includes, or the one including it)
        candidate, path = await asyncio.to_thread(write_candidate, files, editable, chosen, text, Path(tmp))
        # off the guard's engine, in a child of its own (check_process): the caller holds a check_slot
        problems = await check_isolated(candidate, tools, untrusted, about=path)
        mine = [p for p in problems if str(p.file).startswith(tmp)]  # its hidden characters among them
        if mine:
            return mine, None
        # none in the changed file: errors elsewhere count only when the change made them, not those the
        # rulebase in force has (its own text of the file, from the history: the disk may hold a refused one)
        in_force = (
            await guard.history.texts(guard.rulebases.current.version) if guard.rulebases.loaded else None
        )
        path.write_text((in_force or {}).get(chosen) or _disk_text(editable[chosen]), encoding="utf-8")
        before = {
            (Path(str(p.file)).name, p.line, p.message)
            for p in await check_isolated(candidate, tools, untrusted, about=path)
        }
        return [
            p
            for p in problems
            if p.severity == "error" and (Path(str(p.file)).name, p.line, p.message) not in before
        ], None


def _disk_text(path: Path) -> str:
    try:
        return rulebase_file_text(path)
    except RulebaseFileUnreadable:
        return ""


def routes(console: Console, policy_page: Any) -> list[tuple[str, Any, list[str], bool]]:
    @takes_query(a=64, b=64)
    async def history(request: Request, viewer: Viewer) -> Response:
        if not may_read_rulebase(console.runtime.gateway, viewer.principal):
            return console.problem(request, viewer, 403, OUT_OF_REACH)
        guard = _guard(console)
        loads = await guard.history.loads() if guard is not None else []
        q = read_query(request, {"a": 64, "b": 64})  # a version is 64 hex digits (VERSION)
        a, b = q["a"], q["b"]
        lines: list[tuple[str, str]] | None = None
        problem = None
        if a or b:
            if not (VERSION.fullmatch(a) and VERSION.fullmatch(b)):
                problem = "choose two versions from the list"
            elif guard is None:  # no rulebase, no history
                problem = "no such version in the history"
            else:
                old, new = await guard.history.texts(a), await guard.history.texts(b)
                if old is None or new is None:
                    problem = "no such version in the history"
                else:
                    lines = diff(old, new, a, b)
        versions = list(dict.fromkeys(load["version"] for load in loads))
        return console.render(
            request,
            viewer,
            "policy_history.html",
            status=404
            if problem and a and b and VERSION.fullmatch(a) and VERSION.fullmatch(b)
            else (400 if problem else 200),
            guard=guard,
            loads=loads,
            versions=versions,
            a=a if VERSION.fullmatch(a) else "",
            b=b if VERSION.fullmatch(b) else "",
            lines=lines,
            problem=problem,
            holder=guard.rulebases if guard is not None else None,
            current=guard.rulebases.current.version if guard is not None and guard.rulebases.loaded else "",
        )

    async def check(request: Request, viewer: Viewer) -> Response:
        form = request.state.form
        chosen, text = bounded(form.get("file"), 300, "the file name"), form.get("candidate")
        if not viewer.principal.is_owner:  # a candidate is code run in the engine (policy_pages.OWNER_ONLY)
            return console.problem(request, viewer, 403, OWNER_ONLY)
        if _guard(console) is None:
            return console.problem(request, viewer, 400, "no rulebase is configured: nothing to check")
        live = request.headers.get("x-console-live") == "check"  # the script's live check: data, never markup
        try:
            # a few at once, one a principal, the excess refused now: never queued (check_places)
            with check_slot(viewer.principal.name, owner=viewer.principal.is_owner):
                problems, refused = await check_candidate(
                    console, chosen, text if isinstance(text, str) else "\x00" * (MAX_CANDIDATE + 1), viewer
                )
        except ChecksBusy as e:
            if live:
                return JSONResponse({"error": str(e)}, status_code=429, headers=HEADERS)
            return console.problem(request, viewer, 429, str(e))
        if live:
            if refused:
                return JSONResponse({"error": refused}, status_code=400, headers=HEADERS)
            return JSONResponse(
                {
                    "problems": [
                        {"line": p.line, "column": p.column, "severity": p.severity,
                         "message": safe_text(p.message, 500)}
                        for p in problems
                    ]
                },
                headers=HEADERS,
            )
        if refused:
            return console.problem(request, viewer, 400, refused)
        return await policy_page(
            request, viewer, chosen=chosen, candidate=text, candidate_problems=problems, checked=True
        )

    return [("/policy/history", history, ["GET"], False), ("/policy/check", check, ["POST"], True)]
