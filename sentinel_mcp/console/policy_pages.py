"""Policy: the rulebases in force (files, version, warnings, hot-reload status), their check results, and a
candidate editor: pick a loaded file, change it, check it, and replay recorded calls under it (what-if).

The candidate is written to a private temporary directory only for the check and the replay; the files in
force
are never touched from the console (Sentinel reloads them when they change on disk)."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from sentinel_mcp.console import audit_view, policy_history_pages
from sentinel_mcp.console.auth import Viewer
from sentinel_mcp.console.candidate_tree import editable_files, write_candidate
from sentinel_mcp.console.form_body import bounded
from sentinel_mcp.console.in_force_checks import InForceChecks, check_key
from sentinel_mcp.console.proof_view import readable_tree
from sentinel_mcp.console.replay import pick_rows
from sentinel_mcp.console.replay_process import replay_isolated
from sentinel_mcp.console.query_params import read_query, takes_query
from sentinel_mcp.console.rulebase_readers import OUT_OF_REACH, may_read_rulebase, problems_in_reach
from sentinel_mcp.policy import spare_child
from sentinel_mcp.policy.check_places import ChecksBusy, check_slot
from sentinel_mcp.policy.check_process import check_isolated, unfinished
from sentinel_mcp.policy.checker import UNCHECKED_GUARD
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.rulebase_file_text import shown_file_text
from sentinel_mcp.console.web import Console

MAX_CANDIDATE = 200_000  # characters
FILE_NAME_LIMIT = 255  # characters of a rulebase file's name in the address (a file system's own bound)


def _guard(console: Console) -> PolicyGuard | None:
    """The policy guard, when the gateway runs one (rulebases to show); the default guard has none."""
    guard = console.runtime.gateway.guard
    return guard if isinstance(guard, PolicyGuard) else None


async def _check(
    console: Console, guard: PolicyGuard, files: list[Path], viewer: Viewer, candidate: bool = False,
    about: Path | None = None,
) -> list[Any]:
    """The checker's problems, against the tools the viewer may reach (a check names tools, their
    annotations and arguments: never those of tools outside its reach, nor a problem about one); a candidate
    (a client's text) cites only the documents the rulebase in force does. Checked in a child process, off
    the engine every guard decision waits for (check_process); the caller holds a ``check_slot``."""
    untrusted = guard.untrusted_bounds() if candidate else None
    tools = console.runtime.gateway.catalog_by_identity(viewer.principal)
    problems = await check_isolated(files, tools, untrusted, about=about)
    return problems_in_reach(guard, viewer.principal, problems)


async def _check_in_force(
    console: Console, guard: PolicyGuard, files: list[Path], viewer: Viewer, remembered: InForceChecks
) -> list[Any]:
    """The rulebase in force's problems for its page (remembered for exactly what was checked:
    ``in_force_checks``); with every check place taken, that it was not checked (an error: never read as "no
    problems")."""
    tools = console.runtime.gateway.catalog_by_identity(viewer.principal)
    key = check_key(files, tools, guard.untrusted_bounds().documents)
    problems = remembered.get(key)
    if problems is None:
        try:
            with check_slot(viewer.principal.name, owner=viewer.principal.is_owner):
                problems = await check_isolated(files, tools, None)
        except ChecksBusy as e:
            return [unfinished(files[-1] if files else "", str(e))]
        # a check that could not finish (killed, timed out) is not remembered: the next view tries again
        if not any(p.code == UNCHECKED_GUARD for p in problems):
            remembered.put(key, problems)
    return problems_in_reach(guard, viewer.principal, problems)


def _file_texts(files: list[Path]) -> tuple[dict[str, Path], dict[str, str]]:
    # every file an include brings in too, and a file that failed to load; by the loader's bound (it may be a
    # FIFO or huge now)
    editable = editable_files(files)
    return editable, {name: shown_file_text(f) for name, f in editable.items()}


def routes(console: Console) -> list[tuple[str, Any, list[str], bool]]:
    remembered = InForceChecks()  # the in-force check of each reach, for the page's views

    @takes_query(file=FILE_NAME_LIMIT)
    async def policy(request: Request, viewer: Viewer, **extra: Any) -> Response:
        guard = _guard(console)
        readable = may_read_rulebase(console.runtime.gateway, viewer.principal)
        if guard is None or not readable:  # no rulebase, or none the viewer may read (sentinel://rulebase)
            return console.render(
                request,
                viewer,
                "policy.html",
                guard=guard,
                readable=readable,
                out_of_reach=OUT_OF_REACH,
                files=[],
                editable=[],
                texts={},
                problems=[],
                **(
                    {
                        "report": None,
                        "chosen": "",
                        "candidate": "",
                        "since": "",
                        "sides": [],
                        "checked": False,
                    }
                    | extra
                ),
            )
        holder = guard.rulebases
        files = list(holder.files)
        editable, texts = await asyncio.to_thread(_file_texts, files)
        chosen = read_query(request, {"file": FILE_NAME_LIMIT})["file"] or (files[-1].name if files else "")
        if chosen and chosen not in texts:  # read as the last file, it was another's text
            return console.problem(request, viewer, 400, "refused: no such rulebase file here")
        values = {
            "report": None,
            "chosen": chosen,
            "candidate": texts.get(chosen, ""),
            "since": "",
            "candidate_problems": None,
            "checked": False,
            "sides": [],
        } | extra
        problems = await _check_in_force(console, guard, files, viewer, remembered)
        spare_child.prepare()  # a check is likely to follow from this page: its child warm before it comes
        return console.render(
            request,
            viewer,
            "policy.html",
            guard=guard,
            readable=True,
            files=files,
            editable=list(editable.items()),
            texts=texts,
            # hidden characters among them
            problems=problems,
            current=holder.current if holder.loaded else None,
            last_error=holder.last_error or guard.load_error,
            holder=holder,
            **values,
        )

    running: set[str] = set()  # principals with a what-if under way: one each (a trial load and a replay)

    async def whatif(request: Request, viewer: Viewer) -> Response:
        name = viewer.principal.name
        if not viewer.principal.is_owner:
            return console.problem(request, viewer, 403, policy_history_pages.OWNER_ONLY)
        if name in running:
            return console.problem(request, viewer, 429, "a what-if of yours is still running; wait for it")
        running.add(name)
        try:
            return await _whatif(request, viewer)
        except ChecksBusy as e:
            return console.problem(request, viewer, 429, str(e))
        finally:
            running.discard(name)

    async def _whatif(request: Request, viewer: Viewer) -> Response:
        guard = _guard(console)
        form = request.state.form
        if guard is None:
            return console.problem(request, viewer, 400, "no rulebase is configured: nothing to compare")
        chosen, text = str(form.get("file") or ""), form.get("candidate")
        files = list(guard.rulebases.files)
        editable = await asyncio.to_thread(editable_files, files)
        if chosen not in editable or not isinstance(text, str) or len(text) > MAX_CANDIDATE:
            return console.problem(
                request,
                viewer,
                400,
                f"choose one of the loaded files and give its new text (at most {MAX_CANDIDATE} characters)",
            )
        f = audit_view.Filters(
            since=audit_view.valid_instant(bounded(form.get("since"), 40, "the since date"), "since")
        )
        since = audit_view._instant(f.since)
        who = None if viewer.principal.is_owner else viewer.principal.name
        rows = pick_rows(
            audit_view.keyed(
                await audit_view.AuditSource.of(console.runtime).read(audit_view.SCAN, principal=who),
                viewer.principal,
            ),
            since=since,
        )
        with tempfile.TemporaryDirectory(prefix="sentinel-candidate-") as tmp:
            # (the text the loader reads) among the files it is read with: those the one in force includes, or
            # the configured file including it
            candidate, path = await asyncio.to_thread(
                write_candidate, files, editable, chosen, text.replace("\r\n", "\n"), Path(tmp)
            )
            # one place for the candidate's check and its replay, both in a child process, one after another
            with check_slot(viewer.principal.name, owner=viewer.principal.is_owner):
                problems = await _check(console, guard, candidate, viewer, candidate=True, about=path)
                report = await replay_isolated(
                    rows,
                    current=files,
                    candidate=candidate,
                    live_facts=guard.store,
                    settings=guard.settings,
                    seeds=console.runtime.config.sentinel.seeds,
                    catalog=console.runtime.catalog_health,
                    untrusted=guard.untrusted_bounds(),
                )
        # each changed call's two proofs, as trees side by side (what the proof page shows for one)
        sides = [
            (r, readable_tree(r.baseline_proof), readable_tree(r.candidate_proof)) for r in report.changes
        ]
        return await policy(
            request,
            viewer,
            report=report,
            chosen=chosen,
            candidate=text,
            since=f.since,
            sides=sides,
            candidate_problems=[p for p in problems if str(p.file).startswith(tmp)]
            or [p for p in problems if p.severity == "error"],
        )

    return [
        ("/policy", policy, ["GET"], False),
        ("/policy/whatif", whatif, ["POST"], True),
        *policy_history_pages.routes(console, policy),
    ]
